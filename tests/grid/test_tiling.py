# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.grid import CubedSphereGrid, PhysicsGrid, TileLayout
from screamcast.grid.tiling import inverse_distance_weights


def smooth_field(xyz):
    """Degree-1 and degree-2 spherical harmonics: smooth, O(1) amplitude."""
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    return x + 2 * y * z + 0.5 * (3 * z**2 - 1)


def test_counts_and_shapes():
    L = TileLayout(PhysicsGrid.for_face_size(24), tile=8, halo=3)
    assert (L.size, L.padded, L.tiles_per_side, L.n_tiles) == (14, 30, 3, 54)
    R = 6 * (30**2 - 24**2)
    assert L.ring_positions.shape == (R,)
    assert L.ring_sources.shape == L.ring_weights.shape == (R, 2)
    assert L.tile_origins()[5].tolist() == [0, 8, 16]
    idx, w = L.tile_sources()
    assert idx.shape == w.shape == (2, 54 * 14 * 14)


def test_ring_weights_are_a_partition_of_unity_on_other_faces():
    L = TileLayout(PhysicsGrid.for_face_size(16), tile=4, halo=4, k=3)
    w = L.ring_weights
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-14)
    ring_face = L.ring_positions // L.padded**2
    src_face = L.ring_sources // 16**2
    assert (src_face != ring_face[:, None]).all(), "a halo pixel was taken from its own face"


def test_intra_face_halo_is_an_exact_copy():
    g = PhysicsGrid.for_face_size(16)
    L = TileLayout(g, tile=4, halo=2)
    field = smooth_field(g.xyz).ravel()
    idx, w = L.tile_sources()
    vals = (w * field[idx]).sum(0).reshape(L.n_tiles, L.size, L.size)
    o = L.tile_origins()
    inside = ~L.cross_face_mask()
    for t in range(L.n_tiles):
        f, y0, x0 = o[t]
        s = np.arange(L.size) - L.halo
        ys, xs = np.meshgrid(y0 + s, x0 + s, indexing="ij")
        m = inside[t]
        expected = smooth_field(g.xyz[f, ys[m], xs[m]])
        np.testing.assert_array_equal(vals[t][m], expected)


def _halo_errors(n, tile, halo, k=2, power=1.0, grid=PhysicsGrid.for_face_size):
    g = grid(n)
    L = TileLayout(g, tile, halo, k=k, power=power)
    vals = (L.ring_weights * smooth_field(g.xyz).ravel()[L.ring_sources]).sum(1)
    err = np.abs(vals - smooth_field(L.ring_target_xyz()))
    P, H = L.padded, halo
    py, px = (L.ring_positions // P) % P - H, L.ring_positions % P - H
    corner = ((py < 0) | (py >= n)) & ((px < 0) | (px >= n))
    return err[~corner].max(), err[corner].max(), g.cell_width()


def test_cross_face_halo_interpolates_a_smooth_field():
    """Across an edge the halo point sits (nearly: exactly on the equiangular grid) on a
    neighbour column, so k=2 IDW is linear interpolation along the edge: second order. Past a
    cube corner it is first order. Measured on E3SM's ne16pg2 and ne48pg2: edges 3.2e-3 and
    3.7e-4 (the equiangular grid: 1.2e-3 and 1.4e-4), corners 3.0e-2 and 9.7e-3."""
    e32, c32, h32 = _halo_errors(32, 8, 4)
    e96, c96, h96 = _halo_errors(96, 32, 16)
    msg = (
        f"max |halo - f(target)|: edges {e32:.2e} (n=32), {e96:.2e} (n=96); "
        f"corners {c32:.2e}, {c96:.2e}; cell width {h32:.2e}, {h96:.2e}"
    )
    print(msg)
    assert e32 < 3 * h32**2 and e96 < 3 * h96**2, msg
    assert e32 / e96 > 6.0, msg  # 3x finer grid: ~9x smaller error
    assert c32 < h32 and c96 < h96, msg


def test_the_equiangular_grid_keeps_its_exact_columns():
    """On the equiangular cube the halo point lies exactly on a neighbour column: k=2 is ~2.7x
    more accurate there than on E3SM's grid, whose cells inside an element are not
    equiangular (the bilinear subdivision bends the columns slightly)."""
    eq, _, h = _halo_errors(32, 8, 4, grid=CubedSphereGrid)
    pg2, _, _ = _halo_errors(32, 8, 4)
    assert eq < 1.5 * h**2 and 2 * eq < pg2 < 4 * eq, (eq, pg2)


def test_k2_beats_k4_along_edges():
    e2, _, _ = _halo_errors(32, 8, 4, k=2)
    e4, _, _ = _halo_errors(32, 8, 4, k=4)
    assert e2 < e4 / 10, f"k=2 edge error {e2:.2e}, k=4 {e4:.2e}"


def test_inverse_distance_weights_exact_hit():
    w = inverse_distance_weights(np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 2.0], [0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(w, [[1, 0, 0], [0.4, 0.4, 0.2], [1, 0, 0]])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(tile=5, halo=1), "tile=5 does not divide the face size n=16"),
        (dict(tile=8, halo=9), "halo=9 exceeds what one neighbour face can supply"),
        (dict(tile=0, halo=1), "tile must be an integer >= 1"),
        (dict(tile=8, halo=-1), "halo must be an integer >= 0"),
        (dict(tile=8, halo=1, k=0), "k must be an integer >= 1"),
        (dict(tile=8, halo=1, power=0.0), "power must be positive"),
    ],
)
def test_bad_layouts_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TileLayout(PhysicsGrid.for_face_size(16), **kwargs)


def test_zero_halo_has_no_ring():
    L = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=0)
    assert L.ring_positions.size == 0 and not L.cross_face_mask().any()
