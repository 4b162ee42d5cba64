# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Open a cubed-sphere zarr store (v2 or v3), locally or on S3, and validate it.

Everything that can be wrong with a store is reported here, before any training step or
rollout step runs, with a message that names the store, the variable or dimension and what
was expected. Remote stores go through s3fs (:mod:`screamcast.data.remote`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.remote import StoreError, with_retries, zarr_store
from screamcast.grid.cubed_sphere import CubedSphereGrid, latlon_to_xyz
from screamcast.grid.ncol import columns_to_grid, ncol_to_grid_index

NATIVE_DIMS = ("time", "face", "y", "x")
LATLON_DIMS = ("time", "lat", "lon")


def open_store(
    url: str | Path,
    storage_options: dict | None = None,
    variables: Sequence[str] = (),
    static_variables: Sequence[str] = (),
    n: int | None = None,
    retries: int = 3,
    latlon: bool = False,
    assume_grid: bool = False,
) -> xr.Dataset:
    """Open and validate a store; returns a lazy dataset in the native ``(time, face, y, x)``.

    ``variables`` must be time-dependent, ``static_variables`` ``(face, y, x)``; ``n`` is the
    configured face size (inferred when None). A column store ``(time, ncol)`` is mapped onto
    the grid through :mod:`screamcast.grid.ncol` (in memory: convert large ones once with
    :func:`convert_ncol_store`). ``latlon=True`` also accepts a regular ``(time, lat, lon)``
    store (a nudging reference), returned as it is after :func:`validate_latlon`.
    ``assume_grid``: accept a cube store without lat/lon coordinates as on the grid.
    """
    url = str(url)
    store = zarr_store(url, storage_options, retries)

    def open_lazily() -> xr.Dataset:
        with warnings.catch_warnings():  # v3 stores have no consolidated metadata: expected
            warnings.filterwarnings("ignore", "Failed to open Zarr store with consolidated")
            return xr.open_zarr(store, consolidated=None, chunks=None)

    try:
        ds = with_retries(open_lazily, url, retries)
    except Exception as err:
        raise StoreError(
            f"store {url} cannot be opened as zarr: {type(err).__name__}: {err}"
        ) from err
    if not ds.data_vars:
        raise StoreError(f"store {url} is empty: it has no variables")
    if latlon and "lat" in ds.dims and "lon" in ds.dims:
        validate_latlon(ds, url, variables)
        ds.attrs["screamcast_url"] = url
        return ds
    if "ncol" in ds.dims:
        ds = ncol_to_native(ds, n, name=url)
    validate(ds, url, variables, static_variables, n, assume_grid)
    ds.attrs["screamcast_url"] = url
    return ds


def describe_non_finite(
    fields: np.ndarray, names: Sequence[str], where: str, dims: str = "(face, y, x)"
) -> str | None:
    """A sentence naming the first variable of ``fields (V, ...)`` with NaN/Inf, how many it
    has and where the first one is; None when every value is finite."""
    for v, name in enumerate(names):
        bad = ~np.isfinite(fields[v])
        if bad.any():
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            return (
                f"{where}: variable '{name}' has {int(bad.sum())} non-finite values, the "
                f"first at {dims} = {pos}: {fields[v][pos]}"
            )
    return None


def open_configured(data, retries: int = 3) -> xr.Dataset:
    """The store a :class:`~screamcast.config.DataConfig` names, opened and validated for its
    variables, face size and grid."""
    variables = list(data.prognostic) + list(data.diagnostic)
    return open_store(
        data.url,
        data.storage_options,
        variables,
        list(data.static),
        data.n,
        retries,
        assume_grid=data.assume_grid,
    )


def validate(
    ds: xr.Dataset,
    name: str,
    variables: Sequence[str] = (),
    static_variables: Sequence[str] = (),
    n: int | None = None,
    assume_grid: bool = False,
) -> None:
    """Raise :class:`StoreError` naming ``name`` and what is wrong; see :func:`open_store`."""
    have = sorted(ds.data_vars)
    for var in (*variables, *static_variables):
        if var not in ds:
            raise StoreError(f"store {name} has no variable '{var}' (it has: {', '.join(have)})")
    for var, dims in [(v, NATIVE_DIMS) for v in variables] + [
        (v, NATIVE_DIMS[1:]) for v in static_variables
    ]:
        if ds[var].dims != dims:
            raise StoreError(
                f"store {name}: variable '{var}' has dims {ds[var].dims}, expected {dims}"
            )
    if "face" in ds.sizes and ds.sizes["face"] != 6:
        raise StoreError(f"store {name}: dimension 'face' has size {ds.sizes['face']}, expected 6")
    if "y" in ds.sizes and ds.sizes.get("x") != ds.sizes["y"]:
        raise StoreError(f"store {name}: faces are {ds.sizes['y']}x{ds.sizes.get('x')}, not square")
    if n is not None and "y" in ds.sizes and ds.sizes["y"] != n:
        raise StoreError(
            f"store {name}: face size is {ds.sizes['y']}, but the configured grid has n={n}"
        )
    if "y" in ds.sizes and (variables or static_variables):
        _check_grid(ds, name, assume_grid)
    if variables:
        _validate_time(ds, name)


def _check_grid(ds: xr.Dataset, name: str, assume_grid: bool) -> None:
    """The store's ``lat`` and ``lon`` must be the grid's cell centres, cell by cell.

    Checking ``lat`` alone let equatorial faces in another order and mirrored faces through
    (errors 3-5x larger, exit 0). A store without coordinates is refused unless the user
    declares that it is on the configured grid (``assume_grid``).
    """
    coords = [c for c in ("lat", "lon") if c in ds.variables and ds[c].dims == NATIVE_DIMS[1:]]
    if len(coords) < 2:
        if assume_grid:
            return
        raise StoreError(
            f"store {name} has no 'lat' and 'lon' coordinates (face, y, x), so its grid and "
            "face order cannot be checked: add them, or declare that it is on the configured "
            "grid (assume_grid)"
        )
    grid = CubedSphereGrid(ds.sizes["y"])
    xyz = latlon_to_xyz(ds["lat"].values.astype(float), ds["lon"].values.astype(float))
    chord = np.linalg.norm(xyz - grid.xyz, axis=-1)  # (6, n, n)
    worst = np.unravel_index(int(np.nanargmax(np.nan_to_num(chord, nan=np.inf))), chord.shape)
    degrees = float(np.degrees(2 * np.arcsin(min(np.nan_to_num(chord[worst], nan=2.0) / 2, 1.0))))
    if degrees > 1e-3:
        cell = 90.0 / grid.n  # a cell's width along the equator, in degrees
        raise StoreError(
            f"store {name}: the cell at (face, y, x) = {tuple(int(i) for i in worst)} lies "
            f"{degrees:.3g} degrees ({degrees / cell:.3g} cell widths) from that cell of the "
            f"equiangular cubed sphere n={grid.n} (HOMME face order): another grid, face order "
            "or orientation"
        )


def validate_latlon(ds: xr.Dataset, name: str, variables: Sequence[str]) -> None:
    """A regular lat-lon store: ``(time, lat, lon)`` variables, 1-D axes in degrees."""
    for var in variables:
        if var not in ds:
            have = ", ".join(sorted(ds.data_vars))
            raise StoreError(f"store {name} has no variable '{var}' (it has: {have})")
        if ds[var].dims != LATLON_DIMS:
            raise StoreError(
                f"store {name}: variable '{var}' has dims {ds[var].dims}, expected {LATLON_DIMS}"
            )
    for axis, bound in (("lat", 90.0), ("lon", 360.0)):
        if axis not in ds.coords or ds[axis].dims != (axis,):
            raise StoreError(f"store {name}: needs a 1-D coordinate '{axis}' in degrees")
        values = ds[axis].values.astype(float)
        units = str(ds[axis].attrs.get("units", ""))
        if "rad" in units.lower():
            raise StoreError(f"store {name}: coordinate '{axis}' is in {units}; degrees expected")
        if not np.all(np.isfinite(values)) or np.abs(values).max() > bound:
            raise StoreError(
                f"store {name}: coordinate '{axis}' must be finite degrees within "
                f"[-{bound:g}, {bound:g}], got {values.min():g} to {values.max():g}"
            )
        if values.size > 1 and not (np.all(np.diff(values) > 0) or np.all(np.diff(values) < 0)):
            raise StoreError(f"store {name}: coordinate '{axis}' is not strictly monotonic")
    _refuse_radians(ds, name)
    _validate_time(ds, name)


def _refuse_radians(ds: xr.Dataset, name: str) -> None:
    """Axes without a units attr that fit inside [-pi/2, pi/2] x [-pi, 2 pi] are radians far
    more often than a region of a few degrees: refuse them unless their units say degrees."""
    lat, lon = ds["lat"].values.astype(float), ds["lon"].values.astype(float)
    declared = any("degree" in str(ds[a].attrs.get("units", "")).lower() for a in ("lat", "lon"))
    small = np.abs(lat).max() <= np.pi / 2 + 1e-9 and -np.pi - 1e-9 <= lon.min()
    if not declared and small and lon.max() <= 2 * np.pi + 1e-9 and lat.size * lon.size > 4:
        raise StoreError(
            f"store {name}: coordinates 'lat' ({lat.min():.4g} to {lat.max():.4g}) and 'lon' "
            f"({lon.min():.4g} to {lon.max():.4g}) look like radians; degrees expected (if "
            "they are degrees, set their units attr to degrees_north / degrees_east)"
        )


def _validate_time(ds: xr.Dataset, name: str) -> None:
    if "time" not in ds.coords or ds.sizes.get("time", 0) == 0:
        raise StoreError(f"store {name} has no 'time' values")
    t = ds["time"].values
    if ds.sizes["time"] == 1:
        return
    dt = np.diff(t)
    bad = np.flatnonzero(dt <= np.timedelta64(0))
    if bad.size:
        i = int(bad[0])
        raise StoreError(
            f"store {name}: time is not increasing at index {i + 1} ({t[i]} then {t[i + 1]})"
        )
    irregular = np.flatnonzero(dt != dt[0])
    if irregular.size:
        i = int(irregular[0])
        raise StoreError(
            f"store {name}: irregular time step: {dt[i] / np.timedelta64(1, 'm'):g} min between "
            f"index {i} and {i + 1}, expected a constant {dt[0] / np.timedelta64(1, 'm'):g} min"
        )


def time_step(ds: xr.Dataset) -> np.timedelta64:
    t = ds["time"].values
    return t[1] - t[0] if t.size > 1 else np.timedelta64(0, "s")


def ncol_to_native(ds: xr.Dataset, n: int | None, name: str = "store") -> xr.Dataset:
    """A column-layout dataset ``(time, ncol)`` on the ``(time, face, y, x)`` grid, in memory."""
    ncol = ds.sizes["ncol"]
    n = n or int(round(np.sqrt(ncol / 6)))
    grid = CubedSphereGrid(n)
    index = ncol_to_grid_index(grid, ds["lat"].values, ds["lon"].values, name=name)
    out = {}
    for var, da in ds.data_vars.items():
        if "ncol" not in da.dims or da.dims[-1] != "ncol":
            continue
        dims = (*da.dims[:-1], "face", "y", "x")
        out[var] = (dims, columns_to_grid(da.values, index, n), da.attrs)
    coords = {"lat": (NATIVE_DIMS[1:], grid.lat), "lon": (NATIVE_DIMS[1:], grid.lon)}
    if "time" in ds.coords:
        coords["time"] = ds["time"].values
    return xr.Dataset(out, coords=coords, attrs=ds.attrs)


def convert_ncol_store(src: str, dst: str | Path, n: int | None = None, block: int = 24) -> Path:
    """Write a native-layout copy of a column store, ``block`` times at a time."""
    ds = xr.open_zarr(zarr_store(src), chunks=None)
    dst = Path(dst)
    for b0 in range(0, ds.sizes.get("time", 1), block):
        part = ds.isel(time=slice(b0, b0 + block)) if "time" in ds.dims else ds
        native = ncol_to_native(part.load(), n, name=src)
        if b0 == 0:
            n_ = native.sizes["y"]
            enc = {
                v: {"chunks": (1, 1, n_, n_)} for v in native.data_vars if "time" in native[v].dims
            }
            native.to_zarr(dst, mode="w-", encoding=enc)
        else:
            native.drop_vars(["lat", "lon"]).to_zarr(dst, append_dim="time")
    return dst
