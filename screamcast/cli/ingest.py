# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-ingest SRC... --output DST`` (or ``python -m screamcast.ingest``): E3SM/SCREAM
history files (netCDF or zarr, local or s3://, EAM or EAMxx layout) -> a cube zarr store for
training, in time blocks on Dask, resumable (run the same command again after a kill), with the
normalisation statistics."""

from __future__ import annotations

import argparse
import errno
import json
import sys

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain
from screamcast.data.credentials import redact
from screamcast.data.remote import is_s3, s3_message
from screamcast.ingest.errors import IngestError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="screamcast-ingest", description=plain(__doc__))
    p.add_argument("sources", nargs="+", help="history files: paths, globs or s3:// URLs")
    p.add_argument("--output", required=True, help="the store to write (local or s3://)")
    p.add_argument(
        "--variables",
        default="",
        help="comma-separated (default: every variable with an ncol dim); EAMxx's horiz_winds "
        "becomes u and v",
    )
    p.add_argument(
        "--layers",
        default="",
        help="coarsen 3-D fields to pressure-weighted layers (column integrals conserved): a "
        "count of layers of about equal pressure thickness (8), or interface indices "
        "(0,18,26,...,72); needs hyai, hybi, P0 and PS in the files",
    )
    p.add_argument("--levels", default="", help="without --layers: the level indices to keep")
    p.add_argument("--block", type=int, default=8, help="times per task (bounds worker memory)")
    p.add_argument(
        "--chunk", type=int, default=128, help="(inner) chunk side in cells (default 128)"
    )
    p.add_argument(
        "--layout",
        choices=("stacked", "variables"),
        default="stacked",
        help="stacked (default): every channel in one array, sharded for training crops "
        "(docs/data.md); variables: one array per variable",
    )
    p.add_argument(
        "--shard", type=int, default=256, help="stacked: shard side in cells (default 256)"
    )
    p.add_argument(
        "--dtype",
        choices=("float16", "float32"),
        default="",
        help="storage: float16 (the stacked default; packed per channel about the first "
        "block, error <= 2**-11 |x - offset|, docs/data.md) or float32 (exact)",
    )
    p.add_argument(
        "--budget",
        default="",
        help="float16: the largest error a variable may have, e.g. PS=3,T=0.05 (defaults: PS 1 "
        "Pa, T 0.1 K, winds 0.1 m/s; docs/ingest.md); a channel over it makes the stack float32",
    )
    p.add_argument("--pg", type=int, default=2, help="cells per element edge without ne/fv_nphys")
    p.add_argument("--workers", type=int, default=None, help="local Dask workers (0: in-process)")
    p.add_argument("--scheduler", default="", help="run on an existing Dask cluster (address)")
    p.add_argument("--overwrite", action="store_true", help="replace another existing store")
    p.add_argument("--allow-gaps", action="store_true", help="missing times become NaN steps")
    p.add_argument("--storage-options", default="{}", help="JSON for s3fs (endpoint, keys)")
    p.add_argument("--no-progress", action="store_true")
    return p


@guarded
def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    storage_options: dict = {}
    try:
        storage_options = json.loads(a.storage_options)
        from screamcast.ingest.run import IngestOptions, ingest

        options = IngestOptions(
            sources=a.sources,
            output=a.output,
            variables=[v for v in a.variables.split(",") if v],
            layers=a.layers,
            levels=[int(v) for v in a.levels.split(",") if v],
            block=a.block,
            chunk=a.chunk,
            layout=a.layout,
            shard=a.shard,
            dtype=a.dtype,
            pg=a.pg,
            workers=a.workers,
            scheduler=a.scheduler,
            overwrite=a.overwrite,
            allow_gaps=a.allow_gaps,
            storage_options=storage_options,
            budget=budget_of(a.budget),
            progress=not a.no_progress,
        )
        summary = ingest(options)
    except (IngestError, ValueError, FileExistsError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the disk, the network: what finished is kept
        worded = s3_message(a.output, storage_options, err) if is_s3(a.output) else None
        if worded:  # a bucket, credentials or endpoint to fix, not a transient failure
            print(f"error: {redact(worded, storage_options)}", file=sys.stderr)
            return 2
        full = err.errno == errno.ENOSPC
        print(
            f"error: {'no space left on the device' if full else type(err).__name__} while "
            f"writing {a.output}: {err}. The blocks written so far are kept: "
            f"{'free space, then ' if full else ''}run the same command again to resume",
            file=sys.stderr,
        )
        return 3
    print(f"{a.output}: {json.dumps(summary)}")
    return 0


def budget_of(text: str) -> dict[str, float]:
    """``--budget PS=3,T=0.05`` as ``{"PS": 3.0, "T": 0.05}``."""
    out = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise IngestError(
                f"--budget: {item!r} is not VARIABLE=ERROR (e.g. PS=3,T=0.05)"
            ) from None
        if not name.strip() or not out[name.strip()] > 0:
            raise IngestError(f"--budget: {item!r}: the error must be a positive number")
    return out


if __name__ == "__main__":
    sys.exit(main())
