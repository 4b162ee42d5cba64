# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The ingestion as a Dask graph of time blocks, on a local cluster or an existing one.

``ingest(options)`` scans the files (:mod:`~screamcast.ingest.sources`), plans the output
variables, creates or resumes the store (:mod:`~screamcast.ingest.store`), runs one task per
unfinished block (:func:`~screamcast.ingest.blocks.process`) on ``distributed`` (a
``LocalCluster`` of ``workers`` processes, an existing cluster at ``scheduler``, or in this
process with ``workers=0``), then combines the blocks' moments into the statistics and marks
the store complete.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from screamcast.data.packing import DTYPES
from screamcast.data.stats import Moments, Stats
from screamcast.ingest import store as st
from screamcast.ingest.blocks import WINDS, Plan, marker_path
from screamcast.ingest.errors import IngestError
from screamcast.ingest.execution import dask_client, run_blocks
from screamcast.ingest.layers import LayerError, check_interfaces, equal_thickness
from screamcast.ingest.locations import canonical, local_path, within
from screamcast.ingest.sources import scan


@dataclass
class IngestOptions:
    sources: list[str]
    output: str
    variables: list[str] = field(default_factory=list)  # default: every ncol variable
    layers: str = ""  # "8" (equal thickness) or "0,10,...,72" (interface indices)
    levels: list[int] = field(default_factory=list)  # without layers: the levels kept
    block: int = 8  # times per task
    chunk: int = 128  # chunk side (cells) of the store (the stack's inner chunks)
    layout: str = "stacked"  # "stacked" (every channel in one sharded array) or "variables"
    shard: int = 256  # stacked: shard side (cells); regions read whole shards (performance.md)
    dtype: str = ""  # "float16" (packed per channel; the stacked default) or "float32"
    pg: int = 2
    workers: int | None = None  # LocalCluster processes (None: one per core; 0: in-process)
    scheduler: str = ""  # an existing Dask scheduler's address
    overwrite: bool = False
    allow_gaps: bool = False
    storage_options: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)  # float16 error by variable: {"PS": 3.0}
    progress: bool = True


def plan_outputs(cat, options: IngestOptions) -> tuple[dict, dict, dict, list | None, str | None]:
    """Output variables: 2-D as they are, 3-D with their levels (or layers), horiz_winds split."""
    outputs, levels, level_dims = {}, {}, {}
    interfaces, ps = None, None
    for name, dims in cat.variables.items():
        extra = [d for d in dims if d not in ("time", "ncol")]
        if name == WINDS:
            outputs |= {"u": (name, 0), "v": (name, 1)}
            extra = [d for d in extra if d != "dim2"]
            targets = ["u", "v"]
        elif len(extra) > 1:
            raise IngestError(f"variable '{name}' has dims {dims}: more than one level dim")
        else:
            outputs[name] = (name, None)
            targets = [name]
        for t in targets:
            if extra:
                level_dims[t] = "layer" if options.layers else extra[0]
                levels[t] = list(options.levels) or None
                size = len(cat.level_coords[extra[0]][0])
                if options.levels and max(options.levels) >= size:
                    raise IngestError(
                        f"--levels {','.join(map(str, options.levels))}: '{name}' has "
                        f"{size} '{extra[0]}' levels (indices 0 to {size - 1})"
                    )
    if options.layers and level_dims:
        interfaces, ps = _layers(cat, options.layers)
    return outputs, levels, level_dims, interfaces, ps


def _layers(cat, spec: str) -> tuple[list[int], str]:
    h = cat.hybrid
    missing = [k for k in ("hyai", "hybi", "P0") if k not in h]
    ps = next((v for v in ("PS", "ps") if v in cat.available), None)
    if missing or ps is None:
        lacking = ", ".join(missing + ([] if ps else ["PS"]))
        raise IngestError(f"--layers needs {lacking} in {cat.files[0]}, which lacks them")
    levels = len(h["hyai"]) - 1
    try:
        if "," in spec:
            return check_interfaces([int(x) for x in spec.split(",")], levels), ps
        return equal_thickness(h["hyai"], h["hybi"], float(h["P0"]), int(spec)), ps
    except (LayerError, ValueError) as err:
        raise IngestError(str(err)) from None


def check_options(options: IngestOptions) -> None:
    """Options that cannot work together or at all, refused before any file is opened."""
    if options.layout not in ("stacked", "variables"):
        raise IngestError(f"--layout must be 'stacked' or 'variables', got {options.layout!r}")
    if options.dtype not in ("", *DTYPES):
        raise IngestError(f"--dtype must be one of {', '.join(DTYPES)}, got {options.dtype!r}")
    if storage_dtype(options) == "float16" and options.layout != "stacked":
        raise IngestError(
            "--dtype float16 needs --layout stacked (its packing is per channel of the stack)"
        )
    for key in ("chunk", "shard", "block"):
        if getattr(options, key) < 1:
            raise IngestError(f"--{key} must be a positive number, got {getattr(options, key)}")
    if options.levels and options.layers:
        raise IngestError(
            "--levels and --layers exclude each other: layers are made from every level"
        )
    lv = list(options.levels)
    if lv and (min(lv) < 0 or any(b <= a for a, b in zip(lv[:-1], lv[1:], strict=False))):
        raise IngestError(
            f"--levels {','.join(map(str, lv))}: level indices must be >= 0 and increase "
            "strictly (each level once, top to bottom)"
        )


