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
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER, calendar_of, seconds
from screamcast.grid.ncol import NcolMismatchError, ncol_to_grid_index
from screamcast.grid.physics import PhysicsGrid
from screamcast.ingest.errors import IngestError
from screamcast.ingest.locations import expand_sources

COORDS = {"lat", "lon", "area"}
HYBRID = ("hyai", "hybi")


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
        check_not_truncated(url)
        return xr.open_dataset(url, decode_times=DECODER, cache=False)
    except IngestError:
        raise
    except Exception as err:
        raise IngestError(f"{url} cannot be read: {type(err).__name__}: {err}") from err


def check_not_truncated(path: str, name: str | None = None) -> None:
    """Refuse a classic (CDF1/2/5) netCDF file shorter than its header says: the netCDF
    library would read its missing data as fill values, without an error."""
    from screamcast.ingest.netcdf3 import expected_size

    actual = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(1 << 20)
        want = expected_size(head)
        if want is None and head[:3] == b"CDF" and actual > len(head):  # a header over 1 MiB
            f.seek(0)
            want = expected_size(f.read(min(actual, 64 << 20)))
    if want is not None and actual < want:
        raise IngestError(
            f"{name or path} is truncated: {actual} bytes, but its netCDF header describes "
            f"{want} ({want - actual} bytes of data missing; the file was cut short, e.g. by "
            "an interrupted copy or a full disk): copy it again"
        )


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
    sources_state: list = field(default_factory=list)  # per file: bytes and times when planned

    @property
    def step(self):
        return self.times[1] - self.times[0] if len(self.times) > 1 else None


def scan(
    sources: list[str],
    variables: list[str] | None = None,
    storage_options: dict | None = None,
    pg: int = 2,
    allow_gaps: bool = False,
    exclude: str | None = None,
    surface_pressure: bool = False,
) -> Catalogue:
    """Open every file once (metadata only), check them against each other, sort by time.

    ``surface_pressure``: layers are made, so the first file's ``PS`` (or ``ps``) is needed
    in every file too; ``exclude``: the canonical output, skipped by globs."""
    files = expand_sources(sources, storage_options, exclude)
    metas = [_metadata(url, storage_options) for url in files]
    _check_one_calendar(metas)
    metas.sort(key=lambda m: m["times"][0])
    first = metas[0]
    grid, index = _grid(first, pg)
    chosen = _chosen(variables, metas)
    needs = tuple(v for v in ("PS", "ps") if v in first["dims"])[:1] if surface_pressure else ()
    for m in metas:
        _check_same_grid(m, first)
        _check_like_first(m, first, chosen, needs)
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
        sources_state=[m["state"] for m in metas],
    )


def _check_one_calendar(metas: list[dict]) -> None:
    """Every file on one calendar (checked before sorting: times of two calendars do not
    compare)."""
    by = Counter(m["calendar"] for m in metas)
    if len(by) > 1:
        usual = by.most_common(1)[0][0]
        odd = [f"{m['url']} ({m['calendar']})" for m in metas if m["calendar"] != usual]
        raise IngestError(
            f"{', '.join(odd[:3])}{' ...' if len(odd) > 3 else ''}: on another calendar than "
            f"the run's other {by[usual]} files ({usual}): one run, one calendar"
        )


def _chosen(variables: list[str] | None, metas: list[dict]) -> list[str]:
    """The variables to ingest: those named (each a field on the physics grid) or every
    ``ncol`` field of the first file."""
    first = metas[0]
    fields = [v for v, dims in first["dims"].items() if "ncol" in dims and v not in COORDS]
    if not variables:
        return fields
    for v in variables:
        if v not in first["dims"] and all(v not in m["dims"] for m in metas):
            raise IngestError(
                f"no input file has a variable '{v}' (the fields on the physics grid are: "
                f"{', '.join(fields)})"
            )
        if v in first["dims"] and ("ncol" not in first["dims"][v] or v in COORDS):
            raise IngestError(
                f"'{v}' is not a field on the physics grid (dims {first['dims'][v]}, no 'ncol'"
                f"{'; a coordinate' if v in COORDS else ''}): choose among {', '.join(fields)}"
            )
    return list(variables)


