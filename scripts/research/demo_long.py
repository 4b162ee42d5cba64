# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The demo's long mode: 30 simulated days, free and nudged, evaluated (docs/rollout.md).

``python scripts/research/demo_long.py [--days 30]`` (after ``bash ci/demo.sh``, whose model it
uses):
writes a ``days + 2``-day analytic store and its 6-hourly ne8pg2 reference (the demo's) under
``demo_data/long/`` (once), rolls the demo model out hourly for ``days`` days from day 1, free
and nudged (u, v, temperature; tau 6 h), evaluates both with ``screamcast-evaluate``
against the store's exact truth and its time-mean climatology, prints max |u|, the
temperature's range and the tracer's mass on some days, and copies the drift, skill and
spectra figures to ``docs/figures/long_<free|nudged>_<figure>.png``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument(
        "--checkpoint",
        default=str(ROOT / "runs" / "demo" / "best.pth"),
        help="another model (e.g. a multi-step fine-tune of the demo's); its figures are not "
        "copied into docs/",
    )
    ap.add_argument("--tag", default="", help="a suffix for the outputs of --checkpoint")
    a = ap.parse_args(argv)
    from screamcast.sources.synthetic import DEMO_REFERENCE_COARSEN as F
    from screamcast.sources.synthetic import DEMO_REFERENCE_GRID, write_store

    best = Path(a.checkpoint)
    default = best == ROOT / "runs" / "demo" / "best.pth"
    if not best.exists():
        raise SystemExit(f"{best} is missing: run `bash ci/demo.sh` first")
    folder = ROOT / "demo_data" / "long"
    data = folder / f"demo_{a.days + 2}d.zarr"
    ref = folder / f"reference_{a.days + 2}d_{DEMO_REFERENCE_GRID}.zarr"  # ne6pg2: older
    if not data.exists():
        write_store(data, 48, days=a.days + 2)
    if not ref.exists():
        write_store(ref, 48 // F, days=a.days + 2, step_hours=6, coarsen=F)
    out_dir = ROOT / "demo_out" / "long"
    out_dir.mkdir(parents=True, exist_ok=True)
    for mode, extra in (("free", []), ("nudged", ["--reference", str(ref)])):
        out = out_dir / f"{mode}_{a.days}d{a.tag}.zarr"
        cmd = [sys.executable, str(ROOT / "scripts" / "ace" / "run_screamcast_nudged.py")]
        cmd += ["--checkpoint", str(best), "--data", str(data), "--output", str(out)]
        cmd += ["--start", "2020-01-02T00:00", "--steps", str(24 * a.days), "--halo-adjoint"]
        cmd += ["--no-progress", "--overwrite", *extra]
        subprocess.run(cmd, check=True)
        report = out_dir / f"{mode}_{a.days}d{a.tag}_report"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "screamcast.evaluation",
                str(out),
                "--truth",
                str(data),
                "--climatology",
                str(data),
                "--report",
                str(report),
            ],
            check=True,
            cwd=ROOT,
        )
        for figure in ("drift", "spectra", "leads", "tile_imprint") if default else ():
            shutil.copy(
                report / f"{figure}.png", ROOT / "docs" / "figures" / f"long_{mode}_{figure}.png"
            )
        print(f"{mode}: {report / 'report.md'}")
        print(stability(out, data, a.days))


def stability(output: Path, truth_store: Path, days: int) -> str:
    """Whether the run stayed bounded: max |u|, the temperature's range and the tracer's
    area-weighted global mean (its mass) on some days, the truth's at the last one."""
    import numpy as np
    import xarray as xr

    from screamcast.data.calendar import DECODER
    from screamcast.data.store import open_store

    out = xr.open_zarr(output, consolidated=False, decode_times=DECODER, chunks=None)
    truth = open_store(truth_store)
    w = truth["area"].values / truth["area"].values.sum()  # (6, n, n)

    def state(ds, time) -> str:
        u, T = ds["u"].sel(time=time).values, ds["temperature"].sel(time=time).values
        mass = (ds["tracer"].sel(time=time).values * w).sum()
        return f"|u| {np.abs(u).max():.0f} m/s, T {T.min():.0f}-{T.max():.0f} K, tracer {mass:.4f}"

    picked = sorted({d for d in (5, 10, 20, days) if d <= days})
    lines = [f"  day {d}: {state(out, out['time'].values[24 * d])}" for d in picked]
    lines.append(f"  truth at day {days}: {state(truth, out['time'].values[24 * days])}")
    return f"{output.name}, bounded?\n" + "\n".join(lines)


if __name__ == "__main__":
    main()
