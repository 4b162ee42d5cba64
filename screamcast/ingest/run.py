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

from screamcast.data.stats import Moments, Stats
from screamcast.ingest import store as st
from screamcast.ingest.blocks import WINDS, Plan, marker_path, process
from screamcast.ingest.layers import LayerError, check_interfaces, equal_thickness
from screamcast.ingest.sources import IngestError, scan


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
    pg: int = 2
    workers: int | None = None  # LocalCluster processes (None: one per core; 0: in-process)
    scheduler: str = ""  # an existing Dask scheduler's address
    overwrite: bool = False
    allow_gaps: bool = False
    storage_options: dict = field(default_factory=dict)
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


def ingest(options: IngestOptions) -> dict:
    """Run (or resume) an ingestion; returns a summary (blocks, seconds, MB read)."""
    if options.layout not in ("stacked", "variables"):
        raise IngestError(f"--layout must be 'stacked' or 'variables', got {options.layout!r}")
    for key in ("chunk", "shard", "block"):
        if getattr(options, key) < 1:
            raise IngestError(f"--{key} must be a positive number, got {getattr(options, key)}")
    cat = scan(
        options.sources,
        options.variables or None,
        options.storage_options,
        options.pg,
        options.allow_gaps,
    )
    outputs, levels, level_dims, interfaces, ps = plan_outputs(cat, options)
    plan = Plan(
        cat,
        outputs,
        levels,
        level_dims,
        interfaces,
        ps,
        options.output,
        options.storage_options or None,
        f"{options.output.rstrip('/')}/.ingest",
        options.block,
        options.layout,
    )
    want = st.fingerprint(plan, asdict(options))
    state = st.existing_state(options.output, plan.storage_options, want)
    if state == "complete":
        return {"blocks": 0, "state": "complete"}
    if state == "other":
        if not options.overwrite:
            raise IngestError(
                f"--output {options.output} exists and is not this ingestion's store: pass "
                "--overwrite to replace it, or choose another path"
            )
        st.remove(options.output, plan.storage_options, cat.files)
    if state != "resume":
        attrs = {
            "ingest_options": want,
            "history": f"screamcast.ingest {json.dumps(asdict(options))}",
        }
        st.create(plan, attrs, options.chunk, _coordinates(plan), options.shard)
    done = _finished(plan)
    todo = [b for b in plan.blocks() if b[0] not in done]
    t0 = time.perf_counter()
    results = _run(plan, todo, options)
    elapsed = time.perf_counter() - t0
    done.update({r["block"][0]: r for r in results})
    st.finish(plan, combine([done[b[0]] for b in plan.blocks()]).to_dict())
    mb = sum(r["bytes_read"] for r in results) / 1e6
    return {
        "blocks": len(todo),
        "resumed_after": len(plan.blocks()) - len(todo),
        "seconds": elapsed,
        "mb_read": mb,
        "state": "written",
    }


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
    for r in results:
        for name, m in r["moments"].items():
            level.setdefault(name, Moments()).merge(Moments(*m["level"]))
            change.setdefault(name, Moments()).merge(Moments(*m["change"]))
    stats = Stats()
    for name in level:
        stats.mean[name], stats.std[name] = level[name].mean_std()
        stats.diff_std[name] = change[name].mean_std()[1] if change[name].w else stats.std[name]
        if stats.std[name] == 0.0:
            stats.std[name] = 1.0
    return stats


def _run(plan: Plan, todo: list[tuple[int, int]], options: IngestOptions) -> list[dict]:
    """One task per block on the chosen Dask cluster, with a progress bar."""
    from tqdm import tqdm

    bar = tqdm(total=len(todo), unit="block", disable=not options.progress, desc="ingest")
    start, read, results = time.perf_counter(), 0, []

    def done(result: dict) -> None:
        nonlocal read
        read += result["bytes_read"]
        results.append(result)
        bar.set_postfix(MB_s=f"{read / 1e6 / max(time.perf_counter() - start, 1e-9):.1f}")
        bar.update()

    if options.workers == 0 and not options.scheduler:  # in this process, in order
        for a, b in todo:
            done(process(plan, a, b))
    else:
        _run_distributed(plan, todo, options, done)
    bar.close()
    return results


def _run_distributed(plan: Plan, todo, options: IngestOptions, done) -> None:
    from distributed import Client, LocalCluster, as_completed

    if options.scheduler:
        client, cluster = Client(options.scheduler), None
    else:
        workers = options.workers or os.cpu_count() or 1
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        shared = client.scatter(plan, broadcast=True)  # the catalogue once per worker
        futures = [client.submit(process, shared, a, b, pure=False) for a, b in todo]
        for future in as_completed(futures):
            done(future.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
