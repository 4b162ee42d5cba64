# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What nudging toward a reference costs a perfect model (``screamcast-nudging-floor``):
:func:`screamcast.evaluation.nudging_floor.perfect_model_errors` on two stores."""

from __future__ import annotations

import argparse
import sys

from screamcast.cli.guard import guarded
from screamcast.config.choices import INCREMENTS, TIME_INTERPOLATIONS
from screamcast.config.strict import ConfigError
from screamcast.data.calendar import calendar_of
from screamcast.data.store import open_store
from screamcast.evaluation.nudging_floor import perfect_model_errors
from screamcast.rollout.nudging import RelaxationConfig, open_reference

FLAGS = {
    "nudging.tau_hours": "--nudge-tau-hours",
    "nudging.increment": "--nudge-increment",
    "nudging.time": "--nudge-time",
}


@guarded
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="screamcast-nudging-floor", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--data", required=True, help="the truth: a cube store on the model's grid")
    ap.add_argument("--reference", required=True, help="the nudging reference (cube or lat-lon)")
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--start", type=int, default=None, help="time index (default: the last)")
    ap.add_argument("--nudge-vars", default="u,v,temperature")
    ap.add_argument("--nudge-tau-hours", type=float, default=6.0)
    ap.add_argument("--nudge-increment", choices=INCREMENTS, default="bicubic")
    ap.add_argument("--nudge-time", choices=TIME_INTERPOLATIONS, default="cubic")
    ap.add_argument("--leads", default="1,6,12,24,48", help="steps to print")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    try:  # the relaxation's own check of its settings, worded with these flags
        RelaxationConfig(args.nudge_tau_hours, args.nudge_increment, args.nudge_time)
    except ConfigError as err:
        ap.error(err.worded(lambda key: FLAGS.get(key, key)))
    try:
        leads = [int(k) for k in args.leads.split(",")]
    except ValueError:
        ap.error(f"--leads: comma-separated steps such as 1,6,12, got {args.leads!r}")
    variables = args.nudge_vars.split(",")
    try:
        truth = open_store(args.data, variables=variables)
        reference = open_reference(args.reference, variables, calendar_of(truth["time"].values))
        errors = perfect_model_errors(
            truth,
            reference,
            variables,
            args.steps,
            args.start,
            args.nudge_tau_hours,
            args.nudge_increment,
            args.nudge_time,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    leads = [k for k in leads if k <= args.steps]
    print(f"a perfect model nudged toward {args.reference}: RMSE (persistence) at steps {leads}")
    for v, e in errors.items():
        cells = [f"{e['rmse'][k]:.4g} ({e['persistence_rmse'][k]:.4g})" for k in leads]
        print(f"  {v:12s} " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
