# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Which store layout serves crops with the fewest requests and bytes (docs/performance.md).

``python -m benchmarks.crop_layouts [--record]``: a store of production shape scaled down
(n = 256, 40 channels, float32 noise written uncompressed, so bytes are the layout's and not
the codec's), crops of 192 x 192 (tile 128, halo 32) at t and t+1 (k = 1) plus 4 static
channels, in four layouts:

- ``per-channel 128``: one array per channel, chunks of one time, one face, 128 x 128 (what
  the ingestion writes for n = 256 by default);
- ``per-channel 64``: the same with 64 x 64 chunks;
- ``stacked 64``: one ``(time, channel, face, y, x)`` array, chunks of all 40 channels x 64 x 64;
- ``stacked, sharded``: the same inner chunks in zarr v3 shards of a whole face.

Each is read for crops drawn one by one and for crops cut ``per_region`` at a time from
regions (``screamcast.data.region_sampler``). What a crop reads here is its box inside the
face, the bulk of its bytes (the halo ring's neighbour-face boxes add a few more small reads in
the dataset). Counted with ``ReadCounter``: requests per crop, and amplification = bytes fetched
over the float32 bytes of the crops delivered.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import zarr

from benchmarks.harness import save_record
from screamcast.data.read_counter import ReadCounter
from screamcast.data.region_sampler import RegionPlan

N, CHANNELS, STATIC, TIMES = 256, 40, 4, 3
TILE, HALO = 128, 32
CROP = TILE + 2 * HALO  # 192
LAYOUTS = ("per-channel 128", "per-channel 64", "stacked 64", "stacked, sharded")


def write(root: Path, layout: str) -> None:
    """The store of ``layout`` under ``root`` (noise: every byte a real byte)."""
    rng = np.random.default_rng(0)
    group = zarr.open_group(root, mode="w", zarr_format=3)
    fields = rng.standard_normal((TIMES, CHANNELS, 6, N, N), dtype=np.float32)
    static = rng.standard_normal((STATIC, 6, N, N), dtype=np.float32)
    if layout.startswith("per-channel"):
        c = int(layout.split()[-1])
        for i in range(CHANNELS):
            a = group.create_array(
                f"f{i}",
                shape=(TIMES, 6, N, N),
                chunks=(1, 1, c, c),
                dtype="float32",
                compressors=None,
            )
            a[:] = fields[:, i]
        for i in range(STATIC):
            a = group.create_array(
                f"s{i}", shape=(6, N, N), chunks=(1, c, c), dtype="float32", compressors=None
            )
            a[:] = static[i]
        return
    shards = {"shards": (1, CHANNELS, 1, N, N)} if "sharded" in layout else {}
    a = group.create_array(
        "fields",
        shape=fields.shape,
        chunks=(1, CHANNELS, 1, 64, 64),
        dtype="float32",
        compressors=None,
        **shards,
    )
    a[:] = fields
    shards = {"shards": (STATIC, 1, N, N)} if "sharded" in layout else {}
    s = group.create_array(
        "static",
        shape=static.shape,
        chunks=(STATIC, 1, 64, 64),
        dtype="float32",
        compressors=None,
        **shards,
    )
    s[:] = static


def boxes(regions: RegionPlan | None, crops: int, seed: int = 0):
    """``(t, face, y0, x0, size)`` boxes inside the face to read, and how many crops each
    serves: one per crop, or one per region of ``per_region`` crops."""
    span = N + 2 * HALO - CROP + 1
    rng = np.random.default_rng(seed)
    if regions is None:
        for _ in range(crops):
            t, f = int(rng.integers(0, TIMES - 1)), int(rng.integers(0, 6))
            oy, ox = (int(v) for v in rng.integers(0, span, 2))
            yield t, f, oy, ox, CROP, 1
        return
    done = 0
    while done < crops:
        rows = regions.draw(rng, 0, TIMES - 1)
        for t, f, ry, rx in {(int(r[0]), int(r[1]), int(r[4]), int(r[5])) for r in rows}:
            top = N + 2 * HALO - regions.size  # a region lies inside the extended face
            yield t, f, min(ry, top), min(rx, top), regions.size, regions.per_region
        done += len(rows)


def measure(root: Path, layout: str, regions: RegionPlan | None, crops: int) -> dict:
    counter = ReadCounter(zarr.storage.LocalStore(root, read_only=True))
    group = zarr.open_group(counter, mode="r")
    stacked = not layout.startswith("per-channel")
    arrays = (
        [group["fields"], group["static"]]
        if stacked
        else [group[f"f{i}"] for i in range(CHANNELS)] + [group[f"s{i}"] for i in range(STATIC)]
    )
    counter.reset()
    served = 0
    for t, f, oy, ox, size, serves in boxes(regions, crops):
        # the box inside the face (the halo's outer part lies on the neighbour faces)
        y0, x0 = max(oy - HALO, 0), max(ox - HALO, 0)
        y1, x1 = min(oy - HALO + size, N), min(ox - HALO + size, N)
        if stacked:
            arrays[0][t : t + 2, :, f, y0:y1, x0:x1]
            arrays[1][:, f, y0:y1, x0:x1]
        else:
            for a in arrays[:CHANNELS]:
                a[t : t + 2, f, y0:y1, x0:x1]
            for a in arrays[CHANNELS:]:
                a[f, y0:y1, x0:x1]
        served += serves
    reads = counter.reset()
    delivered = served * 4 * CROP * CROP * (2 * CHANNELS + STATIC)
    return {
        "layout": layout,
        "regions": None if regions is None else f"{regions.size} px, {regions.per_region} crops",
        "crops": served,
        "requests_per_crop": reads.requests / served,
        "amplification": reads.bytes / delivered,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/crop_layouts.json")
    a = ap.parse_args(argv)
    span = N + 2 * HALO - CROP + 1  # 129 origins a side
    plans = [None] + [
        RegionPlan.balanced(span, CROP, stride, per, 16) for stride, per in ((65, 4), (129, 8))
    ]
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        for layout in LAYOUTS:
            root = Path(tmp) / layout.replace(" ", "_").replace(",", "")
            write(root, layout)
            for plan in plans:
                report.append(measure(root, layout, plan, crops=64))
                r = report[-1]
                print(
                    f"{layout:18s} {str(r['regions']):22s} {r['requests_per_crop']:7.2f} "
                    f"requests/crop  amplification {r['amplification']:.2f}",
                    flush=True,
                )
    if a.record:
        command = "python -m benchmarks.crop_layouts " + " ".join(argv or sys.argv[1:])
        save_record("crop_layouts", "crop_layouts", command, {"report": report})
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
