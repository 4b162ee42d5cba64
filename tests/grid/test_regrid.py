# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.grid import CubedSphereGrid
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.regrid import latlon_points, nearest_map, regular_spacing_deg


def regular(nlat):
    lat = -90 + (np.arange(nlat) + 0.5) * 180.0 / nlat
    lon = (np.arange(2 * nlat) + 0.5) * 180.0 / nlat
    return latlon_points(lat, lon)


def test_nearest_map_equals_brute_force():
    grid = CubedSphereGrid(8)
    lat, lon = regular(10)
    m = nearest_map(grid, lat, lon)
    dots = grid.xyz.reshape(-1, 3) @ latlon_to_xyz(lat, lon).T  # (6 n n, points)
    np.testing.assert_array_equal(m.source.ravel(), dots.argmax(1))
    assert m.source.shape == (6, 8, 8)


def test_groups_tile_the_sphere_at_the_reference_resolution():
    grid = CubedSphereGrid(24)  # cells ~3.75 deg; reference cells 18 deg
    lat, lon = regular(10)
    m = nearest_map(grid, lat, lon)
    assert m.n_groups == lat.size  # every reference point is nearest to some cell
    assert m.group_area.sum() == pytest.approx(4 * np.pi, rel=1e-12)
    # each group is the cube's part of one reference cell: areas near the cell's own area
    cell = np.radians(18.0) ** 2 * np.cos(np.radians(lat))
    ratio = m.group_area[np.argsort(np.unique(m.source))] / cell
    assert 0.6 < np.median(ratio) < 1.4
    # no cell is farther from its reference point than half a reference cell's diagonal
    assert m.max_distance_deg < 0.5 * np.hypot(18.0, 18.0) + 3.75


def test_a_finer_reference_gives_every_cell_its_own_group():
    grid = CubedSphereGrid(4)  # cells ~22 deg; reference 2 deg
    m = nearest_map(grid, *regular(90))
    assert m.n_groups == 6 * 4 * 4
    assert m.max_distance_deg < 1.5


def test_bad_points_are_refused():
    with pytest.raises(ValueError, match="non-empty and of one shape"):
        nearest_map(CubedSphereGrid(4), np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("n, step", [(8, 90), (16, 30), (48, 10)])
def test_ties_are_broken_the_same_for_any_longitude_convention(n, step):
    """-180..180 and 0..360 axes of one grid chose different points for the cells exactly
    between two of them (9 to 72 cells here): the nudging depended on the convention."""
    grid = CubedSphereGrid(n)
    lat_axis = np.arange(-90 + step / 2, 90, step)
    chosen = []
    for lon_axis in (np.arange(-180.0, 180, step), np.arange(0.0, 360, step)):
        lat, lon = latlon_points(lat_axis, lon_axis)
        j = nearest_map(grid, lat, lon).source.ravel()
        chosen.append(np.stack([lat[j], np.mod(lon[j], 360)], axis=1))
    np.testing.assert_array_equal(chosen[0], chosen[1])


def test_a_regional_reference_covers_only_its_domain():
    grid = CubedSphereGrid(24)
    lat_axis, lon_axis = np.arange(0.0, 40.1, 2.0), np.arange(0.0, 60.1, 2.0)
    m = nearest_map(
        grid, *latlon_points(lat_axis, lon_axis), regular_spacing_deg(lat_axis, lon_axis)
    )
    lon = np.mod(grid.lon + 180, 360) - 180  # -180..180
    inside = (grid.lat >= -1.5) & (grid.lat <= 41.5) & (lon >= -1.5) & (lon <= 61.5)
    strictly = (grid.lat > 1) & (grid.lat < 39) & (lon > 1) & (lon < 59)
    assert m.covered[strictly].all() and not m.covered[~inside].any()
    # the domain's share of the sphere: 60 deg of longitude times (sin 40 - sin 0) / 2
    expected = (60 / 360) * np.sin(np.radians(40)) / 2
    assert m.covered_fraction == pytest.approx(expected, rel=0.05)
    assert m.max_distance_deg <= regular_spacing_deg(lat_axis, lon_axis)
    glob = nearest_map(grid, *regular(10), regular_spacing_deg(*regular_axes(10)))
    assert glob.covered.all() and glob.covered_fraction == pytest.approx(1.0, rel=1e-12)


def regular_axes(nlat):
    return -90 + (np.arange(nlat) + 0.5) * 180.0 / nlat, (np.arange(2 * nlat) + 0.5) * 180.0 / nlat
