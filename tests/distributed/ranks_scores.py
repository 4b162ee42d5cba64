# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A rollout on 1..N ranks whose scores record, per step, what they were fed and when.

Run by tests/distributed/test_rollout_ranks.py as ``python ranks_scores.py REPORT <rollout
flags>`` (under torchrun for several ranks). Rank 0's aggregator writes to REPORT, for each
step it was fed: the step, the fields' checksum and shape, and how many of the output's
steps were complete at that moment (fed as the rollout runs: fewer than all of them).
"""

import hashlib
import json
import sys

import zarr

from screamcast.cli.rollout import parse
from screamcast.rollout.run import run_rollout


class Spy:
    """An aggregator that keeps what it was fed (the protocol's ``record`` / ``summary``)."""

    per_step = True

    def __init__(self, output):
        self.output, self.fed = output, []

    def record(self, step: int, time, fields) -> None:
        done = zarr.open_group(self.output, mode="r").attrs.get("complete_steps", 0)
        digest = hashlib.sha256(fields.tobytes()).hexdigest()
        self.fed.append({"step": step, "shape": list(fields.shape), "sha": digest, "done": done})

    def summary(self) -> dict:
        return {}


def main(report: str, argv: list[str]) -> None:
    config, _ = parse(argv)
    summary = run_rollout(config, lambda plan, inputs: Spy(plan.output))
    if summary["rank"] == 0:
        with open(report, "w") as f:
            json.dump(summary["scores"].fed, f)
    else:
        assert summary["scores"] is None  # rank 0 alone scores


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
