# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The loader's CPU time per crop: crops cut on the CPU against crops cut on the device.

``python -m benchmarks.loader_cpu [--record] [--rounds 2]`` (~3 min): the production-shaped
per-channel-dtype stack of ``benchmarks.crop_layouts`` (n = 256, 40 channels, float16 with
one channel float32, as the ingestion writes surface pressure; 3 times) on the local disk,
crops of 192 at k = 1, 8 cut from each whole-face region, the crops of 16 regions shuffled
together (a window, ``configs/data/s3.yaml``), batches of 8. Every path delivers the same
crops of the same windows:

- ``cpu_1_worker``: ``CropDataset.__getitems__`` batch by batch in one dataset (one worker
  reading each region once, then cutting: unpack, halo ring, cut, forcing, batch);
- ``cpu_8_workers``: the same batches taken in turn by 8 datasets, each with its own region
  cache, as ``data.device_crops=false`` runs with 8 workers: a region whose crops fall in
  several workers' batches is read and filled in by each of them;
- ``device_loader``: ``RegionWindows[w]``, a worker's whole work with ``data.device_crops=
  true`` (each region's shards read once, as float16 words, its boxes flattened);
- ``device_stage``: ``DeviceCrops`` unpacking, filling the ring and cutting the batches, the
  training device's work: timed here on the CPU (no GPU on this machine), not the loader's.

CPU seconds of the whole process (``time.process_time``: zarr's and blosc's threads too) per
crop, median of the rounds after a warm-up (the store was just written: in the page cache).
Cores a node needs: the crops 8 GPUs eat (``data_projection.json``) x the seconds per crop.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import crop_layouts as layouts
from benchmarks.harness import save_record
from screamcast.data.dataset import CropDataset
from screamcast.data.device_crops import DeviceCrops
from screamcast.data.region_sampler import RegionPlan
from screamcast.data.region_windows import RegionWindows
from screamcast.grid import PhysicsGrid, TileLayout

PER_REGION, WINDOW, ROUNDS, BATCH, WORKERS = 8, 16, 2, 8, 8
PER_WINDOW = PER_REGION * WINDOW
SHAPE = dict(n=layouts.N, channels=len(layouts.CHANNELS), crop=layouts.CROP, k=1)
SHAPE |= dict(per_region=PER_REGION, window=WINDOW, batch=BATCH, workers=WORKERS)


def dataset(store: Path) -> CropDataset:
    tiles = TileLayout(PhysicsGrid.for_face_size(layouts.N), layouts.TILE, layouts.HALO)
    span = tiles.padded - layouts.CROP + 1
    plan = RegionPlan.balanced(span, layouts.CROP, span, PER_REGION, WINDOW)  # whole faces
    channels, crop = layouts.CHANNELS, layouts.CROP
    return CropDataset(str(store), tiles, channels, crop=crop, samples=10**6, regions=plan)


def cpu_seconds(work) -> float:
    t0 = time.process_time()
    work()
    return time.process_time() - t0


def one_round(workers: list[CropDataset], windows: RegionWindows, cutter: DeviceCrops, w: int):
    """Seconds of CPU per crop for window ``w``, each path. ``workers``: datasets of their
    own (a region cache each), batch ``i`` of the window cut by ``workers[i % len]``, as
    PyTorch's workers take batches in turn: the first alone is one worker's cost."""
    first = w * PER_WINDOW
    batches = [list(range(first + b, first + b + BATCH)) for b in range(0, PER_WINDOW, BATCH)]
    out = {"cpu_1_worker": cpu_seconds(lambda: [workers[0].__getitems__(b) for b in batches])}
    out[f"cpu_{len(workers)}_workers"] = cpu_seconds(
        lambda: [workers[i % len(workers)].__getitems__(b) for i, b in enumerate(batches)]
    )
    item = []
    out["device_loader"] = cpu_seconds(lambda: item.append(windows[w]))

    def cut():
        ext = cutter.extended(item[0])
        for b in range(0, PER_WINDOW, BATCH):
            cutter.cut([(ext, item[0], j) for j in range(b, b + BATCH)])

    out["device_stage"] = cpu_seconds(cut)
    return {k: v / PER_WINDOW for k, v in out.items()}


def node_cores(per_crop: dict) -> dict:
    """Cores a node's loader needs at the default settings: the crops 8 GPUs eat
    (``benchmarks/results/data_projection.json``, k = 1) x CPU seconds per crop."""
    path = Path(__file__).parent / "results/data_projection.json"
    rows = json.loads(path.read_text())["report"]
    eat = next(r["crops_per_s_consumed"] for r in rows if r.get("default"))
    return {k: eat * v for k, v in per_crop.items() if k != "device_stage"}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/loader_cpu.json")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "stacked_mixed.zarr"
        layouts.write(store, "stacked_mixed", times=3)
        workers, dev = [dataset(store) for _ in range(WORKERS)], dataset(store)
        windows, cutter = RegionWindows(dev, 0), DeviceCrops(dev, "cpu")
        rounds = [one_round(workers, windows, cutter, w) for w in range(a.rounds + 1)][1:]
    per_crop = {k: float(np.median([r[k] for r in rounds])) for k in rounds[0]}
    loader = per_crop["device_loader"]
    ratios = {k: v / loader for k, v in per_crop.items() if k.startswith("cpu")}
    for k, v in per_crop.items():
        print(f"{k:14s} {1e3 * v:7.2f} ms CPU per crop", flush=True)
    for k, v in ratios.items():
        print(f"loader CPU per crop, {k} / device path: {v:.3g}x (target 10x)")
    cores = node_cores(per_crop)
    for k, v in cores.items():
        print(f"CPU cores a node needs to feed 8 GPUs ({k}): {v:.0f}")
    body = {
        "ms_per_crop": {k: 1e3 * v for k, v in per_crop.items()},
        "ratio_to_device_loader": ratios,
        "node_cores": cores,
        "rounds": [{k: 1e3 * v for k, v in r.items()} for r in rounds],
        "shape": SHAPE,
    }
    if a.record:
        command = "python -m benchmarks.loader_cpu " + " ".join(argv or sys.argv[1:])
        save_record("loader_cpu", "loader_cpu", command, body)
    return body


if __name__ == "__main__":
    main()
