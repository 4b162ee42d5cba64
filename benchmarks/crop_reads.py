# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Requests and read amplification of lazily read training crops (docs/performance.md).

``python -m benchmarks.crop_reads [--record]``: analytic stores laid out as the demo's (n=48,
one chunk per face and time) and as an ingested store's (n=96, 32 x 32 chunks), the demo's
crops (32, tile 16, halo 8), 64 crops for k=1 and k=4, every read counted by ``ReadCounter``:
crops read one by one, and crops cut 4 at a time from shared regions (``region_sampler``, the
crops of 16 regions shuffled together). Amplification: compressed bytes fetched over the
float32 bytes the crops deliver.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.harness import save_record
from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import ReadCounter
from screamcast.data.region_sampler import RegionPlan
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.sources.synthetic import DIAGNOSTIC, PROGNOSTIC, STATIC, write_store


def measure(
    store: Path,
    n: int,
    crop: int,
    steps: int,
    crops: int,
    variables: tuple = (PROGNOSTIC, DIAGNOSTIC, STATIC),
    region_stride: int = 0,
) -> dict:
    """Requests and amplification of ``crops`` crops; ``variables`` (prognostic, diagnostic,
    static) channel names, the analytic store's by default; ``region_stride > 0``: cut 4 at a
    time from regions (per crop: the totals over all crops, which share their regions' reads)."""
    prognostic, diagnostic, static = (list(v) for v in variables)
    counters = []
    layout = TileLayout(PhysicsGrid.for_face_size(n), 16, 8)
    regions = None
    if region_stride:
        regions = RegionPlan.balanced(layout.padded - crop + 1, crop, region_stride, 4, 16)
    data = CropDataset(
        str(store),
        layout,
        prognostic,
        diagnostic,
        static,
        crop=crop,
        steps=steps,
        samples=crops + 1,
        seed=0,
        store_wrapper=lambda s: counters.append(ReadCounter(s)) or counters[-1],
        regions=regions,
    )
    data[0]  # opens the arrays (metadata)
    counters[0].reset()
    requests, amplification = [], []
    delivered = 4 * crop * crop * (len(prognostic + diagnostic) * (steps + 1) + len(static))
    for i in range(1, crops + 1):
        data[i]
        reads = counters[0].reset()
        requests.append(reads.requests)
        amplification.append(reads.bytes / delivered)
    return {
        "n": n,
        "crop": crop,
        "steps": steps,
        "crops": crops,
        "region_stride": region_stride,
        "region_size": regions.size if regions else None,
        "requests_per_crop": float(np.mean(requests)),
        "amplification_total": float(np.sum(amplification) / crops),
        "requests_median": float(np.median(requests)),
        "requests_min": min(requests),
        "requests_max": max(requests),
        "amplification_median": float(np.median(amplification)),
        "amplification_max": float(max(amplification)),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/crop_reads.json")
    a = ap.parse_args(argv)
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        demo = write_store(Path(tmp) / "demo.zarr", 48, days=2)
        ingested = write_store(Path(tmp) / "n96.zarr", 96, days=1, chunk=32)
        for store, n in ((demo, 48), (ingested, 96)):
            for stride in (0, n // 3):
                report += [measure(store, n, 32, k, 64, region_stride=stride) for k in (1, 4)]
    print(json.dumps(report, indent=1))
    if a.record:
        command = "python -m benchmarks.crop_reads " + " ".join(argv or sys.argv[1:])
        save_record("crop_reads", "crop_reads", command, {"report": report})
    return report


if __name__ == "__main__":
    main()