def storage_dtype(options: IngestOptions) -> str:
    """float16 for a stack unless asked otherwise (half the bytes a crop reads; its error:
    :mod:`screamcast.data.packing`), float32 for one array per variable."""
    return options.dtype or ("float16" if options.layout == "stacked" else "float32")


def ingest(options: IngestOptions) -> dict:
    """Run (or resume) an ingestion; returns a summary (blocks, seconds, MB read).

    The output is locked for the run; it is never an input nor holds one; an existing path
    is resumed (the same command), left alone (no ``--overwrite``) or, only when the
    ingestion wrote it, replaced, the old store kept until the new one is complete."""
    check_options(options)
    output = local_path(options.output)
    here = canonical(output)
    from screamcast.file_lock import FileLock, LockedError

    if "://" not in output:  # the store's folder may be new (zarr makes the store's own)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    try:
        lock = FileLock(st.lock_path(output), f"ingestion output {options.output}", remove=True)
        lock.acquire()
    except LockedError as err:
        raise IngestError(str(err)) from None
    except OSError as err:
        raise IngestError(f"--output {options.output}: cannot lock it ({err})") from None
    try:
        return _ingest_locked(options, output, here)
    finally:
        lock.release()


def _ingest_locked(options: IngestOptions, output: str, here: str) -> dict:
    cat = scan(
        options.sources,
        options.variables or None,
        options.storage_options,
        options.pg,
        options.allow_gaps,
        exclude=here,
        surface_pressure=bool(options.layers),
    )
    _check_apart(cat.files, output, here)
    outputs, levels, level_dims, interfaces, ps = plan_outputs(cat, options)
    want = st.fingerprint(cat, asdict(options) | {"dtype": storage_dtype(options)})
    target, action = _target(output, options, want, cat)
    plan = Plan(
        cat,
        outputs,
        levels,
        level_dims,
        interfaces,
        ps,
        target,
        options.storage_options or None,
        f"{target.rstrip('/')}/.ingest",
        options.block,
        options.layout,
        storage_dtype(options),
        options.dtype == "float16",
        options.budget,
    )
    if action == "complete":
        return {"blocks": 0, "state": "complete"}
    with dask_client(options.workers, options.scheduler) as client:  # before any write
        if action in ("create", "recreate"):
            if action == "recreate":
                st.remove(target, plan.storage_options)
            attrs = {
                "ingest_options": want,
                "history": f"screamcast.ingest {json.dumps(asdict(options))}",
            }
            st.create(plan, attrs, options.chunk, _coordinates(plan), options.shard)
        done = _finished(plan)
        todo = [b for b in plan.blocks() if b[0] not in done]
        t0 = time.perf_counter()
        results = run_blocks(plan, todo, options.progress, client)
    elapsed = time.perf_counter() - t0
    done.update({r["block"][0]: r for r in results})
    finished = [done[b[0]] for b in plan.blocks()]
    non_finite = _non_finite(finished, cat)
    st.finish(plan, combine(finished).to_dict(), non_finite)
    if target != output:
        st.publish(target, output, plan.storage_options)
    summary = {
        "blocks": len(todo),
        "resumed_after": len(plan.blocks()) - len(todo),
        "seconds": elapsed,
        "mb_read": sum(r["bytes_read"] for r in results) / 1e6,
        "state": "written" if target == output else "replaced",
    } | _precision(finished, output, plan)
    return summary | ({"non_finite": non_finite} if non_finite else {})


def _precision(finished: list[dict], store: str, plan: Plan) -> dict:
    """``{"precision": {channel: {dtype, worst_error}}}`` of a stack over every block written
    (the error None for blocks written before it was recorded; docs/ingest.md), or {}."""
    if plan.layout != "stacked":
        return {}
    import zarr

    from screamcast.data import packing, stacked
    from screamcast.data.remote import writable

    group = zarr.open_group(writable(store, plan.storage_options), mode="r")
    names = stacked.channel_names(group.attrs[stacked.ATTR][stacked.FIELDS])
    packed = packing.of(group[stacked.FIELDS])
    if packed is None:
        return {"precision": {name: {"dtype": "float32", "worst_error": 0.0} for name in names}}
    recorded = [r["precision"] for r in finished if "precision" in r]
    whole = len(recorded) == len(finished)  # else blocks from before it was recorded
    worst = {n: max((e[n][0] for e in recorded), default=0.0) if whole else None for n in names}
    dtypes = packed.dtypes()
    return {
        "precision": {
            name: {"dtype": dtypes[c], "worst_error": worst[name]} for c, name in enumerate(names)
        }
    }


