# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Requests and read amplification of training crops at production shape, per store layout.

``python -m benchmarks.crop_layouts [--record]``: a store of production shape scaled down
(n = 256, 40 channels: 4 variables on 8 levels and 8 2-D ones, float32 noise so that bytes are
the layout's and not the codec's), read by the real ``CropDataset`` (crops of 192 = tile 128 +
2 x halo 32, k = 1 and k = 4; the halo ring's neighbour-face reads included), every request
counted by ``ReadCounter``, in the two layouts the ingestion writes:

- ``variables``: one array per variable, chunks of one time, level and face, 128 x 128 (the
  ingestion's layout before the stacked one);
- ``stacked``: one ``fields`` array, inner chunks of all 40 channels x 128 x 128, a shard per
  face and time (``--layout stacked --dtype float32``: :mod:`screamcast.data.stacked`);
- ``stacked_f16``: the same stored as float16 packed per channel (the ingestion's default:
  :mod:`screamcast.data.packing`); noise in float16 does not compress either, so its bytes are
  half the float32 stack's. What real fields add (zstd) is ``benchmarks.store_compression``.

Crops are read one by one, and cut ``per_region`` at a time from regions
(``screamcast.data.region_sampler``, the crops of 4 regions shuffled together, a whole window
read per case; the stacked store then reads whole shards). Amplification
= bytes fetched / float32 bytes of the crops delivered (overlapping crops count their shared
bytes each time, as the GPU receives them).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import zarr

from benchmarks.harness import disk_bytes, save_record
from screamcast.data import packing, stacked
from screamcast.data.calendar import encode
from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import ReadCounter
from screamcast.data.region_sampler import RegionPlan
from screamcast.grid import PhysicsGrid, TileLayout

N, TILE, HALO, CHUNK, SHARD = 256, 128, 32, 128, 512
CROP = TILE + 2 * HALO  # 192
THREE_D, TWO_D, LEVELS = ("T", "q", "u", "v"), tuple(f"f{i}" for i in range(8)), 8
WINDOW = 4  # regions shuffled together (and kept): a case reads whole windows of crops
CHANNELS = [f"{v}[{i}]" for v in THREE_D for i in range(LEVELS)] + list(TWO_D)  # 40


def write(root: Path, layout: str, times: int) -> None:
    """The store of ``layout`` under ``root``: noise in every channel, a noleap time axis."""
    import cftime

    group = zarr.open_group(root, mode="w", zarr_format=3)
    rng = np.random.default_rng(0)
    first = cftime.DatetimeNoLeap(2020, 1, 1)
    dates = [first + timedelta(hours=h) for h in range(times)]  # hourly, past a day too
    counts, units, calendar = encode(np.array(dates))
    t = group.create_array("time", shape=(times,), dtype="int64", dimension_names=["time"])
    t[:] = counts
    t.attrs.update({"units": units, "calendar": calendar})
    if layout.startswith("stacked"):
        spec = stacked.stack_spec(
            [(v, LEVELS, "lev", {}) for v in THREE_D] + [(v, 1, None, {}) for v in TWO_D]
        )
        codec = None
        if layout in ("stacked_f16", "stacked_mixed"):  # noise: mean 0, spread ~5 everywhere
            # mixed: the last channel (a surface pressure's place) float32, the rest float16
            exact = [len(CHANNELS) - 1] if layout == "stacked_mixed" else []
            codec = packing.codec(
                [0.0] * len(CHANNELS), [6.0 / 64] * len(CHANNELS), axis=1, exact=exact
            )
        array = stacked.create_stack(group, spec, times, N, CHUNK, SHARD, codec)
        for i in range(times):  # (1, C, 6, n, n): every shard of a time written once
            array[i : i + 1] = rng.standard_normal((1, len(CHANNELS), 6, N, N), np.float32)
        return
    for v in THREE_D + TWO_D:
        lead = (times, LEVELS) if v in THREE_D else (times,)
        dims = ["time", "lev"] * (v in THREE_D) or ["time"]
        a = group.create_array(
            v,
            shape=(*lead, 6, N, N),
            chunks=(1,) * len(lead) + (1, CHUNK, CHUNK),
            dtype="float32",
            dimension_names=[*dims, "face", "y", "x"],
        )
        a[:] = rng.standard_normal(a.shape, np.float32)


def noise_gain(root: Path, layout: str) -> float:
    """The codec's own gain on this store's noise: bytes at the stored dtype / bytes on disk."""
    itemsize = 4 if layout == "stacked" else 2  # mixed: 1 of 40 channels as two halves
    arrays = [(name, a) for name, a in zarr.open_group(root, mode="r").arrays() if a.ndim > 1]
    raw = sum(a.size * itemsize for _, a in arrays)
    return raw / sum(disk_bytes(root, name) for name, _ in arrays)


def measure(root: Path, layout: str, steps: int, regions: RegionPlan | None, crops: int) -> dict:
    counters = []

    def wrap(store):
        counters.append(ReadCounter(store))
        return counters[-1]

    tiles = TileLayout(PhysicsGrid.for_face_size(N), TILE, HALO)
    data = CropDataset(
        str(root),
        tiles,
        CHANNELS,
        crop=CROP,
        steps=steps,
        samples=crops,
        store_wrapper=wrap,
        regions=regions,
    )
    for first in range(0, crops, 8):  # batches of 8, as the DataLoader asks
        data.__getitems__(list(range(first, min(first + 8, crops))))
    reads = counters[0].reset()
    delivered = crops * 4 * CROP * CROP * len(CHANNELS) * (steps + 1)
    return {
        "layout": layout,
        "n": N,
        "shard": SHARD if layout.startswith("stacked") else None,
        "k": steps,
        "regions": None if regions is None else f"{regions.size} px, {regions.per_region} crops",
        "crops": crops,
        "requests_per_crop": reads.requests / crops,
        "amplification": reads.bytes / delivered,
        "mb_per_crop": reads.bytes / crops / 1e6,
    }


def plans() -> list[RegionPlan | None]:
    span = N + 2 * HALO - CROP + 1  # 129 origins a side (n = 256)
    if N > 256:  # regions smaller than a face, over shards smaller than a face
        return [RegionPlan.balanced(span, CROP, s, per, WINDOW) for s, per in STRIDES]
    return [None] + [
        RegionPlan.balanced(span, CROP, stride, per, WINDOW)
        for stride, per in ((65, 4), (129, 8), (129, 16))
    ]


STRIDES = ((129, 8), (129, 16), (193, 16))  # --n 512: blocks of 128/129 and 192/193 origins


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/crop_layouts.json")
    ap.add_argument("--crops", type=int, default=16, help="crops read one by one (16)")
    ap.add_argument(
        "--n", type=int, default=256, help="512: the stacked layout only, shards of 256 (4 a face)"
    )
    a = ap.parse_args(argv)
    global N, SHARD
    N, SHARD = a.n, 512 if a.n <= 256 else 256
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        layouts = ("variables", "stacked", "stacked_f16") if N <= 256 else ("stacked",)
        for layout in layouts:
            root = Path(tmp) / f"{layout}.zarr"
            write(root, layout, times=5)
            gain = noise_gain(root, layout)
            for steps in (1, 4):
                for plan in plans():
                    crops = a.crops if plan is None else WINDOW * plan.per_region
                    report.append(measure(root, layout, steps, plan, crops) | {"noise_gain": gain})
                    r = report[-1]
                    print(
                        f"{layout:10s} k={steps} {str(r['regions']):18s} "
                        f"{r['requests_per_crop']:7.2f} requests/crop  "
                        f"amplification {r['amplification']:.2f}",
                        flush=True,
                    )
    if a.record:
        command = "python -m benchmarks.crop_layouts " + " ".join(argv or sys.argv[1:])
        name = "crop_layouts" if N <= 256 else f"crop_layouts_n{N}"
        save_record(name, "crop_layouts", command, {"report": report, "n": N, "shard": SHARD})
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
