# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""History files as E3SM's atmosphere model (EAM) writes them, from fields on its physics grid.

A sigma-level model maps onto EAM's hybrid columns with ``hyai = hyam = 0``, ``hybi, hybm =
sigma`` and ``P0 = 1e5`` (``p = hyai P0 + hybi PS``), so :mod:`screamcast.ingest` takes the
files, pressure-weighted layers included, as it takes SCREAM's: CDF5 (``NETCDF3_64BIT_DATA``),
``(time, lev, ncol)`` and ``(time, ncol)`` fields in E3SM's column order, ``noleap`` times in
float days since ``0001-01-01`` and the ``ne`` / ``fv_nphys`` attrs.
"""

from __future__ import annotations

import os
from pathlib import Path

import cftime
import numpy as np
import xarray as xr

from screamcast import __version__
from screamcast.grid.physics import PhysicsGrid

UNITS = {"U": "m/s", "V": "m/s", "T": "K", "PS": "Pa"}
LONG_NAMES = {
    "U": "Zonal wind",
    "V": "Meridional wind",
    "T": "Temperature",
    "PS": "Surface pressure",
}
TIME_UNITS = "days since 0001-01-01 00:00:00"


def model_time(day: float) -> cftime.DatetimeNoLeap:
    """Simulated ``day`` (from 0001-01-01) as a ``noleap`` date."""
    return cftime.num2date(day, TIME_UNITS, calendar="noleap")


def write_file(
    path: str | Path,
    days: list[float],
    fields: list[dict[str, np.ndarray]],
    grid: PhysicsGrid,
    sigma_boundaries: np.ndarray,
    attrs: dict,
) -> Path:
    """One history file: ``fields[k]`` (``U, V, T (lev, ncol)``, ``PS (ncol)``, columns in
    E3SM's order) at simulated ``days[k]``; written beside and renamed, so a killed run
    never leaves a short file under the final name."""
    path = Path(path)
    order = grid.column_index()  # E3SM's column order
    sigma_mid = 0.5 * (sigma_boundaries[1:] + sigma_boundaries[:-1])
    data = {
        name: (("time", "lev", "ncol"), np.stack([f[name] for f in fields]).astype(np.float32))
        for name in ("U", "V", "T")
    }
    data["PS"] = (("time", "ncol"), np.stack([f["PS"] for f in fields]).astype(np.float32))
    zeros_i, zeros_m = np.zeros_like(sigma_boundaries), np.zeros_like(sigma_mid)
    data |= {
        "hyai": (("ilev",), zeros_i, {"long_name": "hybrid A coefficient at layer interfaces"}),
        "hybi": (("ilev",), sigma_boundaries, {"long_name": "hybrid B coefficient at interfaces"}),
        "hyam": (("lev",), zeros_m, {"long_name": "hybrid A coefficient at layer midpoints"}),
        "hybm": (("lev",), sigma_mid, {"long_name": "hybrid B coefficient at layer midpoints"}),
        "P0": ((), np.float64(1e5), {"units": "Pa", "long_name": "reference pressure"}),
        "area": (("ncol",), grid.area.reshape(-1)[order], {"units": "sr"}),
    }
    ds = xr.Dataset(
        data,
        coords={
            "time": ("time", [model_time(d) for d in days]),
            "lat": ("ncol", grid.lat.reshape(-1)[order], {"units": "degrees_north"}),
            "lon": ("ncol", grid.lon.reshape(-1)[order], {"units": "degrees_east"}),
            "lev": ("lev", 1000.0 * sigma_mid, {"units": "hPa", "long_name": "sigma * 1000"}),
            "ilev": ("ilev", 1000.0 * sigma_boundaries, {"units": "hPa"}),
        },
        attrs={"ne": grid.ne, "fv_nphys": grid.pg, "screamcast_version": __version__} | attrs,
    )
    for name in UNITS:
        ds[name].attrs = {"units": UNITS[name], "long_name": LONG_NAMES[name]}
    tmp = path.with_name(f".{path.name}.partial")
    enc = {"time": {"units": TIME_UNITS, "calendar": "noleap", "dtype": "float64"}}
    ds.to_netcdf(tmp, format="NETCDF3_64BIT_DATA", engine="netcdf4", encoding=enc)
    os.replace(tmp, path)
    return path
