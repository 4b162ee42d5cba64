# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The global nudged rollout of a screamcast checkpoint.

With no arguments it runs the embedded demo: builds the analytic demo store and its coarse
reference if missing, trains the demo model if missing (a few minutes on 2 CPU cores), then
rolls out the held-out last 2 days nudged toward the reference and prints the skill table.
Several ranks: ``torchrun --nproc-per-node 2 scripts/ace/run_screamcast_nudged.py ...``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--checkpoint", help="a training checkpoint (best.pth)")
    p.add_argument("--data", help="store holding the initial condition (and truth, if any)")
    p.add_argument(
        "--reference",
        help="store to nudge toward: a cubed sphere whose face size "
        "divides the model's, or a regular (time, lat, lon) grid",
    )
    p.add_argument(
        "--output",
        help="local zarr store to write (must not exist, unless --resume/--overwrite); never "
        "an input, inside one or containing one; locked for the run",
    )
    p.add_argument("--start", help="initial time, e.g. 2020-01-13T00:00 (default: first)")
    p.add_argument("--steps", type=int, default=24)
    p.add_argument(
        "--halo-adjoint",
        action="store_true",
        help="overlap-add tile halo predictions inside each face",
    )
    p.add_argument(
        "--halo-adjoint-cross-face",
        action="store_true",
        help="also overlap-add across face edges; needs --halo-adjoint",
    )
    p.add_argument(
        "--halo-adjoint-window",
        choices=["uniform", "linear", "cosine"],
        default=None,
        help="weight each tile's predictions by a window falling toward its outer edge across "
        "the halo before the overlap-add (default cosine: better than uniform at every lead of "
        "the demo's rollouts; uniform is the plain average); needs --halo-adjoint",
    )
    p.add_argument("--nudge-tau-hours", type=float, default=6.0)
    p.add_argument(
        "--nudge-increment",
        choices=["bicubic", "bilinear", "block"],
        default="bicubic",
        help="a coarser cube reference's increment on the model's cells: bicubic (Catmull-Rom) "
        "between block centres (default), bilinear (the default before), or one value per "
        "block (prints the reference's cells on the nudged fields; the first default)",
    )
    p.add_argument(
        "--nudge-time",
        choices=["cubic", "linear"],
        default="cubic",
        help="the reference between its samples: Catmull-Rom cubics in time (default; exact "
        "for quadratics) or linear (the default before: cuts a diurnal cycle's corners)",
    )
    p.add_argument(
        "--nudge-vars",
        default="",
        help="comma-separated (default: u,v,temperature); a 3-D variable (T_mid) nudges all its "
        "levels, T_mid[10:] those from level index 10 down (as EAMxx's vertical cutoff)",
    )
    p.add_argument(
        "--partial-reference",
        choices=["nudge", "refuse"],
        default="nudge",
        help="a lat-lon reference that covers part of the globe: nudge only the cells "
        "inside its domain (default), or refuse it",
    )
    p.add_argument(
        "--assume-grid",
        action="store_true",
        help="accept --data / --reference stores that have no lat/lon coordinates as "
        "being on the checkpoint's grid (without it they are refused)",
    )
    p.add_argument(
        "--climatology",
        help="a store on the model's grid whose time mean is the climatology: the scores "
        "then include the anomaly correlation per step (needs the truth in --data)",
    )
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch-size", type=int, default=16, help="tiles per forward pass")
    p.add_argument(
        "--precision",
        choices=["auto", "bf16", "fp32"],
        default="auto",
        help="the network's arithmetic: bf16 autocast or fp32 (auto: bf16 on CUDA); "
        "halo, reassembly and nudging are always fp32",
    )
    p.add_argument(
        "--channels-last",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the network's convolutions in NHWC memory layout (faster on GPU and "
        "CPU; --no-channels-last for the plain NCHW layout)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted rollout output (refused if its settings differ)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing rollout output (only one this script wrote); the old one "
        "is kept until the new one is complete",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--config",
        help="a configs/production/*.yaml: its rollout settings become "
        "the defaults, and the checkpoint must match its model and grid",
    )
    pre, _ = p.parse_known_args(argv)
    if pre.config:
        settable = {a.dest for a in p._actions} - NOT_IN_CONFIG
        try:
            p.set_defaults(**production_defaults(pre.config, settable))
        except ValueError as err:
            p.error(str(err))
    args = p.parse_args(argv)
    if args.halo_adjoint_cross_face and not args.halo_adjoint:
        p.error("--halo-adjoint-cross-face requires --halo-adjoint")
    if args.halo_adjoint_window and not args.halo_adjoint:
        p.error("--halo-adjoint-window requires --halo-adjoint (the crop uses no halo)")
    return args


