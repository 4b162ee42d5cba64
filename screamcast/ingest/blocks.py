# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One time block of the ingestion: read, map onto the faces, coarsen, write, sum moments.

A block is a task of the Dask graph (:mod:`screamcast.ingest.run`): it opens only the files
that hold its times, so a worker's memory is bounded by the block (times x variables x
columns), never by the run's length or its number of files. Its writes cover whole chunks
(time chunks of 1), so blocks never share a chunk. Its moments (area-weighted sums per channel,
for the statistics) go into a marker file written last: a block with a marker is done.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

import numpy as np
import xarray as xr

from screamcast.data import stacked
from screamcast.data.stats import Moments
from screamcast.grid.ncol import columns_to_grid
from screamcast.ingest.layers import layer_means
from screamcast.ingest.sources import Catalogue, open_source

WINDS = "horiz_winds"  # EAMxx's (time, ncol, dim2, lev): u and v in dim2


@dataclass(frozen=True)
class Plan:
    """What every block needs: the catalogue, the output variables and how to make them."""

    catalogue: Catalogue
    outputs: dict[str, tuple[str, int | None]]  # output name -> (source variable, dim2 index)
    levels: dict[str, list[int] | None]  # 3-D output name -> source level indices kept
    level_dims: dict[str, str]  # 3-D output name -> its level dim in the store
    interfaces: list[int] | None  # --layers: interface indices
    surface_pressure: str | None  # "PS" / "ps" when layers are made
    store: str  # the output (a local path or s3:// URL)
    storage_options: dict | None
    marker_dir: str  # where the done-markers go
    block: int  # times per block
    layout: str = "stacked"  # "stacked" (screamcast.data.stacked) or "variables"
    dtype: str = "float32"  # the stack's storage: "float16" packs it (screamcast.data.packing)
    dtype_given: bool = False  # float16 asked for: a channel over its budget is refused
    budget: dict | None = None  # absolute float16 error budgets by variable (--budget)

    def blocks(self) -> list[tuple[int, int]]:
        T = len(self.catalogue.times)
        return [(a, min(a + self.block, T)) for a in range(0, T, self.block)]


def read_times(plan: Plan, t0: int, t1: int) -> dict[str, np.ndarray]:
    """Source variables (and the surface pressure) at times ``[t0, t1)``: ``(t, [lev,] ncol)``
    float64 with the level before ``ncol`` whatever the file's order; NaN at missing times."""
    cat = plan.catalogue
    names = sorted({src for src, _ in plan.outputs.values()} | {plan.surface_pressure} - {None})
    by_file: dict[int, list[tuple[int, int]]] = {}
    for k in range(t0, t1):
        f, i = cat.where[k]
        by_file.setdefault(f, []).append((k - t0, i))
    out: dict[str, np.ndarray] = {}
    for f, pairs in by_file.items():
        if f < 0:  # a gap (--allow-gaps): left NaN
            continue
        ds = open_source(cat.files[f], plan.storage_options)
        part = ds[names].isel(time=[i for _, i in pairs]).load()
        ds.close()
        for name in names:
            values = _level_before_ncol(part[name])  # (t, [dim2,] [lev,] ncol)
            if name not in out:
                out[name] = np.full((t1 - t0, *values.shape[1:]), np.nan)
            out[name][[k for k, _ in pairs]] = values
    return out


def _level_before_ncol(da: xr.DataArray) -> np.ndarray:
    """``(time, ncol, lev)`` (EAMxx) or ``(time, lev, ncol)`` (EAM) -> ``(time, ..., ncol)``."""
    rest = [d for d in da.dims if d not in ("time", "ncol")]
    return da.transpose("time", *rest, "ncol").values.astype(np.float64)


