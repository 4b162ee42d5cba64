# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The ingested store: created whole up front, resumed, replaced only when asked, finished last.

Every array exists from the start (NaN until its block is written), so blocks only fill
regions. The store's ``ingest_options`` attr is the run's fingerprint: the same command finds
its own unfinished store and continues it; any other existing store is left alone unless
``--overwrite``. ``ingest_complete`` turns true last, after every block and the statistics:
:func:`screamcast.data.store.open_store` refuses a store that is still being written.
"""

from __future__ import annotations

import json

import numpy as np

from screamcast import __version__
from screamcast.data import stacked
from screamcast.data.calendar import encode
from screamcast.ingest.blocks import Plan
from screamcast.ingest.sources import IngestError

TITLE = "screamcast ingested E3SM history"


def writable(url: str, storage_options: dict | None = None):
    """A writable zarr store for a local path or an ``s3://`` URL."""
    import zarr

    if "://" not in url:
        return zarr.storage.LocalStore(url)
    return zarr.storage.FsspecStore.from_url(url, storage_options=storage_options or {})


def fingerprint(plan: Plan, options: dict) -> str:
    """What makes two ingestions the same: the sorted files and the options that shape data."""
    keep = {
        k: options[k]
        for k in ("variables", "layers", "levels", "block", "chunk", "pg", "layout", "shard")
    }
    return json.dumps({"files": plan.catalogue.files, **keep}, sort_keys=True)


def existing_state(url: str, storage_options, want: str) -> str:
    """``"absent"``, ``"resume"``, ``"complete"`` or ``"other"`` for the output ``url``."""
    import fsspec
    import zarr

    from screamcast.data.remote import zarr_store

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    if not fs.exists(path):
        return "absent"
    try:
        group = zarr.open_group(zarr_store(url, storage_options), mode="r")
    except Exception:  # something else is there
        return "other"
    attrs = dict(group.attrs)
    if attrs.get("ingest_options") != want:
        return "other"
    return "complete" if attrs.get("ingest_complete") else "resume"


def remove(url: str, storage_options, sources: list[str]) -> None:
    """Delete an output being replaced (``--overwrite``), never a source or a folder of them."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    root = _canonical(url).rstrip("/")
    for src in sources:
        s = _canonical(src)
        if s == root or s.startswith(root + "/"):
            raise IngestError(f"--output {url} holds the input {src}: refusing to replace it")
    if fs.exists(path):
        fs.rm(path, recursive=True)


def _canonical(url: str) -> str:
    from pathlib import Path

    return url if "://" in url else str(Path(url).resolve())


def create(plan: Plan, attrs: dict, chunk: int, coords: dict, shard: int = 256) -> None:
    """Every array of the store, NaN-filled, with coordinates and attrs (incomplete).

    ``plan.layout == "stacked"`` (the default): one ``fields (time, channel, face, y, x)``
    array, inner chunks ``chunk`` a side holding every channel, shards of ``shard`` a side per
    face and time (:mod:`screamcast.data.stacked`); ``"variables"``: an array per variable,
    chunks ``chunk`` a side."""
    import zarr

    cat, n = plan.catalogue, plan.catalogue.grid.n
    group = zarr.open_group(writable(plan.store, plan.storage_options), mode="w-")
    T = len(cat.times)
    for name, (dim, values, _) in coords.items():
        arr = group.create_array(
            name, shape=values.shape, dtype=values.dtype, dimension_names=[dim]
        )
        arr[:] = values
        arr.attrs.update(coords[name][2])
    variables = []  # (name, channels, level dim, attrs) in the store's order
    for name, (src, _) in plan.outputs.items():
        level_dim = plan.level_dims.get(name)
        count = 1 if level_dim is None else coords[level_dim][1].size
        variables.append((name, count, level_dim, cat.attrs.get(src, {})))
    if plan.layout == "stacked":
        stacked.create_stack(group, stacked.stack_spec(variables), T, n, chunk, shard)
    else:
        c = min(chunk, n)
        for name, count, level_dim, attrs_v in variables:
            lead = (T,) if level_dim is None else (T, count)
            dims = ["time"] + ([] if level_dim is None else [level_dim]) + ["face", "y", "x"]
            arr = group.create_array(
                name,
                shape=(*lead, 6, n, n),
                chunks=(1,) * len(lead) + (1, c, c),
                dtype="float32",
                fill_value=np.nan,
                dimension_names=dims,
            )
            arr.attrs.update(attrs_v)
    counts, units, calendar = encode(cat.times)
    t = group.create_array("time", shape=(T,), dtype="int64", dimension_names=["time"])
    t[:] = counts
    t.attrs.update({"units": units, "calendar": calendar, "standard_name": "time"})
    g = cat.grid
    for name, values, units_ in (("lat", g.lat, "degrees_north"), ("lon", g.lon, "degrees_east")):
        arr = group.create_array(
            name, shape=values.shape, dtype="float64", dimension_names=["face", "y", "x"]
        )
        arr[:] = values
        arr.attrs["units"] = units_
    arr = group.create_array(
        "area", shape=g.area.shape, dtype="float64", dimension_names=["face", "y", "x"]
    )
    arr[:] = g.area
    arr.attrs["units"] = "sr"
    group.attrs.update(
        attrs
        | {
            "title": TITLE,
            "grid": g.name,
            "calendar": cat.calendar,
            "coordinates": "lat lon area",
            "Conventions": "CF-1.8",
            "screamcast_version": __version__,
            "source_files": cat.files,
            "missing_times": [str(t) for t in cat.missing],
            "ingest_complete": False,
        }
    )


def finish(plan: Plan, stats: dict) -> None:
    """The statistics, then ``ingest_complete``: the last thing written."""
    import zarr

    group = zarr.open_group(writable(plan.store, plan.storage_options), mode="r+")
    group.attrs["normalisation"] = stats
    group.attrs["ingest_complete"] = True
    import fsspec  # the blocks' markers are not needed by a complete store

    fs, path = fsspec.core.url_to_fs(plan.marker_dir, **(plan.storage_options or {}))
    if fs.exists(path):
        fs.rm(path, recursive=True)
