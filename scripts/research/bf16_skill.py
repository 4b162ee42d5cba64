# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The Held-Suarez emulator's rollout in fp32 and under bf16 autocast: wall time per simulated
day and the area-weighted RMSE against the truth at days 1, 3 and 5 from a few starts of the
test run (issue 41: the rollout's speed where skill holds).

    python scripts/research/bf16_skill.py --test runs/held_suarez/data/test.zarr \\
        [--checkpoint benchmarks/held_suarez/emulator.pth] [--output rec.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
STARTS, STEPS, LEADS = (3, 60, 120, 170), 20, (4, 12, 20)


def rollout(checkpoint: str, test: str, start: str, precision: str, out: Path) -> float:
    from screamcast.config.inference import InferenceConfig
    from screamcast.rollout.run import run_rollout

    shutil.rmtree(out, ignore_errors=True)
    keys = {
        "checkpoint.path": checkpoint, "initial_condition.data": test,
        "initial_condition.start": start, "output.path": str(out), "output.steps": STEPS,
        "output.progress": False, "stepper.halo_adjoint": True, "stepper.precision": precision,
    }  # fmt: skip
    t0 = time.perf_counter()
    run_rollout(InferenceConfig.from_keys(keys))
    return time.perf_counter() - t0


def main(argv=None) -> int:
    from screamcast.evaluation.climate_report import open_cube

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--test", required=True)
    p.add_argument("--checkpoint", default=str(ROOT / "benchmarks/held_suarez/emulator.pth"))
    p.add_argument("--output")
    a = p.parse_args(argv)
    truth = open_cube(a.test)
    area = truth["area"].values
    work = Path(tempfile.mkdtemp())
    record = {"command": "python scripts/research/bf16_skill.py " + " ".join(argv or sys.argv[1:])}
    for precision in ("fp32", "bf16"):
        wall, errors = 0.0, []
        for i in STARTS:
            start = truth["time"].values[i].strftime("%Y-%m-%dT%H:%M")
            out = work / f"{precision}_{i}.zarr"
            wall += rollout(a.checkpoint, a.test, start, precision, out)
            o = open_cube(out)
            e = {}
            for v in ("U", "V", "T", "PS"):
                d = o[v].values[list(LEADS)] - truth[v].values[[i + k for k in LEADS]]
                d = d if d.ndim == 5 else d[:, None]  # (leads, layers, 6, n, n)
                e[v] = (d**2 * area).sum((-3, -2, -1)) / area.sum()  # (leads, layers) mean sq
            errors.append(e)
        rmse = {v: np.sqrt(np.mean([e[v] for e in errors], axis=0)).tolist() for v in errors[0]}
        record[precision] = {"seconds_per_day": wall / (len(STARTS) * STEPS / 4), "rmse": rmse}
    print(json.dumps(record, indent=1) + "\n")
    if a.output:
        Path(a.output).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
