# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The embedded demo: what the rollout command runs when given no arguments.

Builds the analytic demo store and its coarse reference if missing, trains the demo model if
missing (a few minutes on 2 CPU cores), and returns the rollout's arguments: the held-out last
2 days nudged toward the reference.
"""

from __future__ import annotations

from pathlib import Path

# the checkout: its configs/, and the demo's folders (demo_data/, runs/demo/, demo_out/)
ROOT = Path(__file__).resolve().parents[2]


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


def _refuse_stale_model(best: Path) -> None:
    """A demo model trained before the statistics kept each channel's extremes: the guard
    would bound its precipitation by 10 sigma, which the demo's own storms exceed."""
    from screamcast import checkpoint_format as fmt

    if best.exists() and not fmt.load(best)["description"]["stats"].get("min"):
        raise ValueError(
            f"{best} was trained by an older screamcast whose statistics lack each channel's "
            f"extremes, which the rollout's guard now bounds by: remove {best.parent} to "
            "retrain it (a few minutes)"
        )


def _refuse_stale_reference(ref: Path) -> None:
    """A demo reference built before the demo moved from ne6pg2 to ne8pg2 is the user's to
    delete (10 s to rebuild); the model does not depend on it."""
    import zarr

    from screamcast.sources.synthetic import DEMO_REFERENCE_COARSEN as F
    from screamcast.sources.synthetic import DEMO_REFERENCE_GRID

    grid = zarr.open_group(ref, mode="r").attrs.get("grid", "")
    if grid != DEMO_REFERENCE_GRID:
        raise ValueError(
            f"{ref} is on {grid!r}; the demo now nudges toward {DEMO_REFERENCE_GRID} ({F} x {F} "
            f"model cells a block, docs/rollout.md): remove {ref} to rebuild it (the model "
            "is kept)"
        )


def demo_arguments() -> list[str]:
    """Prepare the demo (data, model) and return the rollout's arguments."""
    from screamcast.sources.synthetic import DEMO_REFERENCE_COARSEN, write_store

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
    _refuse_stale_model(best)
    if not best.exists():
        print("training the demo model (a few minutes on 2 CPU cores) ...", flush=True)
        from screamcast.cli.hydra_config import compose_train
        from screamcast.train.loop import train
        from screamcast.train.run_dir import TrainingStopped

        cfg = compose_train(["experiment=demo", f"run_dir={best.parent}", f"data.url={data}"])
        try:
            train(cfg)
        except TrainingStopped as stop:  # saved: the same command resumes the training
            raise SystemExit(128 + stop.signum) from None
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
