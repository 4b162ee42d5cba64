# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The grid's metric inputs: against exact derivatives of the gnomonic map and real areas."""

import numpy as np

from screamcast.data.forcing import extended_position_features, position_features
from screamcast.grid import CubedSphereGrid, PhysicsGrid, TileLayout
from screamcast.grid.cubed_sphere import gnomonic_xyz, xyz_to_latlon
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.metric import grid_jacobian


def east_north(xyz):
    lat, lon = np.radians(xyz_to_latlon(xyz))
    east = np.stack([-np.sin(lon), np.cos(lon), 0 * lon], -1)
    north = np.stack([-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)], -1)
    return east, north


def test_the_jacobian_is_the_gnomonic_maps_derivative_past_the_face_edge_too():
    """On the equiangular grid extended by 4 cells, every face: within 1e-3 of the exact
    derivative (a 1e-7 step of the face angles), projected on east/north by hand."""
    n, H = 24, 4
    g = CubedSphereGrid(n)
    a = g.centre_angles(np.arange(-H, n + H))  # (P,)
    face = np.arange(6)[:, None, None]
    xyz = gnomonic_xyz(face, a[None, None, :], a[None, :, None])  # (6, P, P, 3)
    got = grid_jacobian(*xyz_to_latlon(xyz), n)  # (4, 6, P, P)
    eps = 1e-7
    d_da = (gnomonic_xyz(face, a[None, None] + eps, a[None, :, None]) - xyz) / eps * g.dalpha
    d_db = (gnomonic_xyz(face, a[None, None], a[None, :, None] + eps) - xyz) / eps * g.dalpha
    east, north = east_north(xyz)
    want = np.stack([(d * e).sum(-1) / g.dalpha for d in (d_da, d_db) for e in (east, north)])
    err = np.abs(got - want)
    assert err[:, :, 1:-1, 1:-1].max() < 1e-3  # central differences
    assert err.max() < 0.05  # one-sided on the array's border
    # the face centre of the equatorial face 0: x is east, y is north, one nominal cell wide
    centre = got[:, 0, H + n // 2 - 1 : H + n // 2 + 1, H + n // 2 - 1 : H + n // 2 + 1]
    np.testing.assert_allclose(centre.mean(axis=(1, 2)), [1, 0, 0, 1], atol=2e-3)
    # along the equator of an equatorial face x is longitude (equiangular): one cell east per
    # step, past the edge too; the north extent of a y step falls as cos(alpha)
    row = got[:, 0, H + n // 2 - 1]  # (4, P): the row just below the equator
    np.testing.assert_allclose(row[0], 1.0, atol=2e-3)
    np.testing.assert_allclose(row[3, 1:-1], np.cos(a[1:-1]), atol=3e-3)


def test_the_jacobians_determinant_is_the_cell_area_on_e3sms_grid():
    """|det J| times the nominal cell area is each physics-grid (ne8pg2) cell's exact area to
    within 4% (pg2 cells are uneven inside an element; the sum over the sphere to 0.2%): the
    metric knows the real grid's cells."""
    g = PhysicsGrid.for_face_size(16)
    J = grid_jacobian(g.lat, g.lon, 16).astype(np.float64)  # (4, 6, 16, 16)
    det = np.abs(J[0] * J[3] - J[1] * J[2]) * (np.pi / 32) ** 2
    inner = (slice(None), slice(1, -1), slice(1, -1))  # central differences
    np.testing.assert_allclose(det[inner], g.area[inner], rtol=0.04)
    assert abs(det.sum() / (4 * np.pi) - 1) < 2e-3


def test_the_equatorial_faces_have_the_same_metric_and_the_polar_ones_turn():
    """East/north do not change under a rotation about the axis: faces 0-3 agree; on the
    polar faces the grid turns against east with longitude (not a copy of the equator's)."""
    L = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    geo = ExtendedFaceGeometry(L)
    J = grid_jacobian(geo.lat, geo.lon, 16)
    for f in (1, 2, 3):
        np.testing.assert_allclose(J[:, f], J[:, 0], atol=1e-5)
    assert np.abs(J[:, 4] - J[:, 0]).max() > 1.0


def test_position_features_put_the_metric_first_and_lat_lon_last():
    """The insolation reads the last four channels (sin/cos lat, lon), with or without the
    metric; the metric is finite on every extended pixel, corners of the ring included."""
    L = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    geo = ExtendedFaceGeometry(L)
    plain, metric = (extended_position_features(geo, m) for m in (False, True))
    assert plain.shape == (4, 6, 24, 24) and metric.shape == (8, 6, 24, 24)
    np.testing.assert_array_equal(metric[-4:], plain)
    np.testing.assert_array_equal(plain, position_features(geo.lat, geo.lon))
    assert np.isfinite(metric).all()
    np.testing.assert_array_equal(metric[:4], grid_jacobian(geo.lat, geo.lon, 16))