# flags that name this run's files or how it prints, never a production config's settings
NOT_IN_CONFIG = {"help", "checkpoint", "data", "output", "config", "resume", "overwrite"}
# a production config's sections: what the checkpoint must be, and the rollout's settings
SECTIONS = {
    "model": {"width", "levels", "blocks", "upsample"},
    "inputs": {"solar_time", "grid_metric"},
    "grid": {"n", "tile", "halo", "name"},
    "rollout": None,  # the rollout flags' names (argparse dests)
}


def _read_production(path: str, settable: set[str]) -> dict:
    """A production YAML, every key checked: a misspelt one (``nudge_tau_hour``) would
    otherwise be ignored and its flag keep its default."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"--config {path} cannot be read: {err}") from None
    for section, values in doc.items():
        if section not in SECTIONS:
            raise ValueError(
                f"--config {path}: unknown section '{section}' (valid: {', '.join(SECTIONS)})"
            )
        valid = SECTIONS[section] if SECTIONS[section] is not None else settable
        for key in values or {}:
            if key not in valid:
                raise ValueError(
                    f"--config {path}: unknown key '{section}.{key}' (valid: "
                    f"{', '.join(sorted(valid))})"
                )
    return doc


def production_defaults(path: str, settable: set[str]) -> dict:
    """Flag defaults from a production config's ``rollout`` section (keys checked)."""
    section = _read_production(path, settable).get("rollout") or {}
    defaults = {k: v for k, v in section.items() if k != "nudge_vars"}
    if "nudge_vars" in section:
        defaults["nudge_vars"] = ",".join(section["nudge_vars"])
    return defaults


def production_expectations(path: str) -> dict:
    """What a production config requires of the checkpoint: its ``model``, ``inputs`` and
    ``grid``."""
    import yaml

    want = yaml.safe_load(Path(path).read_text())
    sections = ("model", "inputs", "grid")
    return {section: dict(want[section]) for section in sections if section in want}


# The library words its errors in its own terms; the CLI is the one place that names flags.
FLAG_WORDS = [
    (r"^start (\S+) is not a time", r"--start \1 is not a time"),
    (r"^steps must be", "--steps must be"),
    (r"^batch_size \(tiles per forward pass\)", "--batch-size"),
    (r"^nudge_tau_hours", "--nudge-tau-hours"),
    (r"^halo_adjoint_window", "--halo-adjoint-window"),
    (r"^nudge_vars need a reference", "--nudge-vars needs --reference"),
    (r"^nudge_vars", "--nudge-vars"),
    (r"^checkpoint is not usable", "--checkpoint is not usable"),
    (
        r"^the cross-face halo adjoint requires the halo adjoint",
        "--halo-adjoint-cross-face requires --halo-adjoint",
    ),
    (r"^resume and overwrite exclude", "--resume and --overwrite exclude"),
    (r"\(assume_grid\)", "(--assume-grid)"),
    (
        r"resume it to continue, overwrite it to replace it",
        "pass --resume to continue it or --overwrite to replace it",
    ),
]


def flag_words(message: str) -> str:
    import re

    for pattern, flags in FLAG_WORDS:
        message = re.sub(pattern, flags, message, count=1)
    return message


def _refuse_stale_demo(data: Path, best: Path) -> None:
    """A demo store (and model) built by an older screamcast (before E3SM's grid, or before
    the tracer rode the wave's wind) is not rebuilt silently: the user's files are theirs to
    delete."""
    import zarr

    attrs = zarr.open_group(data, mode="r").attrs
    grid = attrs.get("grid", "")
    if grid != "ne24pg2":
        raise ValueError(
            f"{data} was built by an older screamcast on the equiangular cube ({grid!r}); the "
            f"demo now runs on E3SM's grid ne24pg2: remove {data.parent} and {best.parent} to "
            "rebuild both"
        )
    if "tracer" not in attrs:
        raise ValueError(
            f"{data} was built by an older screamcast whose tracer rode a solid-body rotation "
            f"that is not in the state; the demo's tracer is now carried by the wave's wind "
            f"(docs/training.md): remove {data.parent} and {best.parent} to rebuild both"
        )


def _refuse_stale_reference(ref: Path) -> None:
    """A demo reference built before the demo moved from ne6pg2 to ne8pg2 is the user's to
    delete (10 s to rebuild); the model does not depend on it."""
    import zarr

    from screamcast.data.synthetic import DEMO_REFERENCE_COARSEN as F
    from screamcast.data.synthetic import DEMO_REFERENCE_GRID

    grid = zarr.open_group(ref, mode="r").attrs.get("grid", "")
    if grid != DEMO_REFERENCE_GRID:
        raise ValueError(
            f"{ref} is on {grid!r}; the demo now nudges toward {DEMO_REFERENCE_GRID} ({F} x {F} "
            f"model cells a block, docs/rollout.md): remove {ref} to rebuild it (the model "
            "is kept)"
        )


