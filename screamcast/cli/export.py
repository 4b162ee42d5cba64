# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-export``: a rollout output or cube store in E3SM's own format.

Native ``(time, [lev,] ncol)`` columns in the grid's exact order (pair them with
``screamcast-grid scrip``'s file in ncremap or UXarray), or a regular lat-lon grid by
conservative remapping (``--latlon 180x360``); netCDF files named ``<prefix>.<date>.nc`` as
EAMxx names its own, or one zarr store; CF-1.7 metadata (:mod:`screamcast.evaluation.export`).
"""

from __future__ import annotations

import argparse
import sys

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain
from screamcast.config.choices import AVERAGES


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="screamcast-export", description=plain(__doc__))
    p.add_argument("source", help="a rollout output or a store (cube or ncol layout)")
    p.add_argument(
        "--output",
        required=True,
        help="netCDF: the files' prefix (PREFIX.YYYY-MM-DD-SSSSS.nc); zarr: the store",
    )
    p.add_argument("--format", default="netcdf", choices=("netcdf", "zarr"))
    p.add_argument("--variables", default="", help="a comma-separated subset (default: all)")
    p.add_argument("--average", default="none", choices=AVERAGES, help="time means")
    p.add_argument("--latlon", metavar="NLATxNLON", help="a regular lat-lon grid instead")
    p.add_argument("--times-per-file", type=int, help="netCDF: times per file (default all)")
    p.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    p.add_argument("--storage-options", default="{}", help="JSON, for an s3:// source")
    return p


@guarded
def main(argv: list[str] | None = None) -> int:
    import json

    args = parser().parse_args(argv)
    from screamcast.evaluation.export_files import export, parse_latlon

    try:
        latlon = parse_latlon(args.latlon) if args.latlon else None
        options = json.loads(args.storage_options)
        names = [v.strip() for v in args.variables.split(",") if v.strip()]
        written = export(
            args.source,
            args.output,
            args.format,
            names,
            args.average,
            latlon,
            args.times_per_file,
            args.overwrite,
            options,
        )
    except (ValueError, OSError) as err:  # StoreError, CalendarError, existing outputs
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
