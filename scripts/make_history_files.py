# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Synthetic E3SM history files to try the ingestion on (docs/data.md, "From a SCREAM run").

``python scripts/make_history_files.py DIR [--layout eam|eamxx] [--files 12] [--ne 8]``: the
analytic flows of screamcast.sources.synthetic as EAM (CDF5, ``(time, lev, ncol)``) or EAMxx
(netCDF-4, ``(time, ncol, lev)``, ``horiz_winds``) history files, ``noleap`` times across
Feb 28 -> Mar 1, columns in E3SM's order, hybrid coefficients and surface pressure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screamcast.sources.synthetic_e3sm import write_history


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--layout", choices=["eam", "eamxx"], default="eamxx")
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--times-per-file", type=int, default=4)
    ap.add_argument("--ne", type=int, default=8)
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--step-hours", type=float, default=6.0)
    args = ap.parse_args(argv)
    fmt = "NETCDF3_64BIT_DATA" if args.layout == "eam" else "NETCDF4"
    paths = write_history(
        args.folder,
        args.layout,
        files=args.files,
        times_per_file=args.times_per_file,
        ne=args.ne,
        levels=args.levels,
        step_hours=args.step_hours,
        netcdf_format=fmt,
    )
    print(f"wrote {len(paths)} {args.layout} files to {args.folder} ({paths[0].name} ...)")


if __name__ == "__main__":
    main()
