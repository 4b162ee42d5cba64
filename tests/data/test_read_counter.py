# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Counting a training crop's reads: requests and bytes, against the chunk files it touches."""

from pathlib import Path

import numpy as np

from screamcast.data.crops import plan_crop
from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import ReadCounter
from screamcast.grid import PhysicsGrid, TileLayout

PROG = ["u", "v", "vorticity", "tracer", "temperature"]
DIAG, STATIC = ["precip"], ["orography", "land_fraction"]
CHUNK = 8  # the tiny store's chunks: 1 time x 1 face x 8 x 8


def chunk_files(store: Path, var: str, lead: tuple, face: int, ys: slice, xs: slice):
    """The chunk files of ``var`` that a box touches (independently of zarr)."""
    files = []
    for cy in range(ys.start // CHUNK, (ys.stop - 1) // CHUNK + 1):
        for cx in range(xs.start // CHUNK, (xs.stop - 1) // CHUNK + 1):
            files.append(store / var / "c" / "/".join(map(str, (*lead, face, cy, cx))))
    return files


def test_a_lazy_crop_reads_exactly_the_chunks_it_touches(tiny_store):
    layout = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    counters = []

    def wrap(store):
        counters.append(ReadCounter(store))
        return counters[-1]

    data = CropDataset(
        str(tiny_store),
        layout,
        PROG,
        DIAG,
        STATIC,
        crop=16,
        steps=1,
        samples=8,
        seed=3,
        store_wrapper=wrap,
    )
    data[0]  # opens the arrays: the metadata is read once, here
    counter = counters[0]
    assert counter.reset().metadata_requests > 0
    for i in range(1, 8):
        t, face, oy, ox = data.draw(i)
        data[i]
        reads = counter.reset()
        plan = plan_crop(data.geo, face, oy, ox, 16)
        boxes = [(face, *plan.inner), *plan.boxes]
        expected = []
        for var in PROG + DIAG:
            for tt in (t, t + 1):
                expected += [
                    f for g, ys, xs in boxes for f in chunk_files(tiny_store, var, (tt,), g, ys, xs)
                ]
        for var in STATIC:
            expected += [
                f for g, ys, xs in boxes for f in chunk_files(tiny_store, var, (), g, ys, xs)
            ]
        assert reads.metadata_requests == 0
        assert reads.requests == len(expected), (i, reads, len(expected))
        assert reads.bytes == sum(f.stat().st_size for f in expected)
        delivered = 4 * 16 * 16 * (len(PROG + DIAG) * 2 + len(STATIC))  # float32 crop bytes
        print(
            f"sample {i}: {reads.requests} requests, amplification "
            f"{reads.bytes / delivered:.2f} (fetched compressed / delivered float32)"
        )
    assert np.isfinite(reads.bytes)
