# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where the loader's CPU time goes when it cuts crops from regions (issue 59, item 3).

    python scripts/research/loader_profile.py [--workdir /tmp/loader_profile]

The production-shaped float16 stack of ``benchmarks.crop_layouts`` (n = 256, 40 channels,
3 times) written locally (no S3: the loader's own work only), crops of 192 at k = 1, 8 cut
from each whole-face region, as ``benchmarks.loader_s3`` reads them. Prints the seconds per
region of 4 regions after a warm-up, then one region's profile split into reading and
decoding the shards, the halo assembly, and the rest (cutting, forcing, batching).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = {  # the loader's functions whose cumulative time is each part
    "read and decode": "with_retries",
    "halo assembly": "assemble",
    "forcing": "_forcing",
}


def dataset(root: Path):
    sys.path.insert(0, str(ROOT))
    from benchmarks import crop_layouts as layouts
    from screamcast.data.dataset import CropDataset
    from screamcast.data.region_sampler import RegionPlan
    from screamcast.grid import PhysicsGrid, TileLayout

    if not root.exists():
        layouts.write(root, "stacked_f16", times=3)
    tiles = TileLayout(PhysicsGrid.for_face_size(layouts.N), layouts.TILE, layouts.HALO)
    span = tiles.padded - layouts.CROP + 1
    plan = RegionPlan.balanced(span, layouts.CROP, span, 8, 1)  # a region per face, 8 crops
    crop, channels = layouts.CROP, layouts.CHANNELS
    return CropDataset(str(root), tiles, channels, crop=crop, samples=48, regions=plan)


def cumulative(stats: pstats.Stats, name: str) -> float:
    return sum(v[3] for k, v in stats.stats.items() if k[2] == name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", default="/tmp/loader_profile")
    a = p.parse_args(argv)
    data = dataset(Path(a.workdir) / "stacked_f16.zarr")
    data.__getitems__(list(range(8)))  # warm-up: metadata, geometry
    seconds = []
    for r in range(1, 5):
        t0 = time.perf_counter()
        data.__getitems__(list(range(8 * r, 8 * r + 8)))
        seconds.append(time.perf_counter() - t0)
    print("seconds per region of 8 crops:", " ".join(f"{s:.3f}" for s in seconds))
    profile = cProfile.Profile()
    profile.enable()
    data.__getitems__(list(range(40, 48)))
    profile.disable()
    stats = pstats.Stats(profile)
    total = cumulative(stats, "__getitems__")
    parts = {part: cumulative(stats, name) for part, name in PARTS.items()}
    parts["the rest (cutting, batching)"] = total - sum(parts.values())
    print(f"one region profiled: {total:.3f} s")
    for part, s in parts.items():
        print(f"  {part}: {s:.3f} s ({s / 8 * 1000:.1f} ms per crop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
