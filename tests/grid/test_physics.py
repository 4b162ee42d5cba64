# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""E3SM's physics grid against E3SM's own grid files, and properties that hold at every
resolution (so a bug that only shows at another ne or pg cannot pass)."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.grid.cubed_sphere import CubedSphereGrid, gnomonic_xyz, latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid

GRIDS = Path(__file__).resolve().parents[1] / "data" / "grids"
FILES = [("ne30pg2_scrip.nc", PhysicsGrid(30, 2)), ("outCSne8_scrip.nc", PhysicsGrid(8, 1))]


def angle(a, b):
    """Great-circle distance (radians) between unit vectors ``(..., 3)``."""
    return 2 * np.arcsin(np.minimum(np.linalg.norm(a - b, axis=-1) / 2, 1.0))


@pytest.mark.parametrize(("name", "grid"), FILES, ids=[f for f, _ in FILES])
def test_every_cell_matches_the_scrip_file_in_column_order(name, grid):
    scrip = xr.open_dataset(GRIDS / name, engine="h5netcdf")
    order = grid.column_index()  # (ncol,) flat (face, y, x) of each file column
    assert np.array_equal(np.sort(order), np.arange(6 * grid.n**2))
    centre = latlon_to_xyz(scrip.grid_center_lat.values, scrip.grid_center_lon.values)
    assert angle(grid.xyz.reshape(-1, 3)[order], centre).max() < 1e-12
    area = grid.area.reshape(-1)[order]
    assert np.abs(area / scrip.grid_area.values - 1).max() < 1e-12
    corners = latlon_to_xyz(scrip.grid_corner_lat.values, scrip.grid_corner_lon.values)
    assert angle(grid.corners.reshape(-1, 4, 3)[order], corners).max() < 1e-12  # SCRIP's order
    # the nearest model cell of every file centre is the one the column order names
    nearest = np.argmax(centre @ grid.xyz.reshape(-1, 3).T, axis=1)
    assert np.array_equal(nearest, order)


@pytest.mark.parametrize(("ne", "pg"), [(4, 2), (16, 2), (5, 3), (7, 1), (120, 2)])
def test_properties_at_any_resolution(ne, pg):
    g = PhysicsGrid(ne, pg)
    assert g.n == ne * pg and g.name == f"ne{ne}pg{pg}"
    assert abs(g.area.sum() - 4 * np.pi) < 1e-11
    # element corners are the equiangular lattice of size ne: the pg x pg cells of an element
    # add up to the exact area of the gnomonic element
    elem = g.area.reshape(6, ne, pg, ne, pg).sum(axis=(2, 4))
    # (1e-10: the four-corner difference of the gnomonic formula cancels at small cells)
    np.testing.assert_allclose(elem, CubedSphereGrid(ne).area, rtol=1e-10)
    k = np.arange(0, g.n + 1, pg)
    corner = g.corner_xyz(0, k[None, :], k[:, None])  # (ne + 1, ne + 1, 3) element corners
    edges = -0.25 * np.pi + np.arange(ne + 1) * 0.5 * np.pi / ne
    want = gnomonic_xyz(0, edges[None, :], edges[:, None])
    assert angle(corner, want).max() < 1e-14
    # inside an element, cell corners are normalised bilinear mixes of the element's corners:
    # with pg = 2 the middle corner is the normalised mean of the element's four corners
    if pg == 2:
        mid = g.corner_xyz(0, 1, 1)
        c = want[:2, :2].reshape(4, 3).sum(0)
        assert angle(mid, c / np.linalg.norm(c)) < 1e-15
    # centres are normalised corner means; the first pg^2 columns are element (0, 0)
    c = g.corners.sum(-2)
    assert angle(g.xyz, c / np.linalg.norm(c, axis=-1, keepdims=True)).max() < 1e-15
    first = np.unravel_index(g.column_index()[: pg * pg], g.shape)
    assert set(zip(*first, strict=True)) == {(0, y, x) for y in range(pg) for x in range(pg)}
    assert np.array_equal(g.column_index()[1:pg], np.arange(1, pg))  # si runs along x first


def test_the_equiangular_grid_is_not_e3sm_grid():
    """The measurements behind e3sm-physics-grid.md: cells move by 4% of a cell at ne4pg2,
    ~1% at ne30pg2, and areas by up to 1.5%."""

    def offsets(ne):
        g, eq = PhysicsGrid(ne, 2), CubedSphereGrid(2 * ne)
        return angle(g.xyz, eq.xyz).max() / g.cell_width(), np.abs(eq.area / g.area - 1).max()

    move4, _ = offsets(4)
    move30, area30 = offsets(30)
    assert 0.03 < move4 < 0.06 and 0.005 < move30 < 0.015 and 0.01 < area30 < 0.02


def test_cells_past_the_face_edge_continue_the_element_lattice():
    g = PhysicsGrid(6, 2)
    # an extended cell's corners are shared with its inner neighbour, and the extension is
    # symmetric: cell -1 mirrors cell 0 across the face edge on face 0
    inner = g.cell_corners(0, 0, 3)
    outer = g.cell_corners(0, -1, 3)
    assert angle(inner[0], outer[1]) < 1e-15 and angle(inner[3], outer[2]) < 1e-15
    a = g.extended_area(-2, g.n + 4)  # (y, x) of the extended face
    np.testing.assert_allclose(a[2:-2, 2:-2], g.area[0], rtol=1e-14)
    assert np.all(a > 0) and np.allclose(a, a[::-1]) and np.allclose(a, a.T)


@pytest.mark.parametrize("bad", ["ne30", "ne30pg", "c48", "ne0pg2", "30pg2"])
def test_a_bad_grid_name_is_refused(bad):
    with pytest.raises(ValueError, match="grid name|positive integer"):
        PhysicsGrid.from_name(bad)
