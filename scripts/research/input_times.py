# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Does a second input time help? The same network trained from the same seed through the
global step on the same Held-Suarez store, once with the state at t (``data.input_times=1``)
and once with t - dt beside it (``=2``), side by side (one thread each), then compared by
the validation loss over the no-change predictor's (one step, the last 60 days of the
year) at each validation and at the end (issue 57, item 4; docs/training.md).

    python scripts/research/input_times.py --store DATA.zarr --workdir DIR --steps 600 \\
        --output docs/notes/data/2026-12-07-input-times.json

Resumable: a finished run (its ``done`` file) is not trained again.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODEL = ["model.width=48", "model.levels=3", "model.blocks=1"]


def overrides(store: str, run: Path, steps: int, times: int) -> list[str]:
    """The benchmark's model and data, through the global step one step at a time."""
    every = max(steps // 6, 1)
    return [
        "data=held_suarez",
        f"data.url={store}",
        *MODEL,
        "unroll=global",
        "rollout_steps=1",
        f"data.input_times={times}",
        "global_unroll.valid_samples=32",
        "optim.lr=1e-3",
        "scheduler.warmup_steps=50",
        f"steps={steps}",
        f"valid_every={every}",
        f"checkpoint_every={every}",
        "keep_every=0",
        "progress=false",
        f"run_dir={run}",
    ]


def launch(store: str, work: Path, steps: int, times: int) -> subprocess.Popen | None:
    """One run in its own process (one thread), or None when it is done already."""
    run = work / f"input_times_{times}"
    if (run / "done").exists():
        return None
    code = (
        "import sys, time; from benchmarks.held_suarez.training import config; "
        "from screamcast.train.loop import train; t0 = time.perf_counter(); "
        "train(config(*sys.argv[1:])); "
        f"open('{run}/done', 'w').write(str((time.perf_counter() - t0) / 60))"
    )
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", code, *overrides(store, run, steps, times)]
    return subprocess.Popen(argv, env=env)


def curve(run: Path) -> list[dict]:
    """Each validation's step, loss, and loss over the no-change predictor's."""
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    out = []
    for r in rows:
        if r.get("valid_loss"):
            loss, still = float(r["valid_loss"]), float(r["valid_loss_no_change"])
            out.append({"step": int(r["step"]), "valid_loss": loss, "over_no_change": loss / still})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--store", required=True, help="a Held-Suarez training store")
    p.add_argument("--workdir", required=True, type=Path)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--output", type=Path, help="the record (JSON)")
    a = p.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runs = [launch(a.store, a.workdir, a.steps, times) for times in (1, 2)]
    if any(r is not None and r.wait() != 0 for r in runs):
        return 1
    result = {"command": " ".join(["python scripts/research/input_times.py", *sys.argv[1:]])}
    result["wall_min"] = (time.perf_counter() - t0) / 60
    for times in (1, 2):
        run = a.workdir / f"input_times_{times}"
        result[f"input_times_{times}"] = {
            "minutes": float((run / "done").read_text()),
            "validations": curve(run),
        }
    text = json.dumps(result, indent=1) + "\n"
    print(text)
    if a.output:
        a.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
