# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training samples per second against a plain zarr read of the same chunks, local and S3.

The baseline reads, with zarr's ordinary synchronous indexing, exactly the regions each sample
of a batch needs (its face box and the neighbour strips of its halo) and does nothing else;
the candidate is ``CropDataset.__getitems__`` of the batch, what the DataLoader calls (plans,
every read of the batch concurrently, halo assembly, forcing).
Target: the dataset reaches >= 70% of the raw throughput, i.e. time ratio <= 1/0.7.
S3 is moto's server on loopback (per-request latency, not bandwidth, dominates).
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

import zarr

from benchmarks.harness import Result, interleaved, moto_bucket
from screamcast.data.crops import plan_crop
from screamcast.data.dataset import CropDataset
from screamcast.data.remote import zarr_store
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.sources.synthetic import write_store

PROG, DIAG, STATIC = ["u", "v", "vorticity", "tracer", "temperature"], ["precip"], ["orography"]


def _raw_reader(data: CropDataset, url: str, options: dict | None):
    group = zarr.open_group(zarr_store(url, options), mode="r")
    arrays = {v: group[v] for v in PROG + DIAG + STATIC}

    def read(i: int) -> None:
        t, f, oy, ox = data.draw(i)
        plan = plan_crop(data.geo, f, oy, ox, data.crop)
        for var, arr in arrays.items():
            lead = () if var in STATIC else (slice(t, t + data.steps + 1),)
            arr[(*lead, f, *plan.inner)]
            for g, ys, xs in plan.boxes:
                arr[(*lead, g, ys, xs)]

    return read


def _case(kind, url, options, layout, crop, batches, batch):
    data = CropDataset(
        url,
        layout,
        PROG,
        DIAG,
        STATIC,
        crop=crop,
        steps=1,
        samples=batches * batch,
        storage_options=options,
    )
    raw = _raw_reader(data, url, options)
    counter = {"c": 0, "b": 0}

    def candidate():
        first = (counter["c"] % batches) * batch
        data.__getitems__(range(first, first + batch))
        counter["c"] += 1

    def baseline():
        first = (counter["b"] % batches) * batch
        for i in range(first, first + batch):
            raw(i)
        counter["b"] += 1

    tc, tb = interleaved(candidate, baseline, repeats=batches, warmup=2)
    name = f"{kind}[n{layout.n}_crop{crop}_b{batch}]"
    return Result("dataset", name, tc, tb, 1 / 0.7, "raw zarr reads of the same chunks")


def run(quick: bool = False):
    tmp = Path(tempfile.mkdtemp(prefix="bench-data-"))
    try:
        n, chunk, crop = 64, 32, 40
        write_store(tmp / "d.zarr", n, days=1, step_hours=3, chunk=chunk)
        layout = TileLayout(PhysicsGrid.for_face_size(n), 16, 8)
        batches = 3 if quick else 10
        results = [_case("local", str(tmp / "d.zarr"), None, layout, crop, batches, 8)]
        results.append(_s3_case(tmp / "d.zarr", layout, crop, batches))
    finally:
        shutil.rmtree(tmp)
    return results, {"chunk": chunk, "variables": len(PROG + DIAG + STATIC), "repeats": batches}


def _s3_case(local: Path, layout, crop, batches):
    import xarray as xr

    server, options = moto_bucket()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xr.open_zarr(local, chunks=None).to_zarr(
                "s3://bench/d.zarr", storage_options=options, mode="w-"
            )
        return _case("s3", "s3://bench/d.zarr", options, layout, crop, max(batches // 3, 2), 4)
    finally:
        server.stop()
