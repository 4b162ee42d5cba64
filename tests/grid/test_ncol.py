# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.grid import CubedSphereGrid
from screamcast.grid.ncol import (
    NcolMismatchError,
    columns_to_grid,
    grid_to_columns,
    ncol_to_grid_index,
)


def homme_order(ne):
    """Flat (face, y, x) index of each column in HOMME's pg2 order."""
    f, je, ie, pj, pi = np.meshgrid(*(np.arange(s) for s in (6, ne, ne, 2, 2)), indexing="ij")
    n = 2 * ne
    return ((f * n + 2 * je + pj) * n + 2 * ie + pi).ravel()


def test_shuffled_columns_map_back_exactly():
    g = CubedSphereGrid(12)
    field = np.random.default_rng(0).normal(size=(3, 6, 12, 12))
    perm = np.random.default_rng(1).permutation(6 * 144)
    lat, lon = g.lat.ravel()[perm], g.lon.ravel()[perm]
    cols = field.reshape(3, -1)[:, perm]
    index = ncol_to_grid_index(g, lat, lon)
    np.testing.assert_array_equal(index, perm)
    np.testing.assert_array_equal(columns_to_grid(cols, index, 12), field)
    np.testing.assert_array_equal(grid_to_columns(field, index), cols)


def test_homme_order_with_element_map_jitter_is_accepted():
    ne = 4
    g = CubedSphereGrid(2 * ne)
    order = homme_order(ne)
    xyz = g.xyz.reshape(-1, 3)[order]
    # move every centre by 2e-4 of a cell, as E3SM's element map does
    jitter = np.random.default_rng(2).normal(size=xyz.shape)
    xyz = xyz + 2e-4 * g.cell_width() * jitter / np.linalg.norm(jitter, axis=1, keepdims=True)
    lat = np.degrees(np.arcsin(xyz[:, 2] / np.linalg.norm(xyz, axis=1)))
    lon = np.degrees(np.arctan2(xyz[:, 1], xyz[:, 0]))
    np.testing.assert_array_equal(ncol_to_grid_index(g, lat, lon), order)


def test_store_of_another_face_size_is_refused():
    other = CubedSphereGrid(10)
    with pytest.raises(NcolMismatchError, match=r"my.zarr: 600 columns \(that is face size n=10\)"):
        ncol_to_grid_index(CubedSphereGrid(12), other.lat, other.lon, name="my.zarr")


def test_rotated_cube_is_refused():
    g = CubedSphereGrid(12)
    with pytest.raises(NcolMismatchError, match="cell widths from the nearest cell centre"):
        ncol_to_grid_index(g, g.lat, g.lon + 1.0)


def test_duplicate_columns_are_refused():
    g = CubedSphereGrid(6)
    lat, lon = g.lat.ravel().copy(), g.lon.ravel().copy()
    lat[1], lon[1] = lat[0], lon[0]
    with pytest.raises(NcolMismatchError, match="matched by several columns"):
        ncol_to_grid_index(g, lat, lon)
