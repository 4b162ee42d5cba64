# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The conservative lat-lon map: overlaps that add up to both grids' cells, and each overlap
against an independent count (which face a lat-lon cell's points lie on)."""

import numpy as np
import pytest

from screamcast.grid.conservative import CubeToLatLonConservative, overlap_matrix
from screamcast.grid.cubed_sphere import FACE_AXES
from screamcast.grid.physics import PhysicsGrid


@pytest.mark.parametrize(
    ("ne", "pg", "nlat", "nlon"), [(4, 2, 18, 36), (5, 3, 7, 9), (3, 1, 40, 80)]
)
def test_overlaps_add_up_to_both_grids_cells(ne, pg, nlat, nlon):
    """Odd ne*pg puts a pole inside a cell, even on a corner; lat-lon cells finer and coarser."""
    grid = PhysicsGrid(ne, pg)
    w = overlap_matrix(grid, nlat, nlon)  # (nlat nlon, 6 n n)
    remap = CubeToLatLonConservative(grid, nlat, nlon)
    cube = np.asarray(w.sum(axis=0)).ravel()
    np.testing.assert_allclose(cube, grid.area.ravel(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w.sum(axis=1)).ravel(), remap.area.ravel(), rtol=1e-12)
    assert w.data.min() > -1e-9 * grid.area.min()  # no overlap below rounding
    np.testing.assert_allclose(remap(np.full(grid.shape, 3.5)), 3.5, rtol=1e-13)
    f = np.cos(np.radians(grid.lat)) * np.sin(np.radians(2 * grid.lon)) + grid.lat / 90
    assert abs((remap.area * remap(f)).sum() - (grid.area * f).sum()) < 1e-13


def test_each_overlap_matches_a_count_of_points():
    """A face's indicator remaps to the fraction of each lat-lon cell on that face: counted
    on 100 x 100 points of each cell, evenly spaced in (lon, sin lat) so each point is an equal
    area; a point lies on the face whose axis it is nearest."""
    grid, nlat, nlon = PhysicsGrid(4, 2), 18, 36
    remap = CubeToLatLonConservative(grid, nlat, nlon)
    m = 100
    u = (np.arange(m) + 0.5) / m
    lon = np.radians(remap.lon_bounds[:, :1] + 10 * u[None, :])  # (nlon, m)
    zb = np.sin(np.radians(remap.lat_bounds))
    z = zb[:, :1] + (zb[:, 1:] - zb[:, :1]) * u[None, :]  # (nlat, m)
    Z, L = z[:, None, :, None], lon[None, :, None, :]  # (nlat, nlon, m, m)
    r = np.sqrt(1 - Z**2)
    xyz = np.stack(np.broadcast_arrays(r * np.cos(L), r * np.sin(L), Z), -1)
    face = np.argmax(xyz @ FACE_AXES[:, 0].T, axis=-1)  # (nlat, nlon, m, m)
    worst = 0.0
    for f in range(6):
        counted = (face == f).mean(axis=(-2, -1))
        indicator = (np.arange(6) == f)[:, None, None] * np.ones(grid.shape)
        worst = max(worst, np.abs(remap(indicator) - counted).max())
    assert worst < 0.01  # the count's own error: a face edge crosses ~1/m of a cell's points
    assert worst > 0  # (the count is not the map)