def demo_arguments() -> list[str]:
    """Prepare the demo (data, model) and return the rollout's arguments."""
    from screamcast.data.synthetic import DEMO_REFERENCE_COARSEN, write_store

    data, ref = ROOT / "demo_data" / "demo.zarr", ROOT / "demo_data" / "reference.zarr"
    if not data.exists():
        print(f"building the demo store {data} ...", flush=True)
        write_store(data, 48, days=14, layout="stacked")
    if not ref.exists():
        n_ref = 48 // DEMO_REFERENCE_COARSEN
        write_store(
            ref, n_ref, days=14, step_hours=6, coarsen=DEMO_REFERENCE_COARSEN, layout="stacked"
        )
    best = ROOT / "runs" / "demo" / "best.pth"
    _refuse_stale_demo(data, best)
    _refuse_stale_reference(ref)
    if not best.exists():
        print("training the demo model (a few minutes on 2 CPU cores) ...", flush=True)
        from hydra import compose, initialize_config_dir

        from screamcast.config import register
        from screamcast.train.loop import train

        register()
        with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
            cfg = compose(
                "train", overrides=["experiment=demo", f"run_dir={best.parent}", f"data.url={data}"]
            )
        train(cfg)
    import xarray as xr

    from screamcast.data.calendar import DECODER

    times = xr.open_zarr(data, consolidated=False, decode_times=DECODER, chunks=None)["time"].values
    k = 1
    while (ROOT / "demo_out" / f"rollout_{k:03d}.zarr").exists():
        k += 1
    (ROOT / "demo_out").mkdir(exist_ok=True)
    start = times[-49].strftime("%Y-%m-%dT%H:%M")
    return [
        "--checkpoint",
        str(best),
        "--data",
        str(data),
        "--reference",
        str(ref),
        "--output",
        str(ROOT / "demo_out" / f"rollout_{k:03d}.zarr"),
        "--start",
        start,
        "--steps",
        "48",
        "--halo-adjoint",
    ]


def print_table(metrics: dict, steps: int) -> None:
    import numpy as np

    leads = sorted({1, steps // 4, steps // 2, steps} - {0})
    if all(np.isnan(m["rmse"]).all() for m in metrics.values()):  # no truth: the reference's
        print(f"\narea-weighted RMSE against the nudging reference at lead steps {leads}:")
        for var, m in metrics.items():
            if "reference_rmse" in m:
                print(f"  {var:<12} " + "  ".join(f"{m['reference_rmse'][k]:9.3g}" for k in leads))
        return
    print(f"\narea-weighted RMSE (persistence in brackets) at lead steps {leads}:")
    for var, m in metrics.items():
        cells = "  ".join(f"{m['rmse'][k]:9.3g} ({m['persistence_rmse'][k]:.3g})" for k in leads)
        print(f"  {var:<12} {cells}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        try:
            argv = demo_arguments()
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print("demo:", " ".join(argv), flush=True)
    args = parse(argv)
    for name in ("checkpoint", "data", "output"):
        if getattr(args, name) is None:
            print(
                f"error: --{name} is required (or give no arguments for the demo)", file=sys.stderr
            )
            return 2
    from screamcast.file_lock import LockedError
    from screamcast.rollout.run import RolloutOptions, run_rollout
    from screamcast.rollout.stepper import Reassembly

    opts = RolloutOptions(
        checkpoint=args.checkpoint,
        data=args.data,
        output=args.output,
        start=args.start,
        steps=args.steps,
        reference=args.reference,
        reassembly=Reassembly.from_flags(args.halo_adjoint, args.halo_adjoint_cross_face),
        halo_adjoint_window=args.halo_adjoint_window or "cosine",
        nudge_tau_hours=args.nudge_tau_hours,
        nudge_increment=args.nudge_increment,
        nudge_time=args.nudge_time,
        nudge_vars=[v for v in args.nudge_vars.split(",") if v],
        device=args.device,
        batch_size=args.batch_size,
        resume=args.resume,
        overwrite=args.overwrite,
        progress=not args.no_progress,
        precision=args.precision,
        channels_last=args.channels_last,
        partial_reference=args.partial_reference,
        assume_grid=args.assume_grid,
        climatology=args.climatology,
        expect=production_expectations(args.config) if args.config else None,
        expect_source=str(args.config),
    )
    try:
        summary = run_rollout(opts)
    except (ValueError, FileExistsError, FileNotFoundError, LockedError) as err:
        print(f"error: {flag_words(str(err))}", file=sys.stderr)
        return 2
    except OSError as err:  # the disk or the filesystem refused (permissions, space, ...)
        print(f"error: {err}", file=sys.stderr)
        return 1
    if summary.get("metrics"):
        print_table(summary["metrics"], args.steps)
        base = str(args.output).removesuffix(".zarr")
        picture = f", {base}_last_step.png" if Path(f"{base}_last_step.png").exists() else ""
        print(f"\nwrote {args.output}, {base}_metrics.csv/.json{picture}")
    else:
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
