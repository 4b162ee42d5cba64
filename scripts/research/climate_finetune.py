# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Do the climate losses and the symmetry augmentation keep the shipped Held-Suarez emulator's
eddies and its year? Each variant fine-tunes ``benchmarks/held_suarez/emulator.pth`` through
the 8-step global unroll (the benchmark's dissipated stage, its correctors and dissipation)
on the same store, then runs the README's free year from the shipped initial state and scores
its climate against the shipped truth sample. Resumable: each variant's run and year are kept
in ``--workdir`` and skipped when done; the record is rewritten after each.

    python scripts/research/climate_finetune.py --store TRAIN.zarr --workdir /tmp/ft \\
        --steps 100 --output docs/notes/data/2026-12-06-climate-finetune.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HS = ROOT / "benchmarks" / "held_suarez"
VARIANTS = {
    "control": [],
    "climate_losses": ["global_unroll.spectral_weight=0.02", "global_unroll.time_mean_weight=0.2"],
    # the same losses with the grid-scale dissipation off (it costs 30% of the eddy energy)
    "climate_losses_no_dissipation": [
        "global_unroll.spectral_weight=0.02",
        "global_unroll.time_mean_weight=0.2",
        "model.hyperdiffusion=0",
    ],
    "climate_losses_symmetry": [
        "global_unroll.spectral_weight=0.02",
        "global_unroll.time_mean_weight=0.2",
        "data.symmetry=true",
    ],
}


def fine_tune(store: str, run: Path, steps: int, extra: list[str]) -> float:
    """Minutes of the fine-tune (0 when it was done before)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.held_suarez.training import DISSIPATION, GLOBAL, MODEL, config
    from screamcast.train.loop import train

    if (run / "done").exists():
        return float((run / "done").read_text())
    own = any(e.startswith("model.hyperdiffusion=") for e in extra)  # the variant's own
    keys = [
        *("data=held_suarez", f"data.url={store}", *MODEL, *GLOBAL),
        *([] if own else [DISSIPATION]),
        *("optim.lr=2e-5", "rollout_steps=8", f"steps={steps}", f"valid_every={steps}"),
        *(f"checkpoint_every={steps}", "keep_every=0", "progress=false", "log_every=25"),
        *(f"init_from={HS / 'emulator.pth'}", f"run_dir={run}", *extra),
    ]
    t0 = time.perf_counter()
    train(config(*keys))
    minutes = (time.perf_counter() - t0) / 60
    (run / "done").write_text(f"{minutes:.2f}\n")
    return minutes


def free_year(checkpoint: Path, out: Path) -> dict:
    """The README's year from the shipped initial state, and its climate report's numbers."""
    if not (out.parent / "year.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(ROOT / "scripts/ace/run_screamcast_nudged.py"),
               "--checkpoint", str(checkpoint), "--data", str(HS / "initial_state.zarr"),
               "--output", str(out), "--steps", "1460", "--halo-adjoint", "--overwrite",
               "--no-progress"]  # fmt: skip
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if done.returncode not in (0, 2):  # 2: its guard stopped it (the output is kept)
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr[-2000:]}")
        from screamcast.evaluation.climate_report import climate_report

        numbers = climate_report(str(out), str(HS / "truth_sample.zarr"), out.parent / "report")
        keep = ("jets", "jets_truth", "u_bias_rms", "t_bias_rms", "eke_global",
                "eke_global_truth", "times", "stopped")  # fmt: skip
        record = {k: numbers.get(k) for k in keep} | {"exit": done.returncode, "wall_s": wall}
        record["days"] = (numbers["times"] - 1) / 4.0
        (out.parent / "year.json").write_text(json.dumps(record, default=str))
    return json.loads((out.parent / "year.json").read_text())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--store", required=True, help="the Held-Suarez training store")
    p.add_argument("--workdir", required=True)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--output", required=True, help="the JSON record")
    a = p.parse_args(argv)
    work, record = Path(a.workdir), {"command": " ".join(sys.argv), "variants": {}}
    shipped = free_year(HS / "emulator.pth", work / "shipped" / "year.zarr")
    record["variants"]["shipped"] = {"fine_tune_minutes": 0.0, "year": shipped}
    for name in a.variants.split(","):
        run = work / name / "run"
        minutes = fine_tune(a.store, run, a.steps, VARIANTS[name])
        year = free_year(run / "best.pth", work / name / "year.zarr")
        record["variants"][name] = {"fine_tune_minutes": minutes, "year": year}
        Path(a.output).write_text(json.dumps(record, indent=1, default=str) + "\n")
        print(name, json.dumps(record["variants"][name], default=str), flush=True)
    Path(a.output).write_text(json.dumps(record, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
