# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The loader on S3 at production shape: crops from regions of a stacked store, against plain
reads of the same objects (docs/performance.md).

``python -m benchmarks.loader_s3 [--record]``: the production-shaped stacked stores of
``benchmarks.crop_layouts`` (n = 256, 40 channels, a shard per face and time, 3 times; float16,
per channel float16 with one channel float32 (the ingestion's default where surface pressure
needs it), and float32) on moto's S3 server (loopback); crops of 192 at k = 1,
8 cut from each whole-face region. Per round: the candidate is ``CropDataset.__getitems__``
for one region's 8 crops (whole-shard reads, at most ``max_in_flight`` in flight, halo
assembly, forcing); the baseline reads the same objects (logged in a first pass) with
``s3fs`` one after another, and does nothing else. With ``data.device_crops`` (the last
``stacked_mixed`` row) the candidate is the worker's whole work, ``RegionWindows`` reading the
region's shards as float16 words; the crops are cut on the training device, not here.
Rounds alternate, each on another region. moto on loopback has neither S3's latency nor its
bandwidth: the ratio says what the loader adds to the reads, not how fast S3 is.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import crop_layouts as layouts
from benchmarks.harness import moto_bucket, save_record
from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import METADATA, ReadCounter
from screamcast.data.region_sampler import RegionPlan
from screamcast.data.region_windows import RegionWindows
from screamcast.grid import PhysicsGrid, TileLayout

ROUNDS = 4


class KeyLog(ReadCounter):
    """Counts, and remembers which objects were read."""

    keys: list[str] = []

    def _count(self, key: str, value) -> None:
        super()._count(key, value)
        if value is not None and key.rsplit("/", 1)[-1] not in METADATA:
            KeyLog.keys.append(key)


def upload(stores: dict[str, Path]):
    """A moto server on loopback holding each store as ``s3://bench/<name>.zarr``."""
    import s3fs

    server, options = moto_bucket()
    fs = s3fs.S3FileSystem(**options)
    for name, local in stores.items():
        fs.put(str(local), f"bench/{name}.zarr", recursive=True)
    return server, fs, options


def obstore_wrapper(options: dict, prefix: str):
    """A store wrapper that reads through obstore (Rust object_store) instead of s3fs."""
    from obstore.store import S3Store
    from zarr.storage import ObjectStore

    s3 = S3Store(
        "bench",
        prefix=prefix,
        endpoint=options["endpoint_url"],
        access_key_id=options["key"],
        secret_access_key=options["secret"],
        region="us-east-1",
        client_options={"allow_http": True},
    )
    return lambda _store: KeyLog(ObjectStore(s3, read_only=True))


def run_case(
    layout: str, options, fs, in_flight: int, client: str = "s3fs", device: bool = False
) -> dict:
    url, key = f"s3://bench/{layout}.zarr", f"{layout}.zarr"
    tiles = TileLayout(PhysicsGrid.for_face_size(layouts.N), layouts.TILE, layouts.HALO)
    span = tiles.padded - layouts.CROP + 1
    plan = RegionPlan.balanced(span, layouts.CROP, span, 8, 1)  # a region per face, 8 crops
    data = CropDataset(
        url,
        tiles,
        layouts.CHANNELS,
        crop=layouts.CROP,
        samples=8 * (ROUNDS + 1),
        storage_options=options,
        store_wrapper=KeyLog if client == "s3fs" else obstore_wrapper(options, key),
        regions=plan,
        max_in_flight=in_flight,
    )
    windows = RegionWindows(data, 0)  # device crops: the worker only reads the region
    cand, base, nbytes, cpu = [], [], [], []
    for r in range(ROUNDS + 1):  # round 0 warms up (metadata, geometry)
        KeyLog.keys = []
        t0, c0 = time.perf_counter(), time.process_time()
        if device:
            windows[r]
        else:
            data.__getitems__(list(range(8 * r, 8 * r + 8)))
        t1, c1 = time.perf_counter(), time.process_time()
        keys = list(KeyLog.keys)
        got = [fs.cat_file(f"bench/{key}/{k}") for k in keys]  # the same objects, plainly
        t2 = time.perf_counter()
        if r:
            cand.append(t1 - t0)
            cpu.append(c1 - c0)  # moto's server threads too: an upper bound
            base.append(t2 - t1)
            nbytes.append(sum(len(g) for g in got))
    c, b = float(np.median(cand)), float(np.median(base))
    return {
        "layout": layout,
        "client": client,
        "device_crops": device,
        "process_cpu_s_per_region": float(np.median(cpu)),
        "max_in_flight": in_flight,
        "crops_per_s": 8 / c,
        "loader_s_per_region": c,
        "plain_reads_s_per_region": b,
        "ratio": c / b,
        "mb_per_region": float(np.median(nbytes)) / 1e6,
        "loader_mb_per_s": float(np.median(nbytes)) / 1e6 / c,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/loader_s3.json")
    a = ap.parse_args(argv)
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        names = ("stacked_f16", "stacked_mixed", "stacked")
        stores = {name: Path(tmp) / f"{name}.zarr" for name in names}
        for name, local in stores.items():
            layouts.write(local, name, times=3)
        server, fs, options = upload(stores)
        try:
            cases = [("stacked_f16", "s3fs", n, False) for n in (1, 4, 16)]
            cases += [("stacked_mixed", "s3fs", 16, False), ("stacked", "s3fs", 16, False)]
            cases += [("stacked_mixed", "s3fs", 16, True)]  # data.device_crops
            if importlib.util.find_spec("obstore") is not None:  # optional: pip install obstore
                cases.append(("stacked_f16", "obstore", 16, False))
            for layout, client, in_flight, device in cases:
                report.append(run_case(layout, options, fs, in_flight, client, device))
                r = report[-1]
                how = "device crops" if r["device_crops"] else client
                print(
                    f"{layout:13s} {how:12s} max_in_flight {in_flight:2d}: "
                    f"{r['crops_per_s']:.2f} crops/s, "
                    "loader "
                    f"{r['loader_s_per_region']:.2f} s / plain reads "
                    f"{r['plain_reads_s_per_region']:.2f} s per region = {r['ratio']:.2f}x "
                    f"({r['mb_per_region']:.0f} MB, {r['loader_mb_per_s']:.0f} MB/s)",
                    flush=True,
                )
        finally:
            server.stop()
    if a.record:
        command = "python -m benchmarks.loader_s3 " + " ".join(argv or sys.argv[1:])
        save_record("loader_s3", "loader_s3", command, {"report": report, "rounds": ROUNDS})
    return report


if __name__ == "__main__":
    main()
