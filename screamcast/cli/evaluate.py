# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Score a rollout output against a truth store and write a report folder
(``screamcast-evaluate OUTPUT --truth STORE``; :func:`screamcast.evaluation.evaluate.evaluate`).
"""

from __future__ import annotations

import argparse
import json
import sys

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain
from screamcast.cli.paths import first_missing


@guarded
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="screamcast-evaluate", description=plain(__doc__))
    ap.add_argument("output", help="a rollout output store (local path or s3://)")
    ap.add_argument(
        "--truth", required=True, help="a store on the output's grid or a regular lat-lon grid"
    )
    ap.add_argument("--report", help="folder to write (default: <output>_report)")
    ap.add_argument("--storage-options", default="{}", help="JSON, for s3:// stores")
    ap.add_argument(
        "--climatology", help="a store whose time mean is the climatology (anomaly correlation)"
    )
    ap.add_argument("--tile", type=int, help="tile size for seams and imprint (default: attr)")
    ap.add_argument(
        "--no-figures", action="store_true", help="scores and report.md only (e.g. in sweeps)"
    )
    ap.add_argument(
        "--metrics", default="", help="comma-separated registered metrics (or module:name) to add"
    )
    ap.add_argument(
        "--climate",
        action="store_true",
        help="a long rollout's climate against the truth run's (each over its own times, not "
        "time-matched): climate.md with zonal means, eddy kinetic energy, the kinetic-energy "
        "spectrum and the global-mean temperature; no forecast scores",
    )
    ap.add_argument(
        "--climate-names",
        default="U,V,T",
        help="the eastward wind, northward wind and temperature (default U,V,T)",
    )
    a = ap.parse_args(argv)
    named = {"output": a.output, "--truth": a.truth, "--climatology": a.climatology}
    if missing := first_missing(named):
        print(f"error: {missing}", file=sys.stderr)
        return 2
    report = a.report or str(a.output).rstrip("/").removesuffix(".zarr") + "_report"
    if a.climate:
        return _climate(a, report)
    try:
        options = json.loads(a.storage_options)
        metrics = [m for m in a.metrics.split(",") if m]
        figures = not a.no_figures
        from screamcast.evaluation.evaluate import evaluate

        table = evaluate(
            a.output, a.truth, report, options, a.climatology, a.tile, figures, metrics
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from screamcast.evaluation.rollout_scores import truth_gaps

    for line in truth_gaps(table, a.truth):
        print(line)
    print(f"wrote {report}/report.md")
    return 0


def _climate(a, report: str) -> int:
    from screamcast.evaluation.climate_report import climate_report

    names = tuple(a.climate_names.split(","))
    if len(names) != 3:
        print(f"error: --climate-names: three names, got {a.climate_names!r}", file=sys.stderr)
        return 2
    try:
        options = json.loads(a.storage_options)
        climate_report(a.output, a.truth, report, options, names, not a.no_figures)
    except (ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:  # an install without a base dependency (pyshtools)
        need = f"the climate report needs {err.name} (pip install {err.name}) or --no-figures"
        print(f"error: {need}", file=sys.stderr)
        return 2
    print(f"wrote {report}/climate.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
