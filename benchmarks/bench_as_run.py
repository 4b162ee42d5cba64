# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout as users run it against the dycores it must beat (issue 59, item 1).

Candidate: the README's year of the shipped Held-Suarez emulator, ``python
scripts/ace/run_screamcast_nudged.py --checkpoint benchmarks/held_suarez/emulator.pth --data
benchmarks/held_suarez/initial_state.zarr --steps 1460``, in a fresh process
with the default settings, start-up and writes included, wall seconds per simulated day. Two
changes from the README's command: ``--guard warn``, so that the whole year is timed (the
shipped emulator leaves physics before it; the guard's tests still run every step), and
``--no-progress``. Baselines: the dycore the emulator was trained on (T42, 20-minute steps)
and the coarser one it is scored against (T21, 30-minute steps), after compilation, timed
before and after the emulator and averaged. Targets: at least 10x T42's simulated days per
wall day (ratio <= 0.1) and 2x T21's (<= 0.5). The old defaults (the training tile, fp32)
run beside them, for the record.

It needs the dycore (``pip install -e '.[dycore]'``); ``--quick`` rolls 20 days, not a year.
The context has each run's parts per step from the output's attrs: the network's forwards,
the halo gather, the reassembly (the halo adjoint), the writing, the rest (correctors, guard,
insolation) and the start-up (the process's wall less its steps).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result

ROOT = Path(__file__).resolve().parents[1]
HS = ROOT / "benchmarks" / "held_suarez"
SETTINGS = {
    "default": [],
    "training tile, fp32 (the old defaults)": ["--tile", "16", "--precision", "fp32"],
}
PARTS = ("forward", "halo_wait", "reassembly", "write")


def readme_year(out: Path, steps: int, extra: list[str]) -> dict:
    """The README's command in a fresh process: its wall time and the output's parts."""
    import zarr

    cmd = [sys.executable, str(ROOT / "scripts/ace/run_screamcast_nudged.py")]
    cmd += ["--checkpoint", str(HS / "emulator.pth"), "--data", str(HS / "initial_state.zarr")]
    cmd += ["--output", str(out), "--steps", str(steps)]
    cmd += ["--guard", "warn", "--no-progress", *extra]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-2000:]}")
    attrs = dict(zarr.open_group(out, mode="r").attrs)
    run = int(attrs["complete_steps"]) - 1
    parts = {p: float(attrs[f"{p}_s_per_rank"][0]) for p in PARTS}
    step = float(attrs["step_s_per_rank"][0])
    parts |= {"rest": step - sum(parts.values()), "step": step}
    parts["start_up"] = wall - run * step
    settings = {k: attrs[k] for k in ("tile", "precision", "memory_format")}
    return {"wall_s": wall, "days": run / 4.0, "parts_s": parts, "settings": settings}


def dycores(days: float) -> dict:
    """Seconds per simulated day of the T42 and T21 dycores, after compilation."""
    from benchmarks.held_suarez.dycore_baseline import dycore_cost

    return {"T42": dycore_cost(42, 20.0, days), "T21": dycore_cost(21, 30.0, days)}


def run(quick: bool = False) -> tuple[list[Result], dict]:
    steps, dycore_days = (80, 2.0) if quick else (1460, 5.0)
    before = dycores(dycore_days)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in SETTINGS.items():
            runs[name] = readme_year(Path(tmp) / f"{len(runs)}.zarr", steps, extra)
    after = dycores(dycore_days)
    dycore = {k: (before[k] + after[k]) / 2 for k in before}
    per_day = {k: r["wall_s"] / r["days"] for k, r in runs.items()}
    results, span = [], "year" if not quick else f"{steps // 4}_days"
    for name in SETTINGS:
        for res, target in (("T42", 0.1), ("T21", 0.5)):
            results.append(
                Result(
                    "as_run",
                    f"{span}_vs_{res}[{name}]",
                    per_day[name],
                    dycore[res],
                    target,
                    f"the {res} dycore (a simulated day)",
                    f"{runs[name]['days']:.0f} days, settings {runs[name]['settings']}",
                )
            )
    context = {"steps": steps, "dycore_days": dycore_days, "dycore_before_s": before}
    context |= {"dycore_after_s": after, "runs": runs}
    return results, context
