# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What reading a whole-face region's shards costs the loader's CPU (issue 59, item 3).

    python scripts/research/shard_read_cost.py [--workdir /tmp/shard_read_cost] [--repeats 3]

The per-channel-dtype stack of ``benchmarks.crop_layouts`` (n = 256, 40 channels, 3 times)
written locally; a whole-face region at k = 1 reads 10 shards (5 faces, 2 times). CPU
seconds (all threads) and wall seconds, median of ``--repeats``, of:

- the 10 shards read by zarr as float32 values (what cutting on the CPU reads);
- the same read as stored float16 words (``raw_stack.raw_words``: what device crops read);
- their files' bytes alone (from the page cache);
- blosc-zstd decompression alone, of 40 inner chunks of the store's shape.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def timed(work, repeats: int) -> tuple[float, float]:
    """Median ``(CPU, wall)`` seconds of ``work()``."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        work()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall))


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    import numcodecs
    import zarr

    from benchmarks import crop_layouts as layouts
    from screamcast.data.raw_stack import raw_words

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", default="/tmp/shard_read_cost")
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args(argv)
    store = Path(a.workdir) / "stacked_mixed.zarr"
    if not store.exists():
        layouts.write(store, "stacked_mixed", times=3)
    fields = zarr.open_group(store, mode="r")["fields"]
    words = raw_words(fields)
    files = sorted(f for f in (store / "fields" / "c").rglob("*") if f.is_file())
    chunk = np.random.default_rng(0).standard_normal((1, 41, 1, 128, 128)).astype(np.float16)
    blosc = numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    packed = blosc.encode(chunk)
    cases = {
        "float32 values (zarr)": lambda: [fields[0:2, :, f] for f in range(5)],
        "float16 words (zarr)": lambda: [words[0:2, :, f] for f in range(5)],
        "the files' bytes": lambda: [f.read_bytes() for f in files[:10]],
        "blosc-zstd, 40 inner chunks": lambda: [blosc.decode(packed) for _ in range(40)],
    }
    cases["float16 words (zarr)"]()  # warm-up: metadata, page cache
    for name, work in cases.items():
        cpu, wall = timed(work, a.repeats)
        print(f"{name:28s} CPU {1e3 * cpu:6.1f} ms, wall {1e3 * wall:6.1f} ms (10 shards)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
