# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How long a free rollout holds the truth's climate, per checkpoint and per set of the step's
correctors (issue 39): the days until the global-mean temperature leaves 1 K of the truth's
climatology, where the guard stopped the run (if it did), the time-mean global eddy kinetic
energy against the truth's, and the wall time.

    python scripts/research/climate_stability.py --workdir runs/held_suarez \\
        --checkpoint runs/held_suarez/train/s4b_four_step/best.pth --days 180 \\
        --output docs/notes/data/climate_stability.json

Each checkpoint is rolled out with its own correctors (``recorded``), none, ``dry_mass`` and
``mean_temperature`` alone; the rows are appended to ``--output`` (one JSON record, from which
the lab book's table is made: ``--table``)."""

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
sys.path.insert(0, str(ROOT))

VARIANTS = {
    "recorded": None,
    "none": [],
    "dry_mass": [{"type": "dry_mass", "config": {"variable": "PS"}}],
    "mean_temperature": [{"type": "mean_temperature", "config": {"variable": "T"}}],
    "both": [
        {"type": "dry_mass", "config": {"variable": "PS"}},
        {"type": "mean_temperature", "config": {"variable": "T"}},
    ],
}


REASSEMBLY = {
    "intra-face": {"stepper.halo_adjoint": True},
    "crop": {"stepper.halo_adjoint": False},
    "cross-face": {"stepper.halo_adjoint": True, "stepper.halo_adjoint_cross_face": True},
}


def run(
    checkpoint: Path,
    test: Path,
    start: str,
    days: float,
    out: Path,
    correctors,
    reassembly: str,
    hyperdiffusion: float | None = None,
    precision: str = "fp32",
) -> dict:
    from screamcast.config.inference import InferenceConfig
    from screamcast.rollout.plan import RolloutError
    from screamcast.rollout.run import run_rollout

    if out.exists():
        shutil.rmtree(out)
    keys = {
        "checkpoint.path": str(checkpoint),
        "initial_condition.data": str(test),
        "initial_condition.start": start,
        "output.path": str(out),
        "output.steps": int(round(days * 4)),
        "output.progress": False,
        "stepper.precision": precision,
    } | REASSEMBLY[reassembly]
    if correctors is not None:
        keys["stepper.correctors"] = correctors
    if hyperdiffusion is not None:
        keys["stepper.hyperdiffusion"] = hyperdiffusion
    t0, stopped = time.perf_counter(), ""
    try:
        run_rollout(InferenceConfig.from_keys(keys))
    except RolloutError as err:
        stopped = str(err)
    return {"wall_s": time.perf_counter() - t0, "stopped": stopped}


def score(out: Path, truth_t: float, truth_eke: float) -> dict:
    import xarray as xr

    from benchmarks.held_suarez.stages import _open
    from screamcast.evaluation import climate as cl

    ds = _open(out)
    stats = cl.of_store(ds)
    g = np.array(stats.global_t)
    left = np.flatnonzero(np.abs(g - truth_t) > 1.0)
    attrs = xr.open_zarr(out, consolidated=False).attrs
    eke = float(np.average(stats.means()["eke"].mean(0), weights=stats.band_area))
    return {
        "steps": int(stats.count - 1),
        "days_within_1K": (int(left[0]) if len(left) else len(g)) / 4.0,
        "global_t_last": float(g[-1]),
        "eke": eke,
        "eke_ratio": eke / truth_eke,
        "guard": attrs.get("stopped"),
        "correctors": attrs.get("correctors"),
    }


def truth_climate(train: Path) -> tuple[float, float]:
    from benchmarks.held_suarez.stages import _open
    from screamcast.evaluation import climate as cl

    stats = cl.of_store(_open(train))
    eke = float(np.average(stats.means()["eke"].mean(0), weights=stats.band_area))
    return float(np.mean(stats.global_t)), eke


def table(record: dict) -> str:
    lines = [
        f"Last made by `{record['command']}` at commit {record['commit']} (each later row "
        f"records its own command and commit); truth: global-mean T "
        f"{record['truth_global_t']:.2f} K, global EKE {record['truth_eke']:.1f} m2/s2.",
        "",
        "| checkpoint | correctors | days run | days within 1 K | EKE / truth | guard | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in record["rows"]:
        guard = "-" if not r["guard"] else f"{r['guard']['what']} of {r['guard']['channel']}"
        lines.append(
            f"| {r['checkpoint']} | {r['variant']} | {r['steps'] / 4:.1f} | "
            f"{r['days_within_1K']:.1f} | {r['eke_ratio']:.2f} | {guard} | {r['wall_s']:.0f} |"
        )
    return "\n".join(lines + ["", *summary(record)])


def summary(record: dict) -> list[str]:
    """Days run per checkpoint and setting over its starts (the rows that differ by start)."""
    groups: dict[tuple, list[float]] = {}
    for r in record["rows"]:
        setting = r["variant"].split(", start ")[0]
        groups.setdefault((r["checkpoint"], setting), []).append(r["steps"] / 4)
    lines = [
        "| checkpoint | setting | starts | days run: mean | min | max |",
        "|---|---|---|---|---|---|",
    ]
    for (ckpt, setting), days in groups.items():
        if len(days) > 1:
            lines.append(
                f"| {ckpt} | {setting} | {len(days)} | {np.mean(days):.1f} | {min(days):.1f} | "
                f"{max(days):.1f} |"
            )
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--workdir", default="runs/held_suarez")
    p.add_argument("--checkpoint", action="append", default=[])
    p.add_argument("--variants", default="recorded,none,dry_mass,mean_temperature")
    p.add_argument("--days", type=float, default=180.0)
    p.add_argument("--reassembly", choices=sorted(REASSEMBLY), default="intra-face")
    p.add_argument(
        "--hyperdiffusion",
        type=float,
        default=None,
        help="the step's grid-scale dissipation nu (default: the checkpoint's)",
    )
    p.add_argument(
        "--starts", default="3", help="the test store's time indices to start from (a list)"
    )
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--output", default="docs/notes/data/climate_stability.json")
    p.add_argument("--table", action="store_true", help="print the table of --output and stop")
    a = p.parse_args(argv)
    output = Path(a.output)
    if a.table:
        print(table(json.loads(output.read_text())))
        return 0
    work = Path(a.workdir)
    data = work / "data"
    from benchmarks.held_suarez.stages import _open

    test_times = _open(data / "test.zarr")["time"].values
    truth_t, truth_eke = truth_climate(data / "train.zarr")
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    record = json.loads(output.read_text()) if output.exists() else {"rows": []}
    record |= {
        "command": "python scripts/research/climate_stability.py " + " ".join(argv or sys.argv[1:]),
        "commit": commit,
        "truth_global_t": truth_t,
        "truth_eke": truth_eke,
    }
    runs = [
        (Path(c), v, int(i))
        for c in a.checkpoint
        for v in a.variants.split(",")
        for i in a.starts.split(",")
    ]
    for ckpt, variant, index in runs:
        start = test_times[index].strftime("%Y-%m-%dT%H:%M")
        tag = variant if a.reassembly == "intra-face" else f"{variant}, {a.reassembly}"
        if a.hyperdiffusion is not None:
            tag += f", nu={a.hyperdiffusion:g}"
        if a.precision != "fp32":
            tag += f", {a.precision}"
        if index != 3:  # the first start, the only one before --starts
            tag += f", start {index}"
        name = tag.replace(", ", "_").replace("=", "")
        out = work / "stability" / f"{ckpt.parent.name}_{name}.zarr"
        out.parent.mkdir(parents=True, exist_ok=True)
        ran = run(
            ckpt, data / "test.zarr", start, a.days, out, VARIANTS[variant], a.reassembly,
            a.hyperdiffusion, a.precision,
        )  # fmt: skip
        row = {"checkpoint": ckpt.parent.name, "variant": tag, "days": a.days}
        row |= {"command": record["command"], "commit": commit}
        row |= ran | score(out, truth_t, truth_eke)
        record["rows"] = [
            r for r in record["rows"] if (r["checkpoint"], r["variant"]) != (row["checkpoint"], tag)
        ] + [row]
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(record, indent=1, default=str) + "\n")
        print(json.dumps(row, default=str), flush=True)
    print(table(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
