# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Write the analytic demo's store (and its coarse or lat-lon nudging reference):
``screamcast-demo-data OUTPUT [--reference REF]`` (:mod:`screamcast.sources.synthetic`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain


@guarded
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="screamcast-demo-data", description=plain(__doc__))
    ap.add_argument("output", type=Path, help="the store to write (must not exist)")
    ap.add_argument("--n", type=int, default=48, help="face size (default 48)")
    ap.add_argument("--days", type=float, default=14.0)
    ap.add_argument("--step-hours", type=float, default=1.0)
    ap.add_argument(
        "--seed", type=int, default=0, help="the wave's starting longitude (0: Williamson's)"
    )
    ap.add_argument("--start", default="2020-01-01T00:00")
    ap.add_argument(
        "--calendar", default="proleptic_gregorian", help="CF calendar of the times (e.g. noleap)"
    )
    ap.add_argument("--chunk", type=int, default=None, help="chunk side (default: n up to 64)")
    ap.add_argument(
        "--layout",
        choices=("stacked", "variables"),
        default="stacked",
        help="stacked: every channel in one sharded array, as the ingestion tool writes "
        "(default); variables: one array per variable",
    )
    ap.add_argument("--reference", type=Path, help="also write a coarse nudging reference here")
    ap.add_argument(
        "--reference-coarsen",
        type=int,
        default=None,
        help="model cells per reference cell along each axis (default 3: the demo's ne8pg2 "
        "for n = 48)",
    )
    ap.add_argument("--reference-step-hours", type=float, default=6.0)
    ap.add_argument("--latlon-reference", type=Path, help="also write a lat-lon reference here")
    args = ap.parse_args(argv)
    from screamcast.sources.synthetic import (
        DEMO_REFERENCE_COARSEN,
        write_latlon_reference,
        write_store,
    )

    args.reference_coarsen = args.reference_coarsen or DEMO_REFERENCE_COARSEN
    if args.reference and args.n % args.reference_coarsen:  # before anything is written
        ap.error(f"--reference-coarsen {args.reference_coarsen} must divide --n {args.n}")
    kw = dict(days=args.days, seed=args.seed, start=args.start, calendar=args.calendar)
    cube = dict(layout=args.layout)  # the lat-lon reference is one array per variable
    write_store(args.output, args.n, step_hours=args.step_hours, chunk=args.chunk, **kw, **cube)
    print(f"wrote {args.output}")
    if args.reference:
        n_ref = args.n // args.reference_coarsen
        write_store(
            args.reference,
            n_ref,
            step_hours=args.reference_step_hours,
            coarsen=args.reference_coarsen,
            **kw,
            **cube,
        )
        print(f"wrote {args.reference} (n={n_ref}, every {args.reference_step_hours} h)")
    if args.latlon_reference:
        write_latlon_reference(args.latlon_reference, step_hours=args.reference_step_hours, **kw)
        print(f"wrote {args.latlon_reference}")


if __name__ == "__main__":
    main()
