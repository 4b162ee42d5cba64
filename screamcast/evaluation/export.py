# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A rollout output or cube store in E3SM's own format: what ncremap, NCO, UXarray and E3SM's
diagnostics read without knowing screamcast.

- native: ``(time, [lev,] ncol)`` in the grid's exact column order
  (:meth:`~screamcast.grid.physics.PhysicsGrid.column_index`), with ``lat``/``lon``/``area``
  on ``ncol`` and the grid's ``ne``/``fv_nphys`` attrs, so its SCRIP file
  (``screamcast-grid scrip``) describes every column;
- lat-lon: ``(time, [lev,] lat, lon)`` by first-order conservative remapping
  (:mod:`screamcast.grid.conservative`), with cell bounds and areas.

CF-1.7 metadata, calendars and averages: :mod:`screamcast.evaluation.export_cf`. netCDF files
are named as EAMxx names its own, ``<prefix>.<YYYY-MM-DD-SSSSS>.nc`` (the file's first
time). Nothing is overwritten unless asked, and each file is written beside its name and
renamed, so a failed export leaves no half file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from screamcast.data.store import StoreError, dataset_grid, open_store
from screamcast.evaluation import export_cf as cf
from screamcast.grid.conservative import CubeToLatLonConservative
from screamcast.grid.ncol import grid_to_columns
from screamcast.grid.physics import PhysicsGrid

HYBRID = ("hyai", "hybi", "hyam", "hybm", "P0")  # carried when the source holds them
GEOMETRY = ("lat", "lon", "area")
FORMATS = ("netcdf", "zarr")
# the source's attrs that describe the source store itself, not the data: not copied
NOT_COPIED = ("title", "Conventions", "screamcast_url", "coordinates", "complete_steps", "grid")


@dataclass
class Source:
    """An opened store: ``ds`` native ``(time, [lev,] face, y, x)``, its complete times only;
    ``fields`` the time-dependent variables to export, ``statics`` the ``(face, y, x)`` ones."""

    ds: xr.Dataset
    grid: PhysicsGrid
    url: str
    fields: list[str]
    statics: list[str]


def _horizontal(da: xr.DataArray) -> bool:
    return da.dims[-3:] == ("face", "y", "x") and da.name not in GEOMETRY


def open_source(url: str, variables=(), storage_options=None) -> Source:
    """Open ``url`` with the package's reader (a cube store, a column store or a rollout
    output; a partial rollout output gives its complete steps) and pick ``variables`` (all
    of them when empty), refusing any it lacks by name."""
    ds = open_store(url, storage_options, [], (), None)
    steps = int(ds.attrs.get("complete_steps", ds.sizes.get("time", 0)))
    if "time" in ds.dims:
        if steps < 1:
            raise StoreError(f"store {url} holds no complete step: nothing to export")
        ds = ds.isel(time=slice(0, steps))
    have = [v for v in ds.data_vars if _horizontal(ds[v])]
    fields = [v for v in have if ds[v].dims[0] == "time"]
    statics = [v for v in have if "time" not in ds[v].dims]
    if variables:
        missing = [v for v in variables if v not in have]
        if missing:
            raise StoreError(
                f"store {url} has no variable {', '.join(map(repr, missing))} on its grid "
                f"(it has: {', '.join(sorted(have))})"
            )
        fields = [v for v in fields if v in variables]
        statics = [v for v in statics if v in variables]
    if not fields and not statics:
        raise StoreError(f"store {url} has no variable on its grid (face, y, x) to export")
    if not fields:
        raise StoreError(f"store {url}: {', '.join(statics)} hold no time: name a field too")
    return Source(ds, dataset_grid(ds), url, fields, statics)


class NativeLayout:
    """E3SM's columns: ``(..., 6, n, n) -> (..., ncol)`` in the grid's column order."""

    latlon = False

    def __init__(self, grid: PhysicsGrid):
        self.grid, self.index = grid, grid.column_index()
        self.dims, self.shape = ("ncol",), (self.index.size,)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return grid_to_columns(values, self.index)  # (..., ncol)

    def coords(self) -> dict:
        g, i = self.grid, self.index
        return {
            "lat": (
                "ncol",
                g.lat.reshape(-1)[i],
                {"units": "degrees_north", "long_name": "latitude"},
            ),
            "lon": (
                "ncol",
                g.lon.reshape(-1)[i],
                {"units": "degrees_east", "long_name": "longitude"},
            ),
            "area": (
                "ncol",
                g.area.reshape(-1)[i],
                {"units": "sr", "long_name": f"{g.name} grid areas"},
            ),
        }

    def attrs(self) -> dict:
        return {"ne": self.grid.ne, "fv_nphys": self.grid.pg, "grid": self.grid.name}


