# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The imprint studies' null models (scripts/research/imprint_tools.py) on known answers."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "research"))
from imprint_tools import (
    equatorial_orbits,
    tile_stack,
    without_lattice,
    worst_position_null,
)


def test_tile_stack_orders_tiles_face_major():
    field = np.arange(6 * 16 * 16, dtype=float).reshape(1, 6, 16, 16)
    stack = tile_stack(field, 8)  # (1, 24, 8, 8)
    assert stack.shape == (1, 24, 8, 8)
    np.testing.assert_array_equal(stack[0, 5 * 4 + 1 * 2 + 0], field[0, 5, 8:, :8])  # face 5, ty 1


def test_worst_position_null_separates_an_imprint_from_noise():
    rng = np.random.default_rng(3)
    noise = np.abs(rng.normal(size=(1, 6, 16, 16)))
    anchored = noise.copy()
    anchored[..., ::8, ::8] += 1.5  # every tile's corner: the tiling printed on the error
    for field, printed in ((noise, False), (anchored, True)):
        stack = tile_stack(field, 8)
        worst = (lambda m: m.max() / m.mean())(stack[0].mean(axis=0))
        mean, q95 = worst_position_null(stack, draws=300)
        assert 1.0 < mean[0] < q95[0]
        assert (worst > q95[0]) == printed
    const = tile_stack(np.full((2, 6, 16, 16), 3.0), 8)
    np.testing.assert_allclose(worst_position_null(const, draws=5), 1.0)


def test_the_orbit_null_counts_copies_of_one_flow_once():
    """Noise copied onto the four equatorial faces (a flow that repeats every 90 degrees):
    its imprint is above the independent-tile null, as if printed, but inside the null whose
    equatorial copies share a phase; a corner printed on every tile is above both."""
    rng = np.random.default_rng(5)
    field = np.abs(rng.normal(size=(1, 6, 32, 32)))
    field[:, 1:4] = field[:, :1]  # (1, 6, n, n): faces 1-3 repeat face 0
    groups = equatorial_orbits(4)
    assert groups.shape == (96,) and (groups[:16] == groups[16:32]).all()
    assert len(set(groups[64:])) == 32 and not set(groups[64:]) & set(groups[:64])
    anchored = field.copy()
    anchored[..., ::8, ::8] += 0.8  # every tile's corner
    worst = [
        (lambda m: m.max() / m.mean())(tile_stack(f, 8)[0].mean(axis=0)) for f in (field, anchored)
    ]
    _, plain = worst_position_null(tile_stack(field, 8), draws=300)
    _, orbit = worst_position_null(tile_stack(field, 8), draws=300, groups=groups)
    assert plain[0] < orbit[0] and plain[0] < worst[0] < orbit[0]
    _, orbit_anchored = worst_position_null(tile_stack(anchored, 8), draws=300, groups=groups)
    assert worst[1] > orbit_anchored[0]


def test_a_lattice_divided_out_leaves_what_else_knows_the_tiling():
    """An error raised on a period-4 lattice (the nudging reference's blocks) scores above the
    plain null but at the lattice null once the lattice is divided out; an error at one
    tile-local position stays above both. Dividing out a fitted lattice lowers noise's score
    too, so the lattice null is below the plain one."""
    rng = np.random.default_rng(4)
    noise = np.abs(rng.normal(size=(1, 6, 32, 32)))
    lattice = noise * (1 + 0.8 * np.tile(np.eye(4)[0] + np.eye(4)[3], 8)[None, None, None, :])
    spot = lattice.copy()
    spot[..., 5::16, 9::16] += 2.0  # one position of every 16 x 16 tile
    plain_mean, plain_q95 = worst_position_null(tile_stack(noise, 16), draws=200)
    lat_mean, lat_q95 = worst_position_null(tile_stack(noise, 16), draws=200, lattice=4)
    assert lat_mean[0] < plain_mean[0]
    for field, above_plain, above_lattice_null in (
        (noise, False, False),
        (lattice, True, False),
        (spot, True, True),
    ):
        stack = tile_stack(field, 16)
        local = stack[0].mean(axis=0)  # (16, 16)
        rest = without_lattice(local, 4)
        assert (local.max() / local.mean() > plain_q95[0]) == above_plain
        _, q95 = worst_position_null(stack, draws=200, lattice=4)
        assert (rest.max() / rest.mean() > q95[0]) == above_lattice_null
    # a pure lattice divides out to a constant
    pure = np.tile(rng.uniform(1, 2, (4, 4)), (4, 4))
    np.testing.assert_allclose(without_lattice(pure, 4), 1.0)
