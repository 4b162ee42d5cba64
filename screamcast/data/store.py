# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Open a cubed-sphere zarr store (v2 or v3), locally or on S3, and validate it.

Everything that can be wrong with a store is reported here, before any training step or
rollout step runs, with a message that names the store, the variable or dimension and what
was expected. Remote stores go through s3fs (:mod:`screamcast.data.remote`).
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER
from screamcast.data.channels import ChannelError, expand, with_channels
from screamcast.data.remote import StoreError, with_retries, zarr_store
from screamcast.data.stacked import unstack
from screamcast.data.store_axes import is_latlon, validate_latlon, validate_time
from screamcast.grid.cubed_sphere import CubedSphereGrid
from screamcast.grid.ncol import (
    TOLERANCE_CELLS,
    columns_to_grid,
    ncol_to_grid_index,
    position_tolerance,
    worst_distance,
)
from screamcast.grid.physics import PhysicsGrid

NATIVE_DIMS = ("time", "face", "y", "x")


def open_store(
    url: str | Path,
    storage_options: dict | None = None,
    variables: Sequence[str] = (),
    static_variables: Sequence[str] = (),
    n: int | None = None,
    retries: int = 3,
    latlon: bool = False,
    assume_grid: bool = False,
    pg: int = 2,
    levels: Mapping[str, Sequence[int]] | None = None,
) -> xr.Dataset:
    """Open and validate a store; returns a lazy dataset in the native ``(time, face, y, x)``.

    ``variables`` must be time-dependent, ``static_variables`` ``(face, y, x)``; ``n`` is the
    configured face size (inferred when None). A column store ``(time, ncol)`` is mapped onto
    the grid through :mod:`screamcast.grid.ncol` (in memory: convert large ones once with
    :func:`convert_ncol_store`). ``latlon=True`` also accepts a regular ``(time, lat, lon)``
    store (a nudging reference), returned as it is after :func:`validate_latlon`.
    ``assume_grid``: accept a cube store without lat/lon coordinates as on the grid; ``pg``:
    cells per element edge of the physics grid when the store's attrs do not name its grid.
    A 3-D variable among ``variables`` stands for its channels (:mod:`screamcast.data.channels`,
    ``levels`` a subset per variable), which the returned dataset holds as 2-D variables:
    :func:`~screamcast.data.channels.expand` gives their names.
    """
    url = str(url)
    store = zarr_store(url, storage_options, retries)
    ds = _open_zarr(store, url, retries)
    where = f"store {url}"
    try:
        if "ncol" in ds.dims:  # the column kind: mapped onto the grid first
            ds = ncol_to_native(ds, store_grid(ds, url, n, pg), name=url)
        variables = expand(ds, variables, levels, where)
        static_variables = expand(ds, static_variables, levels, where)
        ds = with_channels(ds, [*variables, *static_variables], where)
    except ChannelError as err:
        raise StoreError(str(err)) from None
    if latlon and is_latlon(ds):  # the lat-lon kind, as it is
        validate_latlon(ds, url, variables)
    else:  # the cube kind (or a column store now on the cube)
        grid = validate(ds, url, variables, static_variables, n, assume_grid, pg)
        if grid is not None:
            ds.attrs["grid"] = grid.name
    ds.attrs["screamcast_url"] = url
    return ds


def _open_zarr(store, url: str, retries: int) -> xr.Dataset:
    """The zarr store, lazily, its stack (if any) as variables; refused when empty or still
    being ingested."""

    def open_lazily() -> xr.Dataset:
        with warnings.catch_warnings():  # v3 stores have no consolidated metadata: expected
            warnings.filterwarnings("ignore", "Failed to open Zarr store with consolidated")
            return xr.open_zarr(store, consolidated=None, chunks=None, decode_times=DECODER)

    try:
        ds = with_retries(open_lazily, url, retries)
    except Exception as err:
        raise StoreError(
            f"store {url} cannot be opened as zarr: {type(err).__name__}: {err}"
        ) from err
    ds = unstack(ds)  # a stacked store (data.stacked): its variables, as views of the stack
    if not ds.data_vars:
        raise StoreError(f"store {url} is empty: it has no variables")
    if ds.attrs.get("ingest_complete") is False:
        raise StoreError(
            f"store {url} is still being written by screamcast-ingest (or its ingestion was "
            "killed): run the same ingestion command again to finish it"
        )
    return ds


