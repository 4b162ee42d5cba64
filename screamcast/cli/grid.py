# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-grid`` (or ``python -m screamcast.grid``): build a grid and its tiles, and
report geometry checks; ``screamcast-grid scrip --grid ne30pg2 --output FILE`` writes the
grid's SCRIP file (what ncremap and UXarray read; :mod:`screamcast.grid.scrip`).

What the package can show before a model exists: the geometry checks and the measured halo
interpolation error for a chosen face size, tile and halo (numpy only, like the rest of
``screamcast.grid``; the torch operator's identities are tested in tests/test_halo.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain


def smooth_field(xyz: np.ndarray) -> np.ndarray:
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    return x + 2 * y * z + 0.5 * (3 * z**2 - 1)


def check_bytes(layout) -> int:
    """About what the checks hold at once: per extended-face pixel, ``k`` int64 sources and
    float64 weights in three copies (the extended faces, the tiles, the errors) and the
    grid's coordinates and areas."""
    pixels = 6 * layout.padded**2
    return int(pixels * (3 * 16 * layout.k + 8 * 12))


def physical_memory() -> int:
    """This machine's memory in bytes (0 where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def scrip_main(argv: list[str]) -> None:
    """``screamcast-grid scrip``: the SCRIP file of any ``ne*pg*`` grid, in ncol order."""
    p = argparse.ArgumentParser(
        prog="screamcast-grid scrip",
        description="Write the SCRIP grid file of an E3SM physics grid (ncol order).",
    )
    p.add_argument("--grid", required=True, help="E3SM physics grid, e.g. ne30pg2")
    p.add_argument("--output", required=True, help="the netCDF file to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    args = p.parse_args(argv)
    from screamcast.grid import PhysicsGrid
    from screamcast.grid.scrip import write_scrip

    try:
        grid = PhysicsGrid.from_name(args.grid)
    except ValueError as err:
        p.error(f"--grid: {err}")
    if os.path.exists(args.output) and not args.overwrite:
        p.error(f"--output {args.output} already exists: pass --overwrite to replace it")
    try:
        write_scrip(grid, args.output, overwrite=args.overwrite)
    except (OSError, ValueError) as err:
        p.error(f"--output {args.output}: {err}")
    print(f"{args.output}: SCRIP grid {grid.name}, {6 * grid.n**2} cells in ncol order")


@guarded
def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["scrip"]:
        return scrip_main(argv[1:])
    p = argparse.ArgumentParser(
        prog="screamcast-grid",
        description=plain(__doc__),
        epilog="screamcast-grid scrip --grid NAME --output FILE: the grid's SCRIP file "
        "(screamcast-grid scrip --help)",
    )
    p.add_argument("--grid", default="ne24pg2", help="E3SM physics grid (default ne24pg2)")
    p.add_argument("--tile", type=int, default=16)
    p.add_argument("--halo", type=int, default=8)
    p.add_argument("--k", type=int, default=2, help="neighbours for cross-face halo pixels")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    try:
        from screamcast.grid import PhysicsGrid, TileLayout

        grid = PhysicsGrid.from_name(args.grid)
        layout = TileLayout(grid, args.tile, args.halo, k=args.k)
    except ValueError as err:
        p.error(str(err))
    need, have = check_bytes(layout), physical_memory()
    if have and need > have / 2:
        p.error(
            f"--grid {args.grid}: the checks hold ~{need / 2**30:.0f} GiB of index arrays, more "
            f"than half of this machine's {have / 2**30:.0f} GiB: choose a smaller grid"
        )
    idx, w = layout.tile_sources()  # (k, n_tiles * S * S) each
    built = time.perf_counter() - t0
    f = smooth_field(grid.xyz).reshape(-1)  # (6 n n,)
    S = layout.size
    tiles = (f[idx] * w).sum(axis=0).reshape(layout.n_tiles, S, S)  # G f, explicitly
    cross = layout.cross_face_mask()  # (n_tiles, S, S)
    o = layout.tile_origins()
    s = np.arange(layout.size) - layout.halo
    ys = o[:, 1, None, None] + s[None, :, None]  # (n_tiles, S, 1)
    xs = o[:, 2, None, None] + s[None, None, :]  # (n_tiles, 1, S)
    exact = smooth_field(grid.extended_xyz(o[:, 0, None, None], xs, ys))  # (n_tiles, S, S)
    err = np.abs(tiles - exact)
    print(f"{grid!r}: {6 * grid.n**2} cells, cell width {grid.cell_width():.4g} rad")
    print(f"  sum of cell areas - 4 pi        = {grid.area.sum() - 4 * np.pi:.2e}")
    print(f"{layout!r}: {layout.n_tiles} tiles of {layout.size}^2, built in {built:.2f} s")
    print(f"  halo error inside faces         = {err[~cross].max():.2e} (exact copy)")
    outside_x, outside_y = (xs < 0) | (xs >= grid.n), (ys < 0) | (ys >= grid.n)
    corner = np.broadcast_to(outside_x & outside_y, cross.shape)  # past a cube corner
    print(f"  halo error along face edges     = {err[cross & ~corner].max():.2e} (KNN, k={args.k})")
    print(f"  halo error past cube corners    = {err[corner].max():.2e} (KNN, k={args.k})")


if __name__ == "__main__":
    main()
