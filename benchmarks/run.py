# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Run every benchmark and regenerate the table in docs/performance.md.

``python -m benchmarks.run [--quick] [--only NAME ...]``. Each ``benchmarks/bench_<name>.py``
module provides ``run(quick) -> (results, context)``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from benchmarks.harness import record

NAMES = sorted(p.stem[len("bench_") :] for p in Path(__file__).parent.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--only", nargs="*", choices=NAMES, default=NAMES)
    parser.add_argument("--no-record", action="store_true", help="print, do not write results")
    args = parser.parse_args(argv)
    missed = 0
    for name in args.only:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        results, context = module.run(quick=args.quick)
        for r in results:
            print(r.line(), flush=True)
            missed += not r.met
        if not args.no_record:
            record(name, results, context)
    print(f"{missed} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