def ingestion_note(url: str, storage_options, time) -> str:
    """Why an ingested store holds NaN at ``time``, as its ingestion recorded it (a time
    missing from the history files, or fill values in them), and what to do; "" when it
    recorded nothing there."""
    import zarr

    try:
        attrs = dict(zarr.open_group(zarr_store(url, storage_options), mode="r").attrs)
    except Exception:  # the message is a courtesy: never mask the original error
        return ""
    t = str(time)
    fix = "leave it out of data.train_range / data.valid_range, or fix the files and re-ingest"
    if t in attrs.get("missing_times", []):
        return (
            f"; the ingestion recorded {t} as missing from the history files (--allow-gaps "
            f"filled it with NaN): {fix}"
        )
    bad = [v for v, e in (attrs.get("non_finite") or {}).items() if t in e.get("times", [])]
    if bad:
        return f"; the ingestion found NaN / fill values at {t} in {', '.join(bad)}: {fix}"
    return ""


def first_non_finite(x: np.ndarray, url: str, var: str, times=None, t0: int = 0):
    """``(message, time or None)`` naming the first non-finite value of ``x`` (``([t,] 6, n,
    n)``, the first at time index ``t0`` of the store's ``times``); None where all are
    finite. The caller adds what to do (:func:`ingestion_note` at that time)."""
    finite = np.isfinite(x)
    if finite.all():
        return None
    where = np.argwhere(~finite)[0]
    f, y, x_ = (int(i) for i in where[-3:])
    t = None if times is None else t0 + int(where[0])
    when = "" if t is None else f" at time index {t} ({times[t]})"
    message = (
        f"store {url}: non-finite value in '{var}'{when}, face {f}, face pixel (y={y}, x={x_})"
    )
    return message, None if t is None else times[t]


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
    variables, face size and grid. ``data``'s variable lists are resolved in place: a 3-D
    variable becomes its channels (``T_mid`` -> ``T_mid[0]``, ...), the names the network,
    statistics and checkpoints use."""
    ds = open_store(
        data.url,
        data.storage_options,
        list(data.prognostic) + list(data.diagnostic),
        list(data.static),
        data.n,
        retries,
        assume_grid=data.assume_grid,
        pg=data.pg,
        levels=data.levels,
    )
    for key in ("prognostic", "diagnostic", "static"):
        setattr(data, key, expand(ds, list(getattr(data, key)), data.levels, f"store {data.url}"))
    return ds


def validate(
    ds: xr.Dataset,
    name: str,
    variables: Sequence[str] = (),
    static_variables: Sequence[str] = (),
    n: int | None = None,
    assume_grid: bool = False,
    pg: int = 2,
) -> PhysicsGrid | None:
    """Raise :class:`StoreError` naming ``name`` and what is wrong; see :func:`open_store`.
    Returns the store's grid (None for a store without faces)."""
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
    grid = store_grid(ds, name, n, pg) if "y" in ds.sizes else None
    if grid is not None and (variables or static_variables):
        _check_grid(ds, name, grid, assume_grid)
    if variables:
        validate_time(ds, name)
    return grid


def store_grid(ds: xr.Dataset, name: str, n: int | None = None, pg: int = 2) -> PhysicsGrid:
    """The physics grid a store is on: its ``grid`` attr when that names one (``ne24pg2``), or
    EAM's ``ne``/``fv_nphys`` attrs, else ``ne<n/pg>pg<pg>`` of its face size. A configured face
    size ``n`` that differs is refused."""
    size = ds.sizes["y"] if "y" in ds.sizes else int(round(np.sqrt(ds.sizes["ncol"] / 6)))
    attr = str(ds.attrs.get("grid", ""))
    if attr.startswith("ne") and "pg" in attr:
        grid = PhysicsGrid.from_name(attr)
    elif "ne" in ds.attrs and "fv_nphys" in ds.attrs:
        grid = PhysicsGrid(int(ds.attrs["ne"]), int(ds.attrs["fv_nphys"]))
    else:
        try:
            grid = PhysicsGrid.for_face_size(size, pg)
        except ValueError as err:
            raise StoreError(f"store {name}: {err}") from None
    if grid.n != size:
        raise StoreError(
            f"store {name}: its attrs say grid {grid.name} (faces of {grid.n} cells), but its "
            f"faces have {size} cells"
        )
    if n is not None and grid.n != n:
        raise StoreError(
            f"store {name}: face size is {grid.n}, but the configured grid has n={n} (the store "
            f"is on {grid.name})"
        )
    return grid