def transform(plan: Plan, raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Output variables ``(t, [level,] 6, n, n)`` float32 from :func:`read_times`' arrays."""
    cat = plan.catalogue
    dp = None
    if plan.interfaces is not None:
        h = cat.hybrid
        ps = raw[plan.surface_pressure][:, None]  # (t, 1, ncol)
        p = h["hyai"][:, None] * float(h["P0"]) + h["hybi"][:, None] * ps  # (t, L + 1, ncol)
        dp = np.diff(p, axis=1)  # (t, L, ncol): level thickness, top to bottom
    out = {}
    for name, (src, part) in plan.outputs.items():
        values = raw[src] if part is None else raw[src][:, part]  # (t, [lev,] ncol)
        if values.ndim == 3:
            if dp is not None:
                values = layer_means(values, dp, plan.interfaces)
            elif plan.levels.get(name) is not None:
                values = values[:, plan.levels[name]]
        mapped = columns_to_grid(values, cat.column_index, cat.grid.n)  # (t, [lev,] 6, n, n)
        out[name] = mapped.astype(np.float32)
    return out


def moments(fields: dict[str, np.ndarray], previous: dict | None, area: np.ndarray) -> dict:
    """Per channel ``{"level": [w, s1, s2], "change": [...]}`` of the block's times (changes
    from the time before the block too, when given, so the run's statistics equal one pass;
    missing times, all NaN, do not count)."""
    out = {}
    for name, values in fields.items():
        three_d = values.ndim == 5
        per_level = values if three_d else values[:, None]  # (t, L, 6, n, n)
        before = None
        if previous is not None:
            before = previous[name] if three_d else previous[name][:, None]
        for level in range(per_level.shape[1]):
            x = per_level[:, level]  # (t, 6, n, n)
            m, c = Moments(), Moments()
            ok = np.isfinite(x).all(axis=(1, 2, 3))
            if ok.any():
                m.add(x[ok], area)
            chained = x if before is None else np.concatenate([before[:, level], x])
            good = np.isfinite(chained).all(axis=(1, 2, 3))
            d = np.diff(chained, axis=0)[good[1:] & good[:-1]]
            if d.size:
                c.add(d, area)
            key = f"{name}[{level}]" if three_d else name
            out[key] = {"level": m.to_list(), "change": c.to_list()}
    return out


def process(plan: Plan, t0: int, t1: int) -> dict:
    """Block ``[t0, t1)``: read (with the time before it, for the changes), transform, write
    the store's region, then the marker; returns the moments and the bytes read."""
    start = max(t0 - 1, 0)
    raw = read_times(plan, start, t1)
    fields = transform(plan, raw)
    group = _group(plan)
    errors = _write(group, {k: v[t0 - start :] for k, v in fields.items()}, t0, t1)
    if plan.dtype != "float32":  # the statistics of what the store gives back
        fields = stacked.as_stored(group, fields)
    previous = {k: v[:1] for k, v in fields.items()} if start < t0 else None
    fields = {k: v[t0 - start :] for k, v in fields.items()}
    result = {
        "block": [t0, t1],
        "moments": moments(fields, previous, plan.catalogue.grid.area),
        "bytes_read": int(sum(v.size * 4 for v in raw.values())),  # float32 in the files
        "non_finite": non_finite(plan, raw, start, t0, t1),
    }
    if errors:
        result["precision"] = errors
    write_marker(plan, t0, result)
    time.sleep(float(os.environ.get("SCREAMCAST_INGEST_SLOW", "0")))  # tests: time to kill it
    return result


def non_finite(plan: Plan, raw: dict[str, np.ndarray], start: int, t0: int, t1: int) -> dict:
    """``{variable: [count, [time index, ...]]}`` of the NaN / fill values the files hold at
    times ``[t0, t1)`` (``raw`` starts at ``start``; times missing from the files skipped)."""
    out = {}
    for name, values in raw.items():
        bad = ~np.isfinite(values[t0 - start :]).reshape(t1 - t0, -1)  # (t, values)
        times = [
            int(t0 + k)
            for k in np.flatnonzero(bad.any(axis=1))
            if plan.catalogue.where[t0 + k][0] >= 0
        ]
        if times:
            out[name] = [int(bad[[k - t0 for k in times]].sum()), times]
    return out


def _group(plan: Plan):
    import zarr

    from screamcast.data.remote import writable

    return zarr.open_group(writable(plan.store, plan.storage_options), mode="r+")


def _write(group, fields: dict[str, np.ndarray], t0: int, t1: int) -> dict | None:
    """The block's times of every output: one write of the stack (every shard of these times
    written whole, once), or one per variable; a float16 stack's error per channel."""
    spec = group.attrs.get(stacked.ATTR)
    if spec is None:
        for name, values in fields.items():
            group[name][t0:t1] = values
        return None
    return stacked.write_stack(group, fields, t0)  # (t, C, 6, n, n), times t0 .. t1


def marker_path(plan: Plan, t0: int) -> str:
    return f"{plan.marker_dir}/block_{t0:09d}.json"


def write_marker(plan: Plan, t0: int, result: dict) -> None:
    """Written last, atomically (a rename locally; a single PUT on S3)."""
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    fs, path = fsspec.core.url_to_fs(marker_path(plan, t0), **(plan.storage_options or {}))
    data = json.dumps(result).encode()
    if isinstance(fs, LocalFileSystem):
        fs.makedirs(fs._parent(path), exist_ok=True)
        tmp = f"{path}.tmp"
        with fs.open(tmp, "wb") as f:
            f.write(data)
        fs.mv(tmp, path)
    else:
        fs.pipe_file(path, data)
