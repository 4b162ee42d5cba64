# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Ingestion throughput and memory (docs/performance.md).

``python -m benchmarks.bench_ingest [--quick] [--no-record]``: EAM history files on ne48pg2
(n = 96; 20 files of 2 times; T, U, V, Q on 8 levels plus PS and PRECT: ~7.5 MB per time).

- throughput: ``python -m screamcast.ingest`` in-process (block 4) against a plain read of the
  same variables from the same files plus a plain zarr write of arrays of the output's shapes
  and chunks (no mapping, no statistics, no markers), timed alternately;
- memory: the peak RSS of the ingestion process for blocks of 1, 4 and 16 times, and for 10
  against 20 files at block 4: bounded by the block, not by the number of files;
- the chunk choice: training crops (32 x 32, the demo's tiling) read from the first 4 files
  ingested with the default ``--chunk 128`` (here: a whole face, n = 96 < 128) against
  ``--chunk 32``: requests and read amplification per crop (``ReadCounter``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import xarray as xr
import zarr

from benchmarks.harness import Result, interleaved_many, record
from screamcast.ingest import IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history

VARIABLES = ["T", "U", "V", "Q", "PS", "PRECT"]


def plain_read_and_write(files: list[Path], out: Path, n: int) -> None:
    """The bytes the ingestion reads and writes, without anything else."""
    shutil.rmtree(out, ignore_errors=True)
    group = zarr.open_group(out, mode="w-")
    arrays, t = {}, 0
    for path in files:
        ds = xr.open_dataset(path)[VARIABLES].load()
        T = ds.sizes["time"]
        for v in VARIABLES:
            values = ds[v].values.reshape(*ds[v].shape[:-1], 6, n, n)  # (t, [lev,] 6, n, n)
            if v not in arrays:
                shape = (len(files) * T, *values.shape[1:])
                chunks = (1,) * (values.ndim - 2) + (n, n)
                arrays[v] = group.create_array(v, shape=shape, chunks=chunks, dtype="float32")
            arrays[v][t : t + T] = values
        t += T
        ds.close()


def peak_rss_mb(files: list[Path], out: Path, block: int) -> float:
    """Peak resident memory of one ingestion process (MB)."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "screamcast.ingest", *map(str, files), "--output", str(out)]
    cmd += ["--workers", "0", "--block", str(block), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, cwd=Path(__file__).parents[1])
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return usage.ru_maxrss / 1024


def crop_reads_of(files: list[Path], out: Path, n: int, chunk: int) -> dict:
    """Requests and amplification of 32 x 32 one-step crops of T's 8 levels and PS."""
    from benchmarks.crop_reads import measure

    ingest(IngestOptions([str(p) for p in files], str(out), chunk=chunk, workers=0, progress=False))
    channels = ([f"T[{i}]" for i in range(8)] + ["PS"], [], [])
    return measure(out, n, 32, 1, 20, channels)


def run(quick: bool = False) -> tuple[list[Result], dict]:
    ne, files_n, per_file = (24, 10, 2) if quick else (48, 20, 2)
    n = 2 * ne
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = write_history(tmp / "h", "eam", files=files_n, times_per_file=per_file, ne=ne)
        mb = sum(p.stat().st_size for p in files) / 1e6

        def candidate():
            shutil.rmtree(tmp / "ingested.zarr", ignore_errors=True)
            ingest(
                IngestOptions(
                    [str(p) for p in files],
                    str(tmp / "ingested.zarr"),
                    block=4,
                    workers=0,
                    progress=False,
                )
            )

        fns = {"ingest": candidate, "plain": lambda: plain_read_and_write(files, tmp / "p.zarr", n)}
        t = interleaved_many(fns, repeats=1 if quick else 3, warmup=1)
        memory = {f"block_{b}": peak_rss_mb(files, tmp / "m.zarr", b) for b in (1, 4, 16)}
        memory["block_4_half_the_files"] = peak_rss_mb(files[: files_n // 2], tmp / "m.zarr", 4)
        chunks = {c: crop_reads_of(files[:4], tmp / f"c{c}.zarr", n, c) for c in (n, 32)}
    case = f"ne{ne}pg2_{files_n}files_{mb:.0f}MB"
    results = [
        Result(
            "ingest",
            f"throughput[{case}]",
            t["ingest"],
            t["plain"],
            2.0,
            "plain read of the same variables + plain zarr write",
            note=f"{mb / t['ingest']:.0f} MB/s in, one process",
        )
    ]
    context = {"input_mb": mb, "peak_rss_mb": memory, "files": files_n, "times": files_n * per_file}
    context["crops_by_chunk"] = chunks
    return results, context


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    results, context = run(args.quick)
    for r in results:
        print(r.line())
    print("peak RSS (MB):", {k: round(v) for k, v in context["peak_rss_mb"].items()})
    for chunk, reads in context["crops_by_chunk"].items():
        print(f"chunk {chunk}: {reads}")
    if not args.no_record:
        record("ingest", results, context, "python -m benchmarks.bench_ingest")


if __name__ == "__main__":
    main()
