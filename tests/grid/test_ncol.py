# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.grid import CubedSphereGrid, PhysicsGrid
from screamcast.grid.cubed_sphere import xyz_to_latlon
from screamcast.grid.ncol import (
    NcolMismatchError,
    columns_to_grid,
    grid_to_columns,
    ncol_to_grid_index,
)


def columns(g):
    """lat, lon of a grid's columns in E3SM's file order."""
    order = g.column_index()
    return g.lat.reshape(-1)[order], g.lon.reshape(-1)[order]


@pytest.mark.parametrize(("ne", "pg"), [(4, 2), (6, 1), (3, 3)])
def test_columns_in_e3sm_order_map_exactly(ne, pg):
    g = PhysicsGrid(ne, pg)
    field = np.random.default_rng(0).normal(size=(3, 6, g.n, g.n))
    order = g.column_index()
    cols = field.reshape(3, -1)[:, order]  # (3, ncol), as E3SM writes them
    index = ncol_to_grid_index(g, *columns(g))
    np.testing.assert_array_equal(index, order)
    np.testing.assert_array_equal(columns_to_grid(cols, index, g.n), field)
    np.testing.assert_array_equal(grid_to_columns(field, index), cols)


def test_float32_coordinates_are_accepted_to_their_rounding():
    g = PhysicsGrid(8, 2)
    lat, lon = columns(g)
    ncol_to_grid_index(g, lat.astype(np.float32), lon.astype(np.float32))


def test_store_of_another_face_size_is_refused():
    other = PhysicsGrid(5, 2)
    with pytest.raises(NcolMismatchError, match=r"my.zarr: 600 columns \(that is a face of 10"):
        ncol_to_grid_index(PhysicsGrid(6, 2), *columns(other), name="my.zarr")


@pytest.mark.parametrize(
    "change",
    [
        lambda lat, lon: (lat, lon + 1e-4),  # a cube rotated by 1e-4 degrees
        lambda lat, lon: (lat[::-1], lon[::-1]),  # columns in another order
        lambda lat, lon: (np.r_[lat[1:], lat[:1]], np.r_[lon[1:], lon[:1]]),
    ],
    ids=["rotated", "reversed", "shifted"],
)
def test_other_grids_and_orders_are_refused_naming_the_column(change):
    g = PhysicsGrid(4, 2)
    with pytest.raises(NcolMismatchError, match=r"s.zarr: column \d+ .* cell widths .* ne4pg2"):
        ncol_to_grid_index(g, *change(*columns(g)), name="s.zarr")


def test_the_equiangular_grid_and_pg1_of_twice_ne_are_refused():
    g = PhysicsGrid(4, 2)
    eq = CubedSphereGrid(8)
    order = g.column_index()
    with pytest.raises(NcolMismatchError, match=r"0\.0[3-5]\d* cell widths"):
        ncol_to_grid_index(g, eq.lat.reshape(-1)[order], eq.lon.reshape(-1)[order])
    pg1 = PhysicsGrid(8, 1)
    lat, lon = xyz_to_latlon(pg1.xyz.reshape(-1, 3)[order])
    with pytest.raises(NcolMismatchError, match="ne4pg2"):
        ncol_to_grid_index(g, lat, lon)
