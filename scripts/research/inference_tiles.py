# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Do inference tiles larger than the training crops keep the emulator's skill, and what do
they save? Each ``--tiles`` value runs the same forecasts (``--starts`` initial times
``--spacing-days`` apart in the test store, ``--days`` each, intra-face halo adjoint, one
thread) and is scored against the test store as the rollout scores itself; the record has
each variable's RMSE at every whole day (the root of the mean square over starts) and the
seconds per step. ``--settings 16/fp32,32/bf16/crop,32/bf16/cross`` varies the precision and the
cross-face adjoint too; ``--free-days D`` adds a free run of up to D days from each start
under the default guard, and records the day it stopped (``days_held``).

    python scripts/research/inference_tiles.py --checkpoint benchmarks/held_suarez/emulator.pth \\
        --test TEST.zarr --workdir /tmp/tiles --tiles 16,32 --output record.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def setting_keys(setting: str) -> dict:
    """``TILE[/PRECISION[/cross|crop]]`` (precision default fp32; ``cross``: the cross-face
    halo adjoint; ``crop``: no adjoint, as at whole faces, where the intra-face adjoint has
    nothing to add and is refused; else intra-face) as the rollout's stepper keys."""
    parts = setting.split("/")
    return {
        "stepper.halo_adjoint": parts[2:] != ["crop"],
        "stepper.halo_adjoint_cross_face": parts[2:] == ["cross"],
        "stepper.tile": int(parts[0]),
        "stepper.precision": parts[1] if len(parts) > 1 else "fp32",
        "stepper.threads": 1,
    }


def _keys(checkpoint: str, test: str, start: str, steps: int, setting: str, out: Path) -> dict:
    base = {
        "checkpoint.path": checkpoint,
        "initial_condition.data": test,
        "initial_condition.start": start,
        "output.path": str(out),
        "output.steps": steps,
        "output.progress": False,
    }
    return base | setting_keys(setting)


def forecast(checkpoint: str, test: str, start: str, steps: int, setting: str, out: Path) -> dict:
    """One rollout's per-step scores and its seconds per step."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.evaluation.rollout_scores import scored_rollout

    shutil.rmtree(out, ignore_errors=True)
    keys = _keys(checkpoint, test, start, steps, setting, out)
    t0 = time.perf_counter()
    summary, table = scored_rollout(InferenceConfig.from_keys(keys))
    wall = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return {"table": table, "seconds_per_step": wall / steps, "loop_s": summary.get("wall_s")}


def days_held(checkpoint: str, test: str, start: str, days: float, setting: str, out) -> float:
    """Days a free run from ``start`` goes before the rollout's guard stops it (``days`` when
    it never does)."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.rollout.output import read_attrs
    from screamcast.rollout.plan import RolloutError
    from screamcast.rollout.run import run_rollout

    shutil.rmtree(out, ignore_errors=True)
    steps = round(days * 4)
    try:
        run_rollout(InferenceConfig.from_keys(_keys(checkpoint, test, start, steps, setting, out)))
    except RolloutError:  # the guard's stop: the output keeps the steps before it
        pass
    # a guard stop at step k keeps steps 0..k-1 (complete_steps = k); a whole run, steps + 1
    held = min(int(read_attrs(out)["complete_steps"]) / 4.0, float(days))
    shutil.rmtree(out, ignore_errors=True)
    return held


def starts(test: str, count: int, spacing_days: float, days: float, offset: float = 0) -> list[str]:
    import xarray as xr

    from screamcast.data.calendar import DECODER

    times = xr.open_zarr(test, decode_times=DECODER)["time"].values
    step = (times[1] - times[0]).total_seconds()
    every, need = round(spacing_days * 86400 / step), round(days * 86400 / step)
    chosen = [times[k] for k in range(round(offset * 86400 / step), len(times) - need, every)]
    chosen = chosen[:count]
    return [t.strftime("%Y-%m-%dT%H:%M") for t in chosen]


def daily_rmse(tables: list[dict], steps_per_day: int) -> dict:
    """``{variable: [RMSE at day 1, 2, ...]}``, the root of the mean square over starts."""
    out = {}
    for v in tables[0]:
        series = np.array([t[v]["rmse"] for t in tables], np.float64)  # (starts, steps + 1)
        rms = np.sqrt(np.mean(series**2, axis=0))
        out[v] = rms[steps_per_day::steps_per_day].tolist()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--checkpoint", default=str(ROOT / "benchmarks/held_suarez/emulator.pth"))
    p.add_argument("--test", required=True, help="the truth: a cube store (independent run)")
    p.add_argument("--workdir", required=True)
    p.add_argument("--tiles", default="16,32", help="tiles, fp32 (or --settings)")
    p.add_argument("--settings", help="TILE[/PRECISION[/cross]],... (overrides --tiles)")
    p.add_argument("--free-days", type=float, default=0.0, help="a free run from each start")
    p.add_argument("--starts", type=int, default=8)
    p.add_argument("--spacing-days", type=float, default=5.0)
    p.add_argument("--days", type=float, default=5.0)
    p.add_argument("--offset-days", type=float, default=0.0, help="the first start's day")
    p.add_argument("--output", required=True)
    a = p.parse_args(argv)
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    chosen = starts(a.test, a.starts, a.spacing_days, a.days, a.offset_days)
    steps = round(a.days * 4)
    record = {"command": "python " + " ".join(sys.argv), "starts": chosen, "tiles": {}}
    settings = (a.settings or a.tiles).split(",")
    record["commit"] = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    for setting in settings:
        runs = [forecast(a.checkpoint, a.test, s, steps, setting, work / "f.zarr") for s in chosen]
        record["tiles"][setting] = {
            "rmse_by_day": daily_rmse([r["table"] for r in runs], 4),
            "seconds_per_step": float(np.median([r["seconds_per_step"] for r in runs])),
        }
        if a.free_days:
            free = work / "free.zarr"
            held = [days_held(a.checkpoint, a.test, t, a.free_days, setting, free) for t in chosen]
            record["tiles"][setting]["days_held"] = held
        Path(a.output).write_text(json.dumps(record, indent=1) + "\n")
        print(setting, json.dumps(record["tiles"][setting].get("days_held")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
