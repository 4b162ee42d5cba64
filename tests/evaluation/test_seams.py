# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Pixel-class RMSE and tile imprint on fields with known answers."""

import numpy as np
import pytest

from screamcast.evaluation.metrics import face_edge_mask, tile_seam_mask
from screamcast.evaluation.seams import SeamSkill, imprint_floor, tile_blocks
from screamcast.grid import PhysicsGrid

G = PhysicsGrid(8, 2)  # n = 16


def test_pixel_classes_and_tile_imprint():
    seams = SeamSkill(16, 8, G.area, ["a"], 3)
    truth = np.zeros((1, 6, 16, 16))
    on_seams = tile_seam_mask(16, 8)[None].astype(float)
    seams.score(0, truth, truth)
    seams.score(1, on_seams, truth)  # error 1 on the tile seams only
    assert seams.rmse["tile_seams"][0, 1] == pytest.approx(1.0)
    assert seams.rmse["face_edges"][0, 1] == 0.0 and seams.rmse["interiors"][0, 1] == 0.0
    # the same error in every tile: its map is that tile, its spread std / mean
    one_tile = np.random.default_rng(1).uniform(1, 2, size=(8, 8))
    error = np.tile(one_tile, (2, 2))[None, None].repeat(6, axis=1)  # (1, 6, 16, 16)
    seams.score(2, error, truth)
    np.testing.assert_allclose(seams.last_map[0], one_tile)
    assert seams.imprint[0, 2] == pytest.approx(one_tile.std() / one_tile.mean())
    # an error that does not know the tiling: constant -> imprint 0
    seams.score(2, truth + 3.0, truth)
    assert seams.imprint[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert seams.imprint_floor[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert (face_edge_mask(16) & tile_seam_mask(16, 8)).sum() == 0  # disjoint classes
    with pytest.raises(ValueError, match="tile=5 does not divide"):
        SeamSkill(16, 5, G.area, ["a"], 3)


def test_tiles_of_a_whole_face_have_no_seams_and_no_tile_imprint():
    """The automatic tile is a whole face on small grids: no seam pixels (NaN, no warning),
    no tile imprint (NaN, the report's "none"), the other classes scored as on any tile."""
    import warnings

    from screamcast.evaluation.report import _class_cell, _number

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty class divided by its zero area warned
        seams = SeamSkill(16, 16, G.area, ["a"], 2)
    truth = np.zeros((1, 6, 16, 16))
    seams.score(0, truth, truth)
    seams.score(1, truth + face_edge_mask(16)[None], truth)  # error 1 on the face edges
    assert np.isnan(seams.rmse["tile_seams"][0, 1]) and np.isnan(seams.imprint[0, 1])
    assert seams.rmse["face_edges"][0, 1] == pytest.approx(1.0)
    assert seams.rmse["interiors"][0, 1] == 0.0
    last = {k: v[-1] for k, v in seams.summary()["a"].items()}
    assert _class_cell(last, "tile_seams") == "none" and _number(last["tile_imprint"]) == "none"
    assert _class_cell(last, "face_edges").startswith("1 (")


def test_imprint_floor_is_the_spread_of_randomly_phased_tiles():
    """The floor is the root-mean-square spread of the tile map when every tile is rolled by a
    random phase (checked against 4000 such rolls), an error that does not know the tiling
    scores about its floor, and one that repeats with the tiles scores far above it."""
    rng = np.random.default_rng(2)
    noise = np.abs(rng.normal(size=(1, 6, 16, 16)))  # |error| with no tile structure
    stack = tile_blocks(noise, 8).reshape(1, 24, 8, 8)  # (1, 24, 8, 8)
    rolled_var = []
    for _ in range(4000):
        sy, sx = rng.integers(0, 8, (2, 24))
        tiles = [np.roll(stack[0, i], (sy[i], sx[i]), axis=(0, 1)) for i in range(24)]
        rolled_var.append(np.mean(tiles, axis=0).var())
    assert imprint_floor(stack)[0] == pytest.approx(np.sqrt(np.mean(rolled_var)), rel=0.02)

    seams = SeamSkill(16, 8, G.area, ["a"], 2)
    zero = np.zeros((1, 6, 16, 16))
    seams.score(1, noise, zero)
    floor = seams.imprint_floor[0, 1]
    assert floor == pytest.approx(imprint_floor(stack)[0] / noise.mean())
    assert 0.7 < seams.imprint[0, 1] / floor < 1.3  # ~0.12: the floor, not 0
    anchored = np.tile(rng.uniform(0, 2, size=(8, 8)), (2, 2))[None, None].repeat(6, axis=1)
    seams.score(1, anchored + 0.3 * noise, zero)
    assert seams.imprint[0, 1] > 3 * seams.imprint_floor[0, 1]  # 4.7x


def test_each_pixel_class_has_its_own_persistence():
    """A truth that changes by 2 on the face edges and 1 elsewhere: each class's persistence RMSE
    is its own change, so a model off by half the change everywhere is 0.5 of persistence in
    every class, though its face-edge RMSE is twice the interiors'."""
    seams = SeamSkill(16, 8, G.area, ["a"], 2)
    start = np.zeros((1, 6, 16, 16))
    change = np.where(face_edge_mask(16), 2.0, 1.0)[None]  # (1, 6, 16, 16)
    seams.score(0, start, start)
    seams.score(1, start + 0.5 * change, start + change)
    p, r = seams.persistence, seams.rmse
    assert p["face_edges"][0, 1] == pytest.approx(2.0) and p["interiors"][0, 1] == pytest.approx(
        1.0
    )
    assert r["face_edges"][0, 1] == pytest.approx(2 * r["interiors"][0, 1])
    for c in SeamSkill.CLASSES:
        assert r[c][0, 1] / p[c][0, 1] == pytest.approx(0.5)
    assert seams.summary()["a"]["persistence_rmse_face_edges"][1] == pytest.approx(2.0)
