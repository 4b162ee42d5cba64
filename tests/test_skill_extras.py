# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Anomaly correlation, pixel-class RMSE and tile imprint on fields with known answers."""

import numpy as np
import pytest

from screamcast.grid import PhysicsGrid
from screamcast.metrics import face_edge_mask, tile_seam_mask
from screamcast.skill_extras import (
    AnomalyCorrelation,
    SeamSkill,
    equatorial_orbits,
    imprint_floor,
    tile_stack,
    without_lattice,
    worst_position_null,
)

G = PhysicsGrid(8, 2)  # n = 16


def test_anomaly_correlation_known_answers():
    rng = np.random.default_rng(0)
    clim = rng.normal(size=(2, 6, 16, 16))
    anom = rng.normal(size=(2, 6, 16, 16))
    acc = AnomalyCorrelation(clim, G.area, ["a", "b"], 3)
    acc.add(0, clim + anom, clim + anom)  # the initial condition: persistence = truth
    acc.add(1, clim + anom, clim + anom)  # a perfect forecast
    acc.add(2, clim - 2 * anom, clim + anom)  # anomalies reversed (and scaled: no effect)
    np.testing.assert_allclose(acc.acc[:, :3], [[1, 1, -1], [1, 1, -1]], atol=1e-12)
    np.testing.assert_allclose(acc.persistence_acc[:, 2], 1.0, atol=1e-12)
    w = G.area / G.area.sum()
    want = np.sqrt((anom[0] ** 2 * w).sum())
    assert acc.climatology_rmse[0, 1] == pytest.approx(want, rel=1e-12)
    # uncorrelated anomalies: ACC near 0 (6 x 16 x 16 points)
    acc.add(2, clim + rng.normal(size=anom.shape), clim + anom)
    assert np.abs(acc.acc[:, 2]).max() < 0.1


def test_pixel_classes_and_tile_imprint():
    seams = SeamSkill(16, 8, G.area, ["a"], 3)
    truth = np.zeros((1, 6, 16, 16))
    on_seams = tile_seam_mask(16, 8)[None].astype(float)
    seams.add(0, truth, truth)
    seams.add(1, on_seams, truth)  # error 1 on the tile seams only
    assert seams.rmse["tile_seams"][0, 1] == pytest.approx(1.0)
    assert seams.rmse["face_edges"][0, 1] == 0.0 and seams.rmse["interiors"][0, 1] == 0.0
    # the same error in every tile: its map is that tile, its spread std / mean
    one_tile = np.random.default_rng(1).uniform(1, 2, size=(8, 8))
    error = np.tile(one_tile, (2, 2))[None, None].repeat(6, axis=1)  # (1, 6, 16, 16)
    seams.add(2, error, truth)
    np.testing.assert_allclose(seams.last_map[0], one_tile)
    assert seams.imprint[0, 2] == pytest.approx(one_tile.std() / one_tile.mean())
    # an error that does not know the tiling: constant -> imprint 0
    seams.add(2, truth + 3.0, truth)
    assert seams.imprint[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert seams.imprint_floor[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert (face_edge_mask(16) & tile_seam_mask(16, 8)).sum() == 0  # disjoint classes
    with pytest.raises(ValueError, match="tile=5 does not divide"):
        SeamSkill(16, 5, G.area, ["a"], 3)


def test_tile_stack_orders_tiles_face_major():
    field = np.arange(6 * 16 * 16, dtype=float).reshape(1, 6, 16, 16)
    stack = tile_stack(field, 8)  # (1, 24, 8, 8)
    assert stack.shape == (1, 24, 8, 8)
    np.testing.assert_array_equal(stack[0, 5 * 4 + 1 * 2 + 0], field[0, 5, 8:, :8])  # face 5, ty 1


def test_imprint_floor_is_the_spread_of_randomly_phased_tiles():
    """The floor is the root-mean-square spread of the tile map when every tile is rolled by a
    random phase (checked against 4000 such rolls), an error that does not know the tiling
    scores about its floor, and one that repeats with the tiles scores far above it."""
    rng = np.random.default_rng(2)
    noise = np.abs(rng.normal(size=(1, 6, 16, 16)))  # |error| with no tile structure
    stack = tile_stack(noise, 8)  # (1, 24, 8, 8)
    rolled_var = []
    for _ in range(4000):
        sy, sx = rng.integers(0, 8, (2, 24))
        tiles = [np.roll(stack[0, i], (sy[i], sx[i]), axis=(0, 1)) for i in range(24)]
        rolled_var.append(np.mean(tiles, axis=0).var())
    assert imprint_floor(stack)[0] == pytest.approx(np.sqrt(np.mean(rolled_var)), rel=0.02)

    seams = SeamSkill(16, 8, G.area, ["a"], 2)
    zero = np.zeros((1, 6, 16, 16))
    seams.add(1, noise, zero)
    floor = seams.imprint_floor[0, 1]
    assert floor == pytest.approx(imprint_floor(stack)[0] / noise.mean())
    assert 0.7 < seams.imprint[0, 1] / floor < 1.3  # ~0.12: the floor, not 0
    anchored = np.tile(rng.uniform(0, 2, size=(8, 8)), (2, 2))[None, None].repeat(6, axis=1)
    seams.add(1, anchored + 0.3 * noise, zero)
    assert seams.imprint[0, 1] > 3 * seams.imprint_floor[0, 1]  # 4.7x


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


def test_each_pixel_class_has_its_own_persistence():
    """A truth that changes by 2 on the face edges and 1 elsewhere: each class's persistence RMSE
    is its own change, so a model off by half the change everywhere is 0.5 of persistence in
    every class, though its face-edge RMSE is twice the interiors'."""
    seams = SeamSkill(16, 8, G.area, ["a"], 2)
    start = np.zeros((1, 6, 16, 16))
    change = np.where(face_edge_mask(16), 2.0, 1.0)[None]  # (1, 6, 16, 16)
    seams.add(0, start, start)
    seams.add(1, start + 0.5 * change, start + change)
    p, r = seams.persistence, seams.rmse
    assert p["face_edges"][0, 1] == pytest.approx(2.0) and p["interiors"][0, 1] == pytest.approx(
        1.0
    )
    assert r["face_edges"][0, 1] == pytest.approx(2 * r["interiors"][0, 1])
    for c in SeamSkill.CLASSES:
        assert r[c][0, 1] / p[c][0, 1] == pytest.approx(0.5)
    assert seams.table()["a"]["persistence_rmse_face_edges"][1] == pytest.approx(2.0)