class LatLonLayout:
    """A regular ``nlat x nlon`` grid, cell edges every ``180/nlat`` degrees from the south
    pole and ``360/nlon`` east of 0, by first-order conservative remapping."""

    latlon = True

    def __init__(self, grid: PhysicsGrid, nlat: int, nlon: int):
        self.grid, self.remap = grid, CubeToLatLonConservative(grid, nlat, nlon)
        self.dims, self.shape = ("lat", "lon"), (nlat, nlon)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return self.remap(values).astype(values.dtype)  # (..., nlat, nlon)

    def coords(self) -> dict:
        r = self.remap
        return {
            "lat": (
                "lat",
                r.lat,
                {"units": "degrees_north", "standard_name": "latitude", "bounds": "lat_bnds"},
            ),
            "lon": (
                "lon",
                r.lon,
                {"units": "degrees_east", "standard_name": "longitude", "bounds": "lon_bnds"},
            ),
            "lat_bnds": (("lat", "nbnd"), r.lat_bounds, {"units": "degrees_north"}),
            "lon_bnds": (("lon", "nbnd"), r.lon_bounds, {"units": "degrees_east"}),
            "area": (("lat", "lon"), r.area, {"units": "sr", "long_name": "cell area"}),
        }

    def attrs(self) -> dict:
        nlat, nlon = self.remap.shape
        return {
            "grid": f"{nlat}x{nlon} lat-lon",
            "map_method": f"conservative from {self.grid.name}",
        }


def _period_mean(da: xr.DataArray, idx: np.ndarray, layout) -> np.ndarray:
    """``(1, [lev,] *layout)``: one period's mean of ``da``'s times, summed in float64 and
    stored as the source's dtype, on the layout."""
    values = da.isel(time=slice(int(idx[0]), int(idx[-1]) + 1)).values  # (T, [lev,] 6, n, n)
    mean = values.mean(axis=0, dtype=np.float64).astype(values.dtype)
    return layout(mean)[None]


def _lazy_means(da: xr.DataArray, periods: list, layout):
    """``(P, [lev,] *layout)`` as a dask array of one period a chunk: a file is written a
    period and a variable at a time, so memory stays one period's samples of one field."""
    import dask
    import dask.array as dsa

    shape = (1, *da.shape[1:-3], *layout.shape)
    mean = dask.delayed(_period_mean, pure=True)
    parts = [
        dsa.from_delayed(mean(da, idx, layout), shape=shape, dtype=da.dtype)
        for idx, _, _ in periods
    ]
    return dsa.concatenate(parts, axis=0)


def _dims(da: xr.DataArray, layout, timed: bool) -> tuple[str, ...]:
    """``(time, [lev,]) + layout`` dims: the level dim is the source's own."""
    levels = da.dims[1:-3] if timed else da.dims[:-3]
    return (("time",) if timed else ()) + tuple(levels) + layout.dims


def build(source: Source, layout, periods: list, average: str) -> xr.Dataset:
    """The export's dataset of ``periods`` (from :func:`export_cf.periods`)."""
    ds, out = source.ds, {}
    for var in source.fields:
        da = ds[var]
        values = _lazy_means(da, periods, layout)
        out[var] = (
            _dims(da, layout, True),
            values,
            cf.variable_attrs(var, da.attrs, average, layout.latlon),
        )
    for var in source.statics:
        da = ds[var]
        attrs = cf.variable_attrs(var, da.attrs, "none", layout.latlon)
        attrs.pop("cell_methods")  # not a time sample
        out[var] = (_dims(da, layout, False), layout(da.values), attrs)
    coords = layout.coords()
    for name, (dims, values, attrs, _) in cf.time_variables(
        [p[1:] for p in periods], average
    ).items():
        coords[name] = (dims, values, attrs)
    if average != "none":  # a period the source covers only in part says so by its count
        counts = np.array([len(p[0]) for p in periods], dtype="i4")
        coords["time_samples"] = (("time",), counts, {"long_name": "instants in each mean"})
    levels = {d for var in out for d in out[var][0]} - {"time", "nbnd", *layout.dims}
    coords |= {d: ds[d].variable for d in levels if d in ds.variables}
    written = {d for var in out for d in out[var][0]}
    hybrid = [h for h in HYBRID if h in ds.variables and set(ds[h].dims) <= written]
    out |= {h: ds[h].variable for h in hybrid}  # data variables, as EAM writes them
    keep = {k: v for k, v in ds.attrs.items() if k not in NOT_COPIED}
    attrs = {
        "Conventions": cf.CONVENTIONS,
        "title": f"screamcast export of {source.url}",
        "source": source.url,
        "averaging": average,
    } | layout.attrs()
    # netCDF has no boolean attribute (an ingested store's ingest_created was refused)
    copied = {k: int(v) if isinstance(v, bool) else v for k, v in keep.items()}
    attrs |= {f"source_{k}": v for k, v in copied.items() if isinstance(v, str | int | float)}
    return xr.Dataset(out, coords=coords, attrs=attrs)