def _check_like_first(m: dict, first: dict, chosen: list[str], needs: tuple[str, ...]) -> None:
    """A file holds every chosen (and needed) variable with the first file's dims, level
    sizes and values, units, and vertical coefficients; refused naming the file and what
    differs."""
    where = f"{m['url']} differs from {first['url']}"
    for v in [*chosen, *needs]:
        if v not in m["dims"]:
            why = "" if v in chosen else " (needed for --layers)"
            raise IngestError(f"{m['url']} has no variable '{v}'{why}; {first['url']} has it")
        if v not in first["dims"]:
            raise IngestError(f"{first['url']} has no variable '{v}'; {m['url']} has it")
        if m["dims"][v] != first["dims"][v]:
            raise IngestError(f"{where}: '{v}' has dims {m['dims'][v]}, not {first['dims'][v]}")
        for d in m["dims"][v]:
            if d not in ("time", "ncol") and m["sizes"][d] != first["sizes"][d]:
                raise IngestError(
                    f"{where}: '{v}' has {m['sizes'][d]} '{d}' levels, not {first['sizes'][d]}"
                )
        units = m["attrs"][v].get("units"), first["attrs"][v].get("units")
        if units[0] != units[1]:
            raise IngestError(f"{where}: '{v}' is in units {units[0]!r}, not {units[1]!r}")
    for d, (values, _) in m["level_coords"].items():
        want = first["level_coords"].get(d, (values,))[0]
        if not np.array_equal(values, want):
            raise IngestError(f"{where}: its '{d}' values {_short(values)} are not {_short(want)}")
    for k in (*HYBRID, "P0"):
        a, b = m["hybrid"].get(k), first["hybrid"].get(k)
        if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
            raise IngestError(
                f"{where}: its vertical coefficient '{k}' is {_short(a)}, not {_short(b)}"
            )


def _short(values) -> str:
    if values is None:
        return "absent"
    v = np.atleast_1d(np.asarray(values))
    text = ", ".join(f"{x:g}" for x in v[:4])
    return f"[{text}{', ...' if v.size > 4 else ''}]"


def _metadata(url: str, storage_options) -> dict:
    ds = open_source(url, storage_options)
    if "ncol" not in ds.dims:
        raise IngestError(f"{url} has no 'ncol' dim: not an E3SM physics-grid history file")
    if "time" not in ds.coords or ds.sizes["time"] == 0:
        raise IngestError(f"{url} has no times")
    t = ds["time"].values
    if t.dtype.kind not in "MO":
        raise IngestError(f"{url}: 'time' is not CF time (units {ds['time'].attrs.get('units')!r})")
    t = round_to_second(t)
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
        "sizes": dict(ds.sizes),
        "attrs": {v: dict(ds[v].attrs) for v in ds.data_vars},
        "lat": ds["lat"].values,
        "lon": ds["lon"].values,
        "ne": ds.attrs.get("ne"),
        "pg": ds.attrs.get("fv_nphys"),
        "hybrid": hybrid,
        "level_coords": level_coords,
    }
    ds.close()
    meta["state"] = source_state(url, t, storage_options)
    return meta


def source_state(url: str, times: np.ndarray, storage_options=None) -> dict:
    """What a file was when the store was planned: its size and its times (a file that grows
    or changes afterwards is found by comparing)."""
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
        size = int(fs.du(path)) if fs.isdir(path) else int(fs.size(path))
    except (OSError, ValueError):  # pragma: no cover - a file that vanished after opening
        size = -1
    return {
        "file": url,
        "bytes": size,
        "times": len(times),
        "first": str(times[0]),
        "last": str(times[-1]),
    }


def round_to_second(times: np.ndarray) -> np.ndarray:
    """Times to the nearest second: EAM writes times as float days, whose decoding lands a
    few microseconds off (``2020-02-27 01:59:59.999996`` for 02:00)."""
    if times.dtype.kind == "M":
        half = np.timedelta64(500_000, "us")
        return (times.astype("datetime64[us]") + half).astype("datetime64[s]").astype(times.dtype)
    out = []
    for t in times:
        us = t.microsecond
        if us:
            t = t + dt.timedelta(microseconds=(1_000_000 - us) if us >= 500_000 else -us)
        out.append(t)
    return np.array(out, dtype=object)


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
    # the run's step: the most common one (a single file off the step must not set it)
    count = Counter(steps)
    step = min(count, key=lambda s: (-count[s], s))
    for k, t in enumerate(times):
        off = seconds(t - times[0]) % step
        if off:
            url, (f, _) = metas[where[k][0]]["url"], where[k]
            own = ", ".join(str(x) for x in metas[f]["times"][:3])
            raise IngestError(
                f"{url}: time {t} is off the run's {step / 3600:g} h step (it is "
                f"{off / 3600:g} h after a step of the run that starts at {times[0]}; the "
                f"file's times: {own}{' ...' if len(metas[f]['times']) > 3 else ''}): every "
                "file must be on the run's step (--allow-gaps fills missing steps, it never "
                "changes the step)"
            )
    full, full_where, missing = [times[0]], [where[0]], []
    for k, s in enumerate(steps):
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
