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

import itertools
import json
import logging
from pathlib import Path

import numpy as np

from screamcast import __version__
from screamcast.data import precision, stacked
from screamcast.data.calendar import encode
from screamcast.data.packing import PackingError, round_trip
from screamcast.data.remote import writable
from screamcast.ingest.blocks import Plan

log = logging.getLogger(__name__)

TITLE = "screamcast ingested E3SM history"


def fingerprint(catalogue, options: dict) -> str:
    """What makes two ingestions the same: the sorted files and the options that shape data."""
    keep = {
        k: options[k]
        for k in ("variables", "layers", "levels", "block", "chunk", "pg", "layout", "shard")
    }
    if options.get("dtype", "float32") != "float32":  # stores made before it are float32
        keep["dtype"] = options["dtype"]
    return json.dumps({"files": catalogue.files, **keep}, sort_keys=True)


def existing_attrs(url: str, storage_options) -> dict | None:
    """The group attrs of what is at ``url``: None when nothing is there, ``{}`` when
    something that is no zarr group is."""
    import fsspec
    import zarr

    from screamcast.data.remote import zarr_store

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    if not fs.exists(path):
        return None
    try:
        return dict(zarr.open_group(zarr_store(url, storage_options), mode="r").attrs)
    except Exception:  # something else is there
        return {}


def state_of(attrs: dict | None, want: str) -> str:
    """``absent``, ``foreign`` (not written by the ingestion: never replaced), ``differs``
    (an ingested store of other inputs or options), ``recreate`` (this ingestion's, killed
    while it was being created), ``resume`` or ``complete``."""
    if attrs is None:
        return "absent"
    if attrs.get("title") != TITLE:
        return "foreign"
    if attrs.get("ingest_options") != want:
        return "differs"
    if not attrs.get("ingest_created", True):
        return "recreate"
    return "complete" if attrs.get("ingest_complete") else "resume"


def differences(have: str | None, want: str) -> str:
    """What differs between two fingerprints, key by key, in words."""
    try:
        a, b = json.loads(have or "{}"), json.loads(want)
    except ValueError:
        return "its ingest_options cannot be read"
    keys = [k for k in b if a.get(k) != b[k]]
    out = []
    for k in keys:
        if k == "files":
            gone = [f for f in a.get(k, []) if f not in b[k]]
            new = [f for f in b[k] if f not in a.get(k, [])]
            out.append(
                f"files: {len(gone)} of its inputs not given now {gone[:2]}, "
                f"{len(new)} new {new[:2]}"
            )
        else:
            out.append(f"{k}: the store's {a.get(k)!r}, this run's {b[k]!r}")
    return "; ".join(out) or "nothing recorded differs"


def changed_sources(attrs: dict, now: list[dict]) -> list[str]:
    """The inputs that differ from what the store recorded when it was planned (size, count
    or span of times), in words; [] for a store from before the record."""
    before = {s["file"]: s for s in attrs.get("sources_state", [])}
    out = []
    for s in now:
        old = before.get(s["file"])
        if old is None:
            continue
        diffs = [
            f"{k} {old[k]} -> {s[k]}" for k in ("bytes", "times", "first", "last") if old[k] != s[k]
        ]
        if diffs:
            out.append(f"{s['file']} ({', '.join(diffs)})")
    return out


def staging_url(url: str) -> str:
    """Where a replacement store is built: a hidden sibling locally, a sibling prefix on S3."""
    if "://" in url:
        return url.rstrip("/") + ".screamcast-ingest-new"
    p = Path(url)
    return str(p.with_name(f".{p.name}.screamcast-ingest-new"))


def lock_path(url: str):
    """The lock file of an output: beside a local one; for an S3 output, in the temp folder
    (it then holds against runs on this machine only: S3 has no lock)."""
    import hashlib
    import tempfile

    if "://" not in url:
        p = Path(url)
        return p.with_name(f".{p.name}.lock")
    folder = Path(tempfile.gettempdir()) / "screamcast-locks"
    folder.mkdir(exist_ok=True)
    return folder / (hashlib.sha1(url.encode()).hexdigest()[:16] + ".lock")


