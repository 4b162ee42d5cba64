# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The history files of a run: found, opened, checked and put in time order.

EAM and EAMxx write many files per run, each a slice of time: netCDF (CDF5 from EAM, which
needs the netCDF4 library; netCDF-4/HDF5) or zarr, local or on S3. Files are sorted by their
times, not their names; every problem (an unreadable file, another grid, a time that overlaps
or repeats, a gap, a missing variable, an unknown calendar) is an :class:`IngestError` naming
the file.
"""

from __future__ import annotations

import datetime as dt
import glob
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER, calendar_of, seconds
from screamcast.grid.ncol import NcolMismatchError, ncol_to_grid_index
from screamcast.grid.physics import PhysicsGrid

COORDS = {"lat", "lon", "area"}
HYBRID = ("hyai", "hybi")


class IngestError(ValueError):
    """Input the ingestion cannot take, named in the message."""


def expand_sources(sources: list[str], storage_options: dict | None = None) -> list[str]:
    """Local paths, globs and ``s3://`` URLs (globs too) -> the files, unordered."""
    out: list[str] = []
    for src in sources:
        if src.startswith("s3://"):
            import s3fs

            fs = s3fs.S3FileSystem(**(storage_options or {}))
            hits = ["s3://" + p for p in fs.glob(src)] if glob.has_magic(src) else [src]
        else:
            hits = sorted(glob.glob(src)) if glob.has_magic(src) else [src]
        if not hits:
            raise IngestError(f"{src}: no file matches")
        out += hits
    return out


def open_source(url: str, storage_options: dict | None = None) -> xr.Dataset:
    """A lazily opened history file (netCDF or zarr, local or S3), times in its calendar."""
    try:
        if url.rstrip("/").endswith(".zarr"):
            from screamcast.data.remote import zarr_store

            store = zarr_store(url, storage_options)
            return xr.open_zarr(store, consolidated=None, decode_times=DECODER, chunks=None)
        if url.startswith("s3://"):  # a local copy: CDF5 cannot be read from a stream
            import fsspec

            opts = {"s3": storage_options or {}}
            url = fsspec.open_local(f"simplecache::{url}", **opts)
        if not Path(url).exists():
            raise FileNotFoundError(url)
        return xr.open_dataset(url, decode_times=DECODER, cache=False)
    except Exception as err:
        raise IngestError(f"{url} cannot be read: {type(err).__name__}: {err}") from err


@dataclass
class Catalogue:
    """The run's files in time order and what every block needs to know about them."""

    files: list[str]
    times: np.ndarray  # (T,) cftime, every time of the run in order
    where: list[tuple[int, int]]  # per time: (file index, time index in that file)
    grid: PhysicsGrid
    column_index: np.ndarray  # (ncol,) flat (face, y, x) of each column
    calendar: str
    variables: dict[str, tuple[str, ...]]  # name -> dims (in the files)
    attrs: dict = field(default_factory=dict)  # per-variable attrs
    hybrid: dict = field(default_factory=dict)  # hyai, hybi, P0 when the files have them
    available: set = field(default_factory=set)  # every variable of the first file
    level_coords: dict = field(default_factory=dict)  # level dim -> (values, attrs)
    missing: list = field(default_factory=list)  # times absent from the files (--allow-gaps)

    @property
    def step(self):
        return self.times[1] - self.times[0] if len(self.times) > 1 else None


def scan(
    sources: list[str],
    variables: list[str] | None = None,
    storage_options: dict | None = None,
    pg: int = 2,
    allow_gaps: bool = False,
) -> Catalogue:
    """Open every file once (metadata only), check them against each other, sort by time."""
    files = expand_sources(sources, storage_options)
    metas = [_metadata(url, storage_options) for url in files]
    metas.sort(key=lambda m: m["times"][0])
    first = metas[0]
    grid, index = _grid(first, pg)
    chosen = variables or [
        v for v, dims in first["dims"].items() if "ncol" in dims and v not in COORDS
    ]
    for m in metas:
        _check_same_grid(m, first)
        for v in chosen:
            if v not in m["dims"]:
                raise IngestError(f"{m['url']} has no variable '{v}' (the run's other files do)")
        if m["calendar"] != first["calendar"]:
            raise IngestError(
                f"{m['url']} is on the {m['calendar']} calendar, {first['url']} on "
                f"{first['calendar']}: one run, one calendar"
            )
    times, where, missing = _timeline(metas, allow_gaps)
    return Catalogue(
        files=[m["url"] for m in metas],
        times=times,
        where=where,
        grid=grid,
        column_index=index,
        calendar=first["calendar"],
        variables={v: first["dims"][v] for v in chosen},
        attrs={v: first["attrs"][v] for v in chosen},
        hybrid=first["hybrid"],
        available=set(first["dims"]),
        level_coords=first["level_coords"],
        missing=missing,
    )