def _check_grid(ds: xr.Dataset, name: str, grid: PhysicsGrid, assume_grid: bool) -> None:
    """The store's ``lat`` and ``lon`` must be the grid's cell centres, cell by cell, to a
    small fraction of a cell (:func:`~screamcast.grid.ncol.position_tolerance`).

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
            "grid",
            option="assume_grid",
        )
    lat, lon = ds["lat"].values, ds["lon"].values
    worst, dist = worst_distance(grid.xyz, lat, lon)
    if dist > position_tolerance(grid, lat.dtype):
        cell = tuple(int(i) for i in np.unravel_index(worst, grid.shape))
        equiangular = worst_distance(CubedSphereGrid(grid.n).xyz, lat, lon)[1] < 1e-9
        hint = (
            f": these are the centres of the equiangular cubed sphere n={grid.n}, which "
            "screamcast wrote before it used E3SM's grid; regenerate the store"
            if equiangular
            else ": another grid, face order or orientation"
        )
        raise StoreError(
            f"store {name}: the cell at (face, y, x) = {cell} lies {np.degrees(dist):.3g} degrees "
            f"({dist / grid.cell_width():.3g} cell widths) from that cell of {grid.name} (HOMME "
            f"face order, tolerance {TOLERANCE_CELLS:g} cell widths){hint}"
        )


def dataset_grid(ds: xr.Dataset) -> PhysicsGrid:
    """The grid of a dataset :func:`open_store` returned (it records the grid's name)."""
    return PhysicsGrid.from_name(ds.attrs["grid"])


def time_step(ds: xr.Dataset) -> dt.timedelta:
    """The store's step, in its own calendar (zero for a single time)."""
    t = ds["time"].values
    return t[1] - t[0] if t.size > 1 else dt.timedelta(0)


def ncol_to_native(ds: xr.Dataset, grid: PhysicsGrid, name: str = "store") -> xr.Dataset:
    """A column-layout dataset (E3SM's ``ncol`` order) on the native grid, in memory:
    ``(time, ncol)`` -> ``(time, face, y, x)``, and a level dim before or after ``ncol``
    (``(time, lev, ncol)``, EAM; ``(time, ncol, lev)``, EAMxx) -> ``(time, lev, face, y, x)``.
    Variables without ``ncol`` (e.g. ``hyai``) are kept as they are."""
    index = ncol_to_grid_index(grid, ds["lat"].values, ds["lon"].values, name=name)
    out = {}
    for var, da in ds.data_vars.items():
        if "ncol" not in da.dims:
            if var not in ("lat", "lon", "area"):
                out[var] = da
            continue
        extra = [d for d in da.dims if d not in ("time", "ncol")]
        if len(extra) > 1:
            raise StoreError(
                f"store {name}: variable '{var}' has dims {da.dims}: more than one dim besides "
                f"time and ncol ({', '.join(extra)}); split it into variables of one level dim"
            )
        order = [d for d in ("time", *extra) if d in da.dims]
        values = da.transpose(*order, "ncol").values  # (time?, lev?, ncol)
        out[var] = ((*order, "face", "y", "x"), columns_to_grid(values, index, grid.n), da.attrs)
    coords = {
        "lat": (NATIVE_DIMS[1:], grid.lat, {"units": "degrees_north"}),
        "lon": (NATIVE_DIMS[1:], grid.lon, {"units": "degrees_east"}),
        "area": (NATIVE_DIMS[1:], grid.area, {"units": "sr"}),
    }
    coords |= {c: ds[c].variable for c in ds.coords if "ncol" not in ds[c].dims}
    return xr.Dataset(out, coords=coords, attrs=ds.attrs | {"grid": grid.name})


def convert_ncol_store(
    src: str, dst: str | Path, n: int | None = None, block: int = 24, pg: int = 2
) -> Path:
    """Write a native-layout copy of a column store, ``block`` times at a time."""
    ds = xr.open_zarr(zarr_store(src), chunks=None, decode_times=DECODER)
    grid = store_grid(ds, src, n, pg)
    dst = Path(dst)
    for b0 in range(0, ds.sizes.get("time", 1), block):
        part = ds.isel(time=slice(b0, b0 + block)) if "time" in ds.dims else ds
        native = ncol_to_native(part.load(), grid, name=src)
        if b0 == 0:
            n_ = grid.n
            enc = {
                v: {"chunks": (1,) * (native[v].ndim - 2) + (n_, n_)}
                for v in native.data_vars
                if "time" in native[v].dims
            }
            native.to_zarr(dst, mode="w-", encoding=enc)
        else:
            keep = [v for v in native.data_vars if "time" in native[v].dims]
            native[keep].drop_vars(["lat", "lon", "area"]).to_zarr(dst, append_dim="time")
    return dst