def remove(url: str, storage_options) -> None:
    """Delete a store the ingestion wrote (the caller checked its title)."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    if fs.exists(path):
        fs.rm(path, recursive=True)


def publish(staging: str, url: str, storage_options) -> None:
    """Put the finished store at ``staging`` in place of the one at ``url``: an atomic swap
    locally; on S3, which cannot rename, the old store is deleted and the new one copied in
    (server-side), so for that moment the complete new store is at ``staging`` only."""
    if "://" not in url:
        from screamcast.replace_dir import publish as swap

        swap(Path(staging), Path(url))
        return
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    _, tmp = fsspec.core.url_to_fs(staging, **(storage_options or {}))
    fs.rm(path, recursive=True)
    fs.copy(tmp.rstrip("/") + "/", path.rstrip("/") + "/", recursive=True)
    fs.rm(tmp, recursive=True)


def create(plan: Plan, attrs: dict, chunk: int, coords: dict, shard: int = 256) -> None:
    """Every array of the store, NaN-filled, with coordinates and attrs (incomplete).

    ``plan.layout == "stacked"`` (the default): one ``fields (time, channel, face, y, x)``
    array, inner chunks ``chunk`` a side holding every channel, shards of ``shard`` a side per
    face and time (:mod:`screamcast.data.stacked`); ``"variables"``: an array per variable,
    chunks ``chunk`` a side."""
    import zarr

    cat = plan.catalogue
    group = zarr.open_group(writable(plan.store, plan.storage_options), mode="w-")
    # first: a store killed while being created is recognised as this ingestion's (recreated)
    group.attrs.update(attrs | {"title": TITLE, "ingest_created": False, "ingest_complete": False})
    T = len(cat.times)
    for name, (dim, values, _) in coords.items():
        arr = group.create_array(
            name, shape=values.shape, dtype=values.dtype, dimension_names=[dim]
        )
        arr[:] = values
        arr.attrs.update(coords[name][2])
    _create_fields(group, plan, coords, T, chunk, shard)
    _create_coordinates(group, cat)
    group.attrs.update(
        attrs
        | {
            "title": TITLE,
            "grid": cat.grid.name,
            "calendar": cat.calendar,
            "coordinates": "lat lon area",
            "Conventions": "CF-1.8",
            "screamcast_version": __version__,
            "source_files": cat.files,
            "missing_times": [str(t) for t in cat.missing],
            "sources_state": cat.sources_state,
            "ingest_created": True,
            "ingest_complete": False,
        }
    )


def _create_fields(group, plan: Plan, coords: dict, T: int, chunk: int, shard: int) -> None:
    """The output variables' arrays: one stack, or one array per variable."""
    cat, n = plan.catalogue, plan.catalogue.grid.n
    variables = []  # (name, channels, level dim, attrs) in the store's order
    for name, (src, part) in plan.outputs.items():
        level_dim = plan.level_dims.get(name)
        count = 1 if level_dim is None else coords[level_dim][1].size
        variables.append((name, count, level_dim, output_attrs(cat.attrs.get(src, {}), part)))
    if plan.layout == "stacked":
        spec = stacked.stack_spec(variables)
        packing, budgets = (
            first_block_packing(plan, spec) if plan.dtype == "float16" else (None, [])
        )
        stacked.create_stack(group, spec, T, n, chunk, shard, packing)
        if packing is not None:  # what each block is checked against when written
            group.attrs[stacked.BUDGET] = precision.to_attrs(budgets)
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


def output_attrs(attrs: dict, part: int | None) -> dict:
    """An output variable's attrs: its file variable's (``units``, ``long_name`` ...), and
    for a component of EAMxx's ``horiz_winds`` (``part`` 0: u, 1: v) which one it is."""
    if part is None:
        return dict(attrs)
    which = ("zonal", "meridional")[part]
    return attrs | {"long_name": f"{which} component of {attrs.get('long_name', 'horiz_winds')}"}


