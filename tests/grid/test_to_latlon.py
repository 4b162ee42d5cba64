# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.grid import PhysicsGrid
from screamcast.grid.to_latlon import CubeToLatLonMean, latlon_cell_area


def test_cell_areas_of_global_grids_sum_to_the_sphere():
    lon = np.arange(0.0, 360.0, 2.5)
    for lat in (np.arange(-90.0, 90.1, 2.5), np.arange(-88.75, 90.0, 2.5)):  # poles in, or not
        area = latlon_cell_area(lat, lon)
        assert area.sum() == pytest.approx(4 * np.pi, rel=1e-12)
    # an equatorial band 10 degrees wide, all longitudes: 2 pi (sin 5 - sin -5)
    band = latlon_cell_area(np.array([0.0]) + [-2.5, 2.5], lon)
    assert band.sum() == pytest.approx(2 * np.pi * 2 * np.sin(np.radians(5.0)), rel=1e-12)


def test_cell_means_keep_constants_and_global_means_and_resolve_smooth_fields():
    grid = PhysicsGrid(16, 2)  # cells ~2.8 degrees
    lat, lon = np.arange(-85.0, 90.0, 10.0), np.arange(5.0, 360.0, 10.0)  # 10-degree cells
    to_points = CubeToLatLonMean(grid, lat, lon)
    # lat-lon cells narrow toward the poles: only there do some hold no cube cell
    empty = ~to_points.has_cells.reshape(lat.size, lon.size)
    assert 0 < to_points.interpolated == empty.sum()
    assert np.abs(lat[empty.any(axis=1)]).min() >= 75.0
    fields = np.stack([np.full(grid.shape, 3.25), np.sin(np.radians(grid.lat))])  # (2, 6, n, n)
    out = to_points(fields)  # (2, nlat, nlon)
    assert out.shape == (2, lat.size, lon.size)
    np.testing.assert_allclose(out[0], 3.25, rtol=0, atol=1e-13)
    # sin(lat) is linear in z: the cell mean is the value near the cell centre
    exact = np.sin(np.radians(lat))[:, None] * np.ones(lon.size)
    assert np.abs(out[1] - exact).max() < 0.02
    # area-weighted global mean of a field with mean 0 stays ~0
    w = latlon_cell_area(lat, lon)
    assert abs((out[1] * w).sum() / w.sum()) < 5e-3


def test_points_finer_than_the_cube_are_interpolated():
    grid = PhysicsGrid(4, 2)  # cells ~11 degrees
    lat, lon = np.arange(-89.0, 90.0, 2.0), np.arange(1.0, 360.0, 2.0)
    to_points = CubeToLatLonMean(grid, lat, lon)
    assert 0 < to_points.interpolated < lat.size * lon.size  # each cube cell is one point's
    out = to_points(np.sin(np.radians(grid.lat))[None])  # (1, nlat, nlon)
    assert np.isfinite(out).all() and np.abs(out).max() <= 1.0