def _check_apart(files: list[str], output: str, here: str) -> None:
    """The output is no input, does not hold one and does not lie inside one, however either
    is spelt (``file://``, relative, ``..``, symlinks)."""
    for f in files:
        src = canonical(f)
        if within(src, here) or within(here, src):
            how = "is" if src == here else ("holds" if within(src, here) else "lies inside")
            raise IngestError(
                f"--output {output} {how} the input {f}: the output must be apart from the "
                "inputs; choose another path"
            )


def _target(output: str, options: IngestOptions, want: str, cat) -> tuple[str, str]:
    """Where to write and how: ``(path, create | recreate | resume | complete)``; a store
    to replace is rebuilt at a staging path beside it."""
    so = options.storage_options or None
    attrs = st.existing_attrs(output, so)
    state = st.state_of(attrs, want)
    if state == "foreign":
        raise IngestError(
            f"--output {options.output} exists and was not written by screamcast.ingest (no "
            f"title '{st.TITLE}'): it is never replaced, even with --overwrite; choose another "
            "path, or delete it yourself if it is yours to delete"
        )
    changed = st.changed_sources(attrs, cat.sources_state) if attrs else []
    if state in ("complete", "resume") and changed and not options.overwrite:
        raise IngestError(
            f"--output {options.output}: inputs changed since this store was planned: "
            f"{'; '.join(changed)}. Its times are the files' as they were; rebuild it with "
            "--overwrite (the old store is kept until the new one is complete) or write "
            "another --output"
        )
    if state == "differs" and not options.overwrite:
        raise IngestError(
            f"--output {options.output} is a store of another ingestion ("
            f"{st.differences(attrs.get('ingest_options'), want)}): rerun with its inputs "
            "and options to resume it, write another --output, or pass --overwrite to "
            "rebuild it (the old store is kept until the new one is complete)"
        )
    if state in ("complete", "resume", "recreate") and not changed:
        return output, state
    if state == "absent":
        return output, "create"
    if not attrs.get("ingest_complete"):  # an unfinished store holds nothing to keep
        st.remove(output, so)
        return output, "create"
    staging = st.staging_url(output)
    old = st.state_of(st.existing_attrs(staging, so), want)
    if old in ("resume", "recreate"):
        return staging, old
    if old != "absent":
        st.remove(staging, so)  # a staging path is the ingestion's own name
    return staging, "create"


def _non_finite(results: list[dict], cat) -> dict:
    """``{variable: {"values": count, "times": [...]}}`` of NaN / fill values the files held
    (times absent from the files, --allow-gaps, are listed as missing_times instead)."""
    out: dict[str, dict] = {}
    for r in results:
        for name, (count, times) in r.get("non_finite", {}).items():
            entry = out.setdefault(name, {"values": 0, "times": []})
            entry["values"] += count
            entry["times"] += [str(cat.times[k]) for k in times]
    return out


def _coordinates(plan: Plan) -> dict:
    """The store's level coordinates: ``{dim: (dim, values, attrs)}``."""
    cat, out = plan.catalogue, {}
    for name, dim in plan.level_dims.items():
        if dim == "layer":
            h, p0 = cat.hybrid, float(cat.hybrid["P0"])
            p = h["hyai"] * p0 + h["hybi"] * p0  # reference interfaces (PS = P0)
            a, b = np.array(plan.interfaces[:-1]), np.array(plan.interfaces[1:])
            attrs = {
                "units": "Pa",
                "long_name": "layer mid-pressure at PS = P0 (pressure-weighted mean of levels)",
                "interfaces": list(plan.interfaces),
            }
            out[dim] = (dim, 0.5 * (p[a] + p[b]), attrs)
        else:
            values, attrs = cat.level_coords[dim]
            chosen = plan.levels.get(name)
            out[dim] = (dim, np.asarray(values if chosen is None else values[chosen]), attrs)
    return out


def _finished(plan: Plan) -> dict[int, dict]:
    """The blocks with a marker: ``{first time: result}``."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(plan.marker_dir, **(plan.storage_options or {}))
    out = {}
    for t0, _ in plan.blocks():
        path = marker_path(plan, t0).replace(plan.marker_dir, root, 1)
        if fs.exists(path):
            out[t0] = json.loads(fs.cat_file(path))
    return out


def combine(results: list[dict]) -> Stats:
    """The statistics of the whole run from the blocks' moments (constant fields: std 1)."""
    level: dict[str, Moments] = {}
    change: dict[str, Moments] = {}
    partial = set()  # blocks recorded before the extremes were kept: no extremes
    for r in results:
        for name, m in r["moments"].items():
            if len(m["level"]) < 5 and m["level"][0]:
                partial.add(name)
            level.setdefault(name, Moments()).merge(Moments(*m["level"]))
            change.setdefault(name, Moments()).merge(Moments(*m["change"]))
    stats = Stats()
    for name in level:
        stats.mean[name], stats.std[name] = level[name].mean_std()
        stats.diff_std[name] = change[name].mean_std()[1] if change[name].w else stats.std[name]
        if name not in partial:
            level[name].put_extremes(stats, name)
        if stats.std[name] == 0.0:
            stats.std[name] = 1.0
    return stats
