# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The SCRIP description of an E3SM physics grid: what ncremap, ESMF, TempestRemap and UXarray
read to know where each ``ncol`` column of a file lies.

The same variables, units and attrs as TempestRemap's ``ne<NE>pg<PG>_scrip.nc`` (E3SM's own
grid files), in E3SM's ``ncol`` order (:meth:`PhysicsGrid.column_index`): cell centres and the
four corners counter-clockwise seen from outside the sphere, degrees with longitudes in
[0, 360), areas in steradians. ``tests/grid/test_scrip.py`` checks ne30pg2 against the real
file. Arrays are numpy; the file is written with h5netcdf (netCDF-4, like TempestRemap's).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from screamcast.grid.cubed_sphere import xyz_to_latlon
from screamcast.grid.physics import PhysicsGrid

FILE_ATTRS = {
    "api_version": np.float32(5.0),
    "version": np.float32(5.0),
    "floating_point_word_size": np.int32(8),
}
SNAP = 1e-9  # degrees from the meridian 0 that a corner is on it
POLE = 1.0 - 1e-14  # |z| above which a corner is a pole, whose longitude is the centre's


def scrip_arrays(grid: PhysicsGrid) -> dict[str, tuple[tuple[str, ...], np.ndarray, dict]]:
    """``{name: (dims, values, attrs)}`` of the SCRIP variables, columns in ``ncol`` order."""
    order = grid.column_index()  # (ncol,) flat (face, y, x) of each column
    centre = grid.xyz.reshape(-1, 3)[order]  # (ncol, 3)
    corner = grid.corners.reshape(-1, 4, 3)[order]  # (ncol, 4, 3), counter-clockwise
    lat, lon = xyz_to_latlon(centre)
    corner_lat, corner_lon = xyz_to_latlon(corner)
    # a corner on a pole has no longitude of its own: TempestRemap gives it the cell centre's;
    # one on the meridian 0 is written 360 in a cell east of 180 (its centre's side)
    corner_lon = np.where(np.abs(corner[..., 2]) > POLE, lon[:, None], corner_lon)
    corner_lon = np.where(corner_lon > 360.0 - SNAP, 0.0, corner_lon)
    corner_lon = np.where((corner_lon < SNAP) & (lon[:, None] > 180.0), 360.0, corner_lon)
    deg = {"units": "degrees"}
    size = ("grid_size",)
    return {
        "grid_area": (size, grid.area.reshape(-1)[order], {"units": "radians^2"}),
        "grid_center_lat": (size, lat, deg),
        "grid_center_lon": (size, lon, deg),
        "grid_corner_lat": (("grid_size", "grid_corners"), corner_lat, deg),
        "grid_corner_lon": (("grid_size", "grid_corners"), corner_lon, deg),
        "grid_imask": (size, np.ones(order.size, np.int32), {}),
        "grid_dims": (("grid_rank",), np.array([order.size], np.int32), {}),
    }


def write_scrip(grid: PhysicsGrid, path: str | Path, overwrite: bool = False) -> Path:
    """Write ``grid``'s SCRIP file at ``path``. An existing file is refused unless
    ``overwrite``; the file is written beside it and renamed, so a failed write leaves no
    partial file and an overwritten one is replaced whole."""
    import h5netcdf

    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists: choose another output or overwrite it")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path}: directory {path.parent} does not exist")
    partial = path.with_name(f".{path.name}.partial")
    arrays = scrip_arrays(grid)
    try:
        with h5netcdf.File(partial, "w") as f:
            f.dimensions = {"grid_size": arrays["grid_area"][1].size, "grid_corners": 4}
            f.dimensions["grid_rank"] = 1
            f.attrs.update(FILE_ATTRS | {"title": f"{grid.name} (screamcast, E3SM ncol order)"})
            for name, (dims, values, attrs) in arrays.items():
                var = f.create_variable(name, dims, data=values)
                var.attrs.update(attrs)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
