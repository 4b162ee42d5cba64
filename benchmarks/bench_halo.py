# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Halo gather / adjoint against ``torch.clone`` of the same number of bytes (the tiles).

n=192, 8 channels, tile 64, halo 16 (DESIGN.md section 3). The targets are the measured
limits of stock torch on 2 CPU cores (docs/performance.md: every formulation tried): gather
<= 3.5x, adjoint (intra-face) <= 4x, cross-face adjoint (opt-in) <= 7x. All three run in one
round-robin, each right after its own clone, so each starts with the caches a clone leaves (as
in a rollout, where the forwards run between them). The halo is ~1-2% of a CPU rollout step;
its real target is the GPU check's ``phases_s`` when a GPU is lent.
"""

from __future__ import annotations

import argparse

import torch

from benchmarks.harness import Result, interleaved_many, record
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator


def _steady_allocator() -> None:
    """Keep large blocks in glibc's heap (no mmap/munmap per 16 MB tensor): the clone baseline
    otherwise swings from 0.8 to 4.6 ms between runs with the allocator's adaptive mmap
    threshold, and the ratios with it. A long rollout's allocator is in this steady state."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc: nothing to steady
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 1 << 30)
    libc.mallopt(m_trim_threshold, 1 << 30)


def run(quick: bool = False, n: int = 192, channels: int = 8, tile: int = 64, halo: int = 16):
    _steady_allocator()
    torch.manual_seed(0)
    op = HaloOperator(TileLayout(PhysicsGrid.for_face_size(n), tile, halo))
    x = torch.randn(1, channels, 6, n, n)
    tiles = op.gather(x)
    op.counts(torch.float32, False), op.counts(torch.float32, True)  # built once, as in a rollout
    repeats = 10 if quick else 120  # the ratio of medians of 120 interleaved pairs
    case = f"n{n}_c{channels}_t{tile}_h{halo}"

    def clone():
        return tiles.clone()

    cases = [
        ("gather", lambda: op.gather(x), 3.5),
        ("adjoint", lambda: op.adjoint(tiles, cross_face=False), 4.0),
        # what --halo-adjoint runs since issue 19: the cosine tile window
        ("adjoint_cosine", lambda: op.adjoint(tiles, cross_face=False, window="cosine"), 4.0),
        ("adjoint_cross_face", lambda: op.adjoint(tiles, cross_face=True), 7.0),
    ]
    fns = {}
    for name, fn, _ in cases:  # round-robin: clone, gather, clone, adjoint, clone, cross-face
        fns[f"clone before {name}"] = clone
        fns[name] = fn
    t = interleaved_many(fns, repeats=repeats)
    results = [
        Result(
            "halo",
            f"{name}[{case}]",
            t[name],
            t[f"clone before {name}"],
            target,
            "its own clone of the tiles, same round-robin",
        )
        for name, _, target in cases
    ]
    context = {"threads": torch.get_num_threads(), "tile_bytes": tiles.nbytes, "repeats": repeats}
    return results, context


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    results, context = run(args.quick)
    for r in results:
        print(r.line())
    if not args.no_record:
        record("halo", results, context)


if __name__ == "__main__":
    main()
