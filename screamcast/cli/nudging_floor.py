# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What nudging toward a reference costs a perfect model (``screamcast-nudging-floor``):
:func:`screamcast.evaluation.nudging_floor.perfect_model_errors` on two stores."""

from __future__ import annotations

import argparse
import sys

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain
from screamcast.config.choices import INCREMENTS, TIME_INTERPOLATIONS


@guarded
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="screamcast-nudging-floor", description=plain(__doc__).split("\n\n")[0]
    )
    ap.add_argument("--data", required=True, help="the truth: a cube store on the model's grid")
    ap.add_argument("--reference", required=True, help="the nudging reference (cube or lat-lon)")
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--start", type=int, default=None, help="time index (default: the last)")
    ap.add_argument(
        "--nudge-vars",
        help="comma-separated (default: the store's winds and temperature, every level, as "
        "the rollout's default)",
    )
    ap.add_argument("--nudge-tau-hours", type=float, default=6.0)
    ap.add_argument("--nudge-increment", choices=INCREMENTS, default="bicubic")
    ap.add_argument("--nudge-time", choices=TIME_INTERPOLATIONS, default="cubic")
    ap.add_argument("--leads", default="1,6,12,24,48", help="steps to print")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    if not args.nudge_tau_hours > 0:  # the relaxation's own check; the choices argparse's
        ap.error(f"--nudge-tau-hours must be positive, got {args.nudge_tau_hours}")
    try:
        leads = [int(k) for k in args.leads.split(",")]
    except ValueError:
        ap.error(f"--leads: comma-separated steps such as 1,6,12, got {args.leads!r}")
    try:
        errors = _errors(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    leads = [k for k in leads if k <= args.steps]
    print(f"a perfect model nudged toward {args.reference}: RMSE (persistence) at steps {leads}")
    for v, e in errors.items():
        cells = [f"{e['rmse'][k]:.4g} ({e['persistence_rmse'][k]:.4g})" for k in leads]
        print(f"  {v:12s} " + "  ".join(cells))
    return 0


def _errors(args) -> dict:
    """The perfect model's errors (the stores and torch imported only now)."""
    from screamcast.data.calendar import calendar_of
    from screamcast.data.store import open_store
    from screamcast.evaluation.nudging_floor import perfect_model_errors
    from screamcast.rollout.nudging import open_reference

    variables = _variables(args.data, args.nudge_vars)
    truth = open_store(args.data, variables=variables)
    reference = open_reference(args.reference, variables, calendar_of(truth["time"].values))
    return perfect_model_errors(
        truth,
        reference,
        variables,
        args.steps,
        args.start,
        args.nudge_tau_hours,
        args.nudge_increment,
        args.nudge_time,
    )


def _variables(data: str, given: str | None) -> list[str]:
    """The channels to nudge: those given, else the rollout's default for this store."""
    from screamcast.data.channels import expand
    from screamcast.data.store import open_store
    from screamcast.rollout.nudging.default_variables import NoDefaultNudgingError, default_nudged

    if given:
        return given.split(",")
    ds = open_store(data)
    names = [str(v) for v in ds.data_vars if "time" in ds[v].dims]
    try:
        return expand(ds, default_nudged(names), where=f"store {data}")
    except NoDefaultNudgingError as err:
        raise ValueError(str(err).replace("{nudging.variables}", "--nudge-vars")) from None


if __name__ == "__main__":
    sys.exit(main())