def first_block_packing(plan: Plan, spec: list[list], scan: int = 8):
    """``(packing, budgets)``: the stack's packing, its offsets and scales from the first
    block's fields (read here once more: every block task, the first included, reads its own
    times), or from later ones (up to ``scan`` blocks) for channels constant in it; each
    channel's error budget from the first block (:mod:`screamcast.data.precision`). A channel
    is float16 where it meets its budget with room on the first, middle and last blocks
    (:func:`float32_channels`), float32 where it does not (a channel constant over the scan
    too); with ``--dtype float16`` given, such a channel is refused instead."""
    from screamcast.data.packing import choose, codec
    from screamcast.ingest.blocks import read_times, transform

    def read(t0: int, t1: int) -> np.ndarray:  # (t, C, 6, n, n) in the stack's channel order
        return stacked.stack_of(spec, transform(plan, read_times(plan, t0, t1)))

    blocks = plan.blocks()
    first = read(*blocks[0])  # read once: for the packing and for the budgets
    constant: list[int] = []
    later = (read(t0, t1) for t0, t1 in blocks[1:scan])
    offsets, scales = choose(itertools.chain([first], later), axis=1, constant=constant)
    variables = [e[0] for e in spec for _ in range(e[2] - e[1])]  # channel -> its variable
    budgets = precision.budgets(variables, first, axis=1, absolute=plan.budget)
    names = stacked.channel_names(spec)
    probes = [first] + [read(*blocks[i]) for i in sorted({len(blocks) // 2, len(blocks) - 1} - {0})]
    packing = codec(offsets, scales, axis=1)
    over = float32_channels(packing, probes, budgets, names)
    if over and plan.dtype_given:
        listed = "; ".join(over.values())
        raise PackingError(
            f"{plan.store}: float16 cannot hold these channels within their error budget "
            f"(docs/ingest.md): {listed}; ingest without --dtype (float16 where it can, "
            "float32 where it cannot) or with --dtype float32"
        )
    exact = sorted({*over, *constant})
    if exact:
        log.info(
            "stack stored per channel: float32 for %s (%s), float16 for the other %d",
            ", ".join(names[c] for c in exact),
            "; ".join(over.values()) or "constant over the first blocks",
            len(names) - len(exact),
        )
    return codec(offsets, scales, axis=1, exact=exact), budgets


def float32_channels(packing, probes: list, budgets: list, names: list[str], room: float = 2.0):
    """``{channel: why}`` for the channels float16 cannot hold within budget on ``probes``
    (blocks ``(t, C, 6, n, n)``) stretched ``room`` times about their offsets: a later block
    up to twice as far from the offset as any probed one still meets the budget."""
    offset = np.asarray(packing.offset, np.float64).reshape(1, -1, 1, 1, 1)
    out = {}
    for block in probes:  # as they are (exact zeros), then stretched (room)
        for stretched in (block, (offset + room * (block - offset)).astype(np.float32)):
            back = round_trip(packing, stretched, slice(0, len(names)))
            report = precision.worst(stretched, back, budgets, axis=1)
            lines = precision.over(report, names, budgets, every=True)
            out |= {c: line for c, line in enumerate(lines) if line and c not in out}
    return out


def _create_coordinates(group, cat) -> None:
    """``time`` (CF-encoded in the model's calendar) and the grid's ``lat``, ``lon``, ``area``."""
    T = len(cat.times)
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


def finish(plan: Plan, stats: dict, non_finite: dict | None = None) -> None:
    """The statistics (and the NaN / fill values found), then ``ingest_complete``: the last
    thing written."""
    import zarr

    group = zarr.open_group(writable(plan.store, plan.storage_options), mode="r+")
    group.attrs["normalisation"] = stats
    group.attrs["non_finite"] = non_finite or {}
    group.attrs["ingest_complete"] = True
    import fsspec  # the blocks' markers are not needed by a complete store

    fs, path = fsspec.core.url_to_fs(plan.marker_dir, **(plan.storage_options or {}))
    if fs.exists(path):
        fs.rm(path, recursive=True)
    consolidate(plan.store, plan.storage_options)


def consolidate(url: str, storage_options) -> None:
    """The store's metadata in one document (its group's ``zarr.json``), written after the
    last attr: ``xr.open_zarr`` opens a complete store without a warning and in one read.
    Call again after editing a complete store's attrs (the document holds them)."""
    import warnings

    import zarr

    with warnings.catch_warnings():  # "not part in the Zarr format 3 specification"
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(writable(url, storage_options))
