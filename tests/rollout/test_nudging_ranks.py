# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A corrector restricted to each rank's block nudges as the globe's: a cube reference with a
bicubic increment on 2 x 2 blocks of a face (the reference cells past each block swapped,
corners included) bit for bit; a lat-lon reference, whose groups of cells straddle blocks,
to float rounding (the group sums added over the ranks). Ranks as threads."""

import numpy as np
import torch

from screamcast.rollout.domain import blocks
from screamcast.rollout.nudging.relaxation import Relaxation
from tests.rollout.test_block_operator import run_ranks
from tests.rollout.test_nudging_writer import grid, latlon_reference, reference

TIME = np.datetime64("2020-01-01T03:00")


def nudged_on_ranks(
    whole: Relaxation, world: int, tile: int, x: torch.Tensor, views: list | None = None
) -> torch.Tensor:
    """Every rank's corrector applied to its block at once; the blocks put back together
    (each rank's corrector appended to ``views``)."""
    every, out = blocks(world, x.shape[-1] // tile), x.clone()

    def body(r: int, exchange) -> None:
        where = (slice(None), *every[r].region(tile))
        view = whole.restrict(r, every, tile, exchange)
        out[where] = view.apply(x[where].clone(), TIME)
        if views is not None:
            views.append(view)

    run_ranks(world, body)
    return out


def test_blocks_nudge_toward_a_cube_reference_as_the_globe_bit_for_bit():
    rng = np.random.default_rng(2)
    ref = reference(n=8, values=(0.0, 6.0))
    ref["u"].values[:] = rng.standard_normal(ref["u"].shape).astype(np.float32)
    x = torch.as_tensor(rng.standard_normal((2, 6, 32, 32)), dtype=torch.float32)
    for increment in ("bicubic", "bilinear"):
        whole = Relaxation(ref, ["u"], ["u", "v"], 6.0, np.timedelta64(3, "h"), grid(32),
                           increment=increment)  # fmt: skip
        want = whole.apply(x.clone(), TIME)
        for world in (4, 8, 24, 96):  # halves, quarters of 3 faces; 2 x 2, 4 x 4 blocks a face
            got = nudged_on_ranks(whole, world, 8, x)
            assert torch.equal(got, want), (increment, world)


def test_blocks_nudge_toward_a_latlon_reference_as_the_globe_to_rounding():
    ref = latlon_reference(6)  # 30 degree groups: most straddle blocks
    whole = Relaxation(ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(16))
    x = torch.randn(1, 6, 16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    want = whole.apply(x.clone(), TIME)
    views = []
    got = nudged_on_ranks(whole, 24, 4, x, views)
    assert float((got - x).abs().max()) > 0.1  # it nudged
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    points = [v.series.reference.sizes["lat"] * v.series.reference.sizes["lon"] for v in views]
    assert max(points) < 6 * 12  # every rank reads a box of the reference, not all of it


def test_a_rank_reads_the_box_of_points_its_cells_take_and_only_it():
    """Each rank's reference box holds every point its cells read (the map's, by position),
    a run of longitudes across the grid's last one included; on 24 ranks of a 1 degree
    reference the largest rank reads 7% of it (was all of it), the ranks together 1.03x."""
    ref = latlon_reference(180)  # 1 degree
    whole = Relaxation(ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(32))
    source = whole.map.source.ravel()
    largest, total, wrapped = [], [], 0
    for world in (6, 24):
        every = blocks(world, 4)
        read = []
        for r in range(world):
            view = whole.restrict(r, every, 8, None)
            box = view.series.reference
            lat, lon = box["lat"].values, box["lon"].values
            # the point each cell reads, by its box position, is the whole map's point
            i, j = np.divmod(source[view.cells.numpy()], 360)
            b = view.in_box.numpy()
            np.testing.assert_array_equal(lat[b // lon.size], ref["lat"].values[i])
            np.testing.assert_array_equal(lon[b % lon.size], ref["lon"].values[j])
            wrapped += bool(np.any(np.diff(lon) < 0))
            read.append(lat.size * lon.size)
        largest.append(max(read) / (180 * 360))
        total.append(sum(read) / (180 * 360))
    assert wrapped > 0  # some block straddles the grid's last longitude
    # whole faces: a polar face reads every longitude of its cap (29%), the others less
    assert 0.28 < largest[0] < 0.30 and 0.07 < largest[1] < 0.073, largest
    assert 1.0 < total[0] < 1.07 and 1.0 < total[1] < 1.04, total  # boxes barely overlap
