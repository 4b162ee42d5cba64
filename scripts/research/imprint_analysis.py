# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where a demo rollout's error sits at one lead: tile imprint, the reference's lattice, face edges,
where the tracer is (docs/rollout.md, "The tile imprint was the nudging's blocks").

``python scripts/research/imprint_analysis.py OUTPUT [--lead 48] [--vars u,v,temperature] [--halo]
[--lattice P]``:
for each variable, from |error| against the demo store at ``lead``: the imprint (worst
tile-local mean over the mean) and where it is, the lattice (the same map averaged over
positions modulo the nudging reference's block, where that divides the tile), the imprint with
the lattice divided out of the map (what the tiling and anything else leave) with its
random-phase null, the
mean |error| at each face's x = 0 and x = n - 1 columns and where the tracer exceeds 0.1,
over the mean. ``--halo``: also the KNN halo's error against the exact flow at
the output's start, per face side (first two halo columns, mean |difference|).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import xarray as xr
from imprint_tools import (
    lattice_means,
    tile_stack,
    without_lattice,
    worst_position_null,
)

from screamcast.data.calendar import DECODER
from screamcast.data.store import open_store

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output")
    ap.add_argument("--data", default=str(ROOT / "demo_data/demo.zarr"))
    ap.add_argument("--lead", type=int, default=48)
    ap.add_argument("--vars", default="u,v,temperature")
    ap.add_argument("--halo", action="store_true")
    ap.add_argument(
        "--lattice",
        type=int,
        default=None,
        help="the period to divide out (default: the output's nudge_block_cells; 4, the old "
        "demo reference's, for outputs that do not record it)",
    )
    args = ap.parse_args()
    truth = open_store(args.data)
    out = xr.open_zarr(args.output, consolidated=False, decode_times=DECODER, chunks=None)
    tile, t = int(out.attrs["tile"]), out["time"].values[args.lead]
    period = args.lattice or int(out.attrs.get("nudge_block_cells", 4))
    if not divides(period, tile):
        print(
            f"the reference's {period} x {period} blocks do not divide the {tile}-cell tile: "
            "no lattice on the tile map to divide out"
        )
    tracer_high = truth["tracer"].sel(time=t).values > 0.1  # (6, n, n)
    for v in args.vars.split(","):
        err = np.abs(out[v].sel(time=t).values - truth[v].sel(time=t).values)  # (6, n, n)
        mean = err.mean()
        stack = tile_stack(err[None], tile)  # (1, tiles, tile, tile)
        local = stack[0].mean(axis=0)  # (tile, tile)
        cols = " ".join(
            f"f{f} {err[f][:, 0].mean() / mean:.1f}/{err[f][:, -1].mean() / mean:.1f}"
            for f in range(6)
        )
        worst = np.unravel_index(local.argmax(), local.shape)  # tile-local (y, x)
        print(
            f"{v} +{args.lead}: mean |error| {mean:.4g}; imprint {local.max() / local.mean():.2f} "
            f"at tile-local (y, x) = ({worst[0]}, {worst[1]}); "
            f"{lattice_summary(stack, local, period)}; where tracer > 0.1 "
            f"{err[tracer_high].mean() / mean:.2f} ({tracer_high.mean():.0%} of cells), elsewhere "
            f"{err[~tracer_high].mean() / mean:.2f}; columns x=0/x=n-1 over the mean: {cols}"
        )
    if args.halo:
        seed = int(truth.attrs.get("seed", 0))  # the wave's phase (demo stores record it)
        halo_error(out["time"].values[0], int(out.attrs["halo"]), tile, args.vars.split(","), seed)


def divides(period: int, tile: int) -> bool:
    """Whether a block lattice of ``period`` cells sits at fixed tile-local positions."""
    return period >= 2 and tile % period == 0


def lattice_summary(stack: np.ndarray, local: np.ndarray, period: int) -> str:
    """The period-``period`` lattice of the tile map and the imprint with it divided out,
    against that measure's random-phase null; nothing when the period does not divide it."""
    if not divides(period, local.shape[-1]):
        return f"no period-{period} lattice"
    lattice = lattice_means(local, period)  # (period, period): positions mod period
    rest = without_lattice(local, period)  # (tile, tile)
    null = worst_position_null(stack, lattice=period)  # of the map without the lattice
    return (
        f"period-{period} lattice {lattice.max() / lattice.mean():.2f}, imprint without it "
        f"{rest.max() / rest.mean():.2f} (random phases {null[0][0]:.2f}, 95th percentile "
        f"{null[1][0]:.2f})"
    )


def halo_error(time, H: int, tile: int, variables: list[str], seed: int) -> None:
    """The KNN halo of the exact demo flow against the flow itself at the halo's pixels."""
    import torch

    from screamcast.grid import PhysicsGrid, TileLayout
    from screamcast.grid.extended import ExtendedFaceGeometry
    from screamcast.halo import HaloOperator
    from screamcast.sources.synthetic import FlowParameters, evaluate, output_times

    grid = PhysicsGrid.for_face_size(48)
    layout = TileLayout(grid, tile, H)
    geo = ExtendedFaceGeometry(layout)
    t0, _ = output_times("2020-01-01T00:00", 14, 1.0, "proleptic_gregorian")  # the demo's
    on_grid = evaluate(FlowParameters(seed=seed), time, t0, grid.lat, grid.lon)
    exact = evaluate(FlowParameters(seed=seed), time, t0, geo.lat, geo.lon)
    n = grid.n
    sides = {
        "x<0": (slice(H, H + n), slice(H - 2, H)),
        "x>n": (slice(H, H + n), slice(H + n, H + n + 2)),
        "y<0": (slice(H - 2, H), slice(H, H + n)),
        "y>n": (slice(H + n, H + n + 2), slice(H, H + n)),
    }
    halo = HaloOperator(layout)
    for v in variables:
        ext = halo.extend(torch.as_tensor(on_grid[v])[None, None])[0, 0]
        diff = np.abs(ext.numpy() - exact[v])  # (6, P, P)
        cells = " ".join(
            f"f{f} " + ",".join(f"{diff[f][sl].mean():.3f}" for sl in sides.values())
            for f in range(6)
        )
        print(f"{v} KNN halo |error| at {time} (x<0, x>n, y<0, y>n): {cells}")


if __name__ == "__main__":
    main()
