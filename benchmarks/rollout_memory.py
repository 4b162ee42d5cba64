# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Peak memory of a rollout (with its skill scores) against its number of steps.

``python -m benchmarks.rollout_memory [--n 96] [--steps 10 100] [--record]``: an n=96 analytic
store, a fixed-weight width-8 checkpoint, then one rollout per step count, each in its own
process, which reports its peak RSS. Memory should be flat in the steps: the output is
streamed and the skill is scored one step at a time (screamcast/evaluation/).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import save_record

RUN = """
import resource, sys
from screamcast.config.inference import InferenceConfig
from screamcast.evaluation.rollout_scores import scored_rollout
scored_rollout(InferenceConfig.from_keys({"checkpoint.path": sys.argv[1],
    "initial_condition.data": sys.argv[2], "output.path": sys.argv[3],
    "output.steps": int(sys.argv[4]), "output.progress": False}))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def make_inputs(
    work: Path, n: int, steps: int, tile: int | None = None, halo: int | None = None
) -> tuple[Path, Path]:
    """An analytic store of ``steps`` hourly times and an untrained checkpoint on tiles of
    ``tile`` (default ``min(32, n // 2)``) with halo ``halo`` (default ``min(8, tile)``)."""
    import xarray as xr
    from omegaconf import OmegaConf

    from screamcast.config import DataConfig, ModelConfig, TrainConfig
    from screamcast.data.stats import compute_stats
    from screamcast.sources.synthetic import write_store
    from screamcast.train.checkpoint_contents import write_untrained_checkpoint

    store = write_store(work / "ic.zarr", n, days=steps / 24, step_hours=1)
    tile = tile or min(32, n // 2)
    halo = min(8, tile) if halo is None else halo
    data = DataConfig(url=str(store), n=n, tile=tile, halo=halo)
    cfg = OmegaConf.structured(TrainConfig(data=data, model=ModelConfig(width=8)))
    variables = list(data.prognostic) + list(data.diagnostic)
    stats = compute_stats(
        xr.open_zarr(store, consolidated=False, chunks=None), variables, data.static
    )
    grid, calendar = f"ne{n // 2}pg2", "proleptic_gregorian"
    write_untrained_checkpoint(cfg, stats, work / "ckpt.pth", 60.0, grid, calendar)
    return work / "ckpt.pth", store


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=96)
    ap.add_argument("--steps", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/rollout_memory.json")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, store = make_inputs(Path(tmp), a.n, max(a.steps))
        peak = {}
        for steps in a.steps:
            argv_ = [str(ckpt), str(store), str(Path(tmp) / f"o{steps}.zarr"), str(steps)]
            run = subprocess.run(
                [sys.executable, "-c", RUN, *argv_], capture_output=True, text=True
            )
            if run.returncode:
                raise RuntimeError(f"the {steps}-step rollout failed:\n{run.stderr[-3000:]}")
            peak[steps] = float(run.stdout.split()[-1])
    report = {"n": a.n, "peak_rss_mb": peak}
    print(json.dumps(report))
    if a.record:
        command = "python -m benchmarks.rollout_memory " + " ".join(argv or sys.argv[1:])
        save_record("rollout_memory", "rollout_memory", command, {"report": report})
    return report


if __name__ == "__main__":
    main()
