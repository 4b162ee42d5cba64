# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from screamcast.grid.cubed_sphere import (
    CubedSphereGrid,
    latlon_to_xyz,
    xyz_to_face_angles,
    xyz_to_latlon,
)


@pytest.mark.parametrize("n", [1, 7, 16, 48, 192])
def test_areas_sum_to_4pi(n):
    area = CubedSphereGrid(n).area
    assert area.shape == (6, n, n)
    assert abs(area.sum() - 4 * np.pi) < 1e-12
    assert (area > 0).all()


def test_face_centres_follow_homme_numbering():
    g = CubedSphereGrid(2)  # the 4 cells of a face surround its centre
    centre = g.xyz.mean(axis=(1, 2))
    lat, lon = xyz_to_latlon(centre / np.linalg.norm(centre, axis=-1, keepdims=True))
    np.testing.assert_allclose(lat, [0, 0, 0, 0, -90, 90], atol=1e-12)
    np.testing.assert_allclose(lon[:4], [0, 90, 180, 270], atol=1e-12)


def test_latlon_are_consistent_with_xyz():
    g = CubedSphereGrid(12)
    np.testing.assert_allclose(latlon_to_xyz(g.lat, g.lon), g.xyz, atol=1e-14)
    assert g.lat.min() > -90 and g.lat.max() < 90
    assert g.lon.min() >= 0 and g.lon.max() < 360


def test_inverse_projection_round_trip():
    g = CubedSphereGrid(10)
    face, alpha, beta = xyz_to_face_angles(g.xyz)
    a = g.centre_angles(np.arange(10))
    np.testing.assert_array_equal(face, np.broadcast_to(np.arange(6)[:, None, None], g.shape))
    np.testing.assert_allclose(alpha, np.broadcast_to(a[None, None, :], g.shape), atol=1e-14)
    np.testing.assert_allclose(beta, np.broadcast_to(a[None, :, None], g.shape), atol=1e-14)


def _edge_neighbours(n):
    """For every outermost-ring pixel: the nearest cell on another face and its distance in
    local cell widths (distance to the pixel's in-face neighbour)."""
    g = CubedSphereGrid(n)
    xyz = g.xyz.reshape(-1, 3)
    face = np.repeat(np.arange(6), n * n)
    ring = np.flatnonzero(g.edge_mask(1).ravel())
    out = {}
    for f in range(6):
        nn = NearestNeighbors(n_neighbors=1).fit(xyz[face != f])
        rows = ring[face[ring] == f]
        d, j = nn.kneighbors(xyz[rows])
        other = np.flatnonzero(face != f)[j[:, 0]]
        out[f] = (rows, other, d[:, 0])
    return g, out


@pytest.mark.parametrize("n", [8, 33])
def test_every_edge_pixel_has_a_cross_face_neighbour_about_one_cell_away(n):
    g, out = _edge_neighbours(n)
    xyz = g.xyz.reshape(-1, 3)
    worst = 0.0
    for rows, _, d in out.values():
        x = rows % n
        # local cell width: distance to the in-face neighbour along x
        inner = rows + np.where(x < n - 1, 1, -1)
        step = np.linalg.norm(xyz[rows] - xyz[inner], axis=1)
        worst = max(worst, float((d / step).max()))
    assert worst < 1.5, f"farthest cross-face neighbour is {worst:.3f} cell widths away"


def test_each_edge_joins_two_faces_and_each_corner_three():
    n = 9
    g, out = _edge_neighbours(n)
    edges = set()
    for f, (rows, other, _) in out.items():
        y, x = (rows // n) % n, rows % n
        for side in (y == 0, y == n - 1, x == 0, x == n - 1):
            interior = side & ~((y == 0) | (y == n - 1)) | side & ~((x == 0) | (x == n - 1))
            faces = set((other[side & interior] // (n * n)).tolist())
            assert len(faces) == 1, f"face {f}: one edge touches faces {faces}"
            edges.add(frozenset((f, faces.pop())))
    assert len(edges) == 12
    # a cube corner: the three faces' corner pixels are mutual nearest cross-face neighbours
    xyz = g.xyz.reshape(6, n, n, 3)
    corners = xyz[:, [0, 0, -1, -1], [0, -1, 0, -1]].reshape(-1, 3)  # (24, 3)
    d = np.linalg.norm(corners[:, None] - corners[None], axis=-1)
    close = (d < 2.0 * g.cell_width()).sum(axis=1) - 1
    np.testing.assert_array_equal(close, 2)  # 8 cube corners x 3 faces


def test_edge_mask_counts():
    g = CubedSphereGrid(10)
    assert g.edge_mask(1)[0].sum() == 4 * 10 - 4
    assert g.edge_mask(2)[3].sum() == 100 - 36
    assert g.edge_mask(5).all()


@pytest.mark.parametrize("bad", [0, -3, 2.5, "8"])
def test_bad_face_size_is_refused(bad):
    with pytest.raises(ValueError, match="face size n must be a positive integer"):
        CubedSphereGrid(bad)