def _metadata(url: str, storage_options) -> dict:
    ds = open_source(url, storage_options)
    if "ncol" not in ds.dims:
        raise IngestError(f"{url} has no 'ncol' dim: not an E3SM physics-grid history file")
    if "time" not in ds.coords or ds.sizes["time"] == 0:
        raise IngestError(f"{url} has no times")
    t = ds["time"].values
    if t.dtype.kind not in "MO":
        raise IngestError(f"{url}: 'time' is not CF time (units {ds['time'].attrs.get('units')!r})")
    hybrid = {k: ds[k].values for k in (*HYBRID, "P0") if k in ds}
    dims = {d for v in ds.data_vars for d in ds[v].dims} - {"time", "ncol"}
    level_coords = {
        d: (ds[d].values, dict(ds[d].attrs)) if d in ds.coords else (np.arange(ds.sizes[d]), {})
        for d in dims
    }
    meta = {
        "url": url,
        "times": t,
        "calendar": calendar_of(t, url),
        "dims": {v: ds[v].dims for v in ds.data_vars},
        "attrs": {v: dict(ds[v].attrs) for v in ds.data_vars},
        "lat": ds["lat"].values,
        "lon": ds["lon"].values,
        "ne": ds.attrs.get("ne"),
        "pg": ds.attrs.get("fv_nphys"),
        "hybrid": hybrid,
        "level_coords": level_coords,
    }
    ds.close()
    return meta


def _grid(meta: dict, pg: int) -> tuple[PhysicsGrid, np.ndarray]:
    ncol = meta["lat"].size
    if meta["ne"] is not None and meta["pg"] is not None:
        grid = PhysicsGrid(int(meta["ne"]), int(meta["pg"]))
    else:
        n = int(round(np.sqrt(ncol / 6)))
        if 6 * n * n != ncol or n % pg:
            raise IngestError(f"{meta['url']}: {ncol} columns are no ne*pg{pg} cubed sphere")
        grid = PhysicsGrid.for_face_size(n, pg)
    try:
        return grid, ncol_to_grid_index(grid, meta["lat"], meta["lon"], name=meta["url"])
    except NcolMismatchError as err:
        raise IngestError(str(err)) from None


def _check_same_grid(meta: dict, first: dict) -> None:
    same = meta["lat"].shape == first["lat"].shape and np.array_equal(meta["lat"], first["lat"])
    if not (same and np.array_equal(meta["lon"], first["lon"])):
        raise IngestError(
            f"{meta['url']} is on another grid than {first['url']} ({meta['lat'].size} and "
            f"{first['lat'].size} columns, or other positions): one run, one grid"
        )


def _timeline(metas: list[dict], allow_gaps: bool):
    """Every time in order with its file; overlaps, repeats and gaps refused (gaps allowed
    with ``allow_gaps``: listed, filled with NaN in the store)."""
    times, where, seen = [], [], {}
    for f, m in enumerate(metas):
        for i, t in enumerate(m["times"]):
            if t in seen:
                raise IngestError(f"{m['url']}: time {t} repeats a time of {seen[t]}")
            if times and t < times[-1]:
                prev = metas[where[-1][0]]["url"]
                raise IngestError(
                    f"{m['url']}: time {t} overlaps {prev} (which reaches {times[-1]})"
                )
            times.append(t)
            where.append((f, i))
            seen[t] = m["url"]
    if len(times) < 2:
        return np.array(times, dtype=object), where, []
    steps = [seconds(b - a) for a, b in zip(times[:-1], times[1:], strict=True)]
    step = min(steps)
    full, full_where, missing = [times[0]], [where[0]], []
    for k, s in enumerate(steps):
        if s % step:
            url = metas[where[k + 1][0]]["url"]
            raise IngestError(f"{url}: time {times[k + 1]} is off the run's {step / 3600:g} h step")
        for j in range(1, int(s // step)):  # a gap of j - 1 steps
            gap = times[k] + j * dt.timedelta(seconds=step)
            if not allow_gaps:
                raise IngestError(
                    f"{metas[where[k + 1][0]]['url']}: times jump from {times[k]} to "
                    f"{times[k + 1]} ({s / 3600:g} h, the step is {step / 3600:g} h): a gap "
                    "(pass --allow-gaps to ingest it as missing times, filled with NaN)"
                )
            full.append(gap)
            full_where.append((-1, -1))
            missing.append(gap)
        full.append(times[k + 1])
        full_where.append(where[k + 1])
    return np.array(full, dtype=object), full_where, missing
