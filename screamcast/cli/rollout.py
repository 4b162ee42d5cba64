# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The global nudged rollout's command line (``screamcast-rollout``, and
``scripts/ace/run_screamcast_nudged.py``).

Settings come from the inference config (:mod:`screamcast.config.inference`): a YAML file
(``--config``, e.g. ``configs/production/*.yaml``), then ``key=value`` overrides, then flags
(:mod:`.rollout_flags`), each later one winning. With no arguments it runs the embedded demo
(:mod:`.demo`). Several ranks: ``torchrun --nproc-per-node 2 -- run_screamcast_nudged.py ...``
(the ``--`` keeps torchrun from reading ``--start`` as its ``--start-method``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from screamcast.cli.guard import guarded
from screamcast.cli.rollout_flags import FLAG_OF, add_flags
from screamcast.config.inference import InferenceConfig
from screamcast.config.strict import ConfigError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run_screamcast_nudged.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        help="an inference config (YAML, e.g. configs/production/*.yaml): its settings, and "
        "what the checkpoint must be",
    )
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="config settings, e.g. nudging.tau_hours=3 stepper.halo_adjoint=true",
    )
    add_flags(p)
    return p


def parse(argv: list[str]) -> tuple[InferenceConfig, dict]:
    """The config, and where each key that was set came from (a flag, a file, an override)."""
    p = parser()
    given = vars(p.parse_intermixed_args(argv))
    path, overrides = given.pop("config", None), given.pop("overrides", [])
    try:
        config, origin = InferenceConfig.load(path, overrides)  # its errors name the file
    except ConfigError as err:
        p.error(str(err))
    try:
        for key, value in given.items():
            origin[key] = FLAG_OF[key]
            config.set(key, value)
        config.check_reassembly()
    except ConfigError as err:
        p.error(worded(err, origin))
    return config, origin


def worded(err: ConfigError, origin: dict) -> str:
    """``err``'s message naming each key as the user set it: by its flag when a flag set it
    (or nothing did and it has one), else by the key and the file that set it."""

    def name_of(key: str) -> str:
        where = origin.get(key)
        flag = FLAG_OF.get(key)
        if flag and (where is None or where == flag):
            return flag
        if where and not where.startswith("--"):
            return f"{key} ({where})"
        return key

    return err.worded(name_of)


def print_table(metrics: dict, steps: int) -> None:

    leads = sorted({1, steps // 4, steps // 2, steps} - {0})
    if all("rmse" not in m for m in metrics.values()):  # no truth: the reference's
        print(f"\narea-weighted RMSE against the nudging reference at lead steps {leads}:")
        for var, m in metrics.items():
            if "reference_rmse" in m:
                print(f"  {var:<12} " + "  ".join(f"{m['reference_rmse'][k]:9.3g}" for k in leads))
        return
    print(f"\narea-weighted RMSE (persistence in brackets) at lead steps {leads}:")
    for var, m in metrics.items():
        cells = "  ".join(f"{m['rmse'][k]:9.3g} ({m['persistence_rmse'][k]:.3g})" for k in leads)
        print(f"  {var:<12} {cells}")


@guarded
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        from screamcast.cli.demo import demo_arguments

        try:
            argv = demo_arguments()
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print("demo:", " ".join(argv), flush=True)
    config, origin = parse(argv)
    try:
        summary, table = _run(config, origin)
    except ConfigError as err:  # a bad setting or input, named as the user gave it
        print(f"error: {worded(err, origin)}", file=sys.stderr)
        return 2
    except (ValueError, FileExistsError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the disk or the filesystem refused (permissions, space, ...)
        print(f"error: {err}", file=sys.stderr)
        return 1
    if summary.get("rank", 0) == 0:  # one report for several ranks
        _report(config, table)
    return 0


def _run(config: InferenceConfig, origin: dict) -> tuple[dict, dict | None]:
    from screamcast.evaluation.rollout_scores import scored_rollout
    from screamcast.file_lock import LockedError

    config.validate()
    required = [
        w for k, w in origin.items() if k.startswith("checkpoint.") and k != "checkpoint.path"
    ]
    source = required[0] if required else "the config"  # what the checkpoint must be: from
    try:
        return scored_rollout(config, source)
    except LockedError as err:
        raise ValueError(str(err)) from None


def _report(config: InferenceConfig, table: dict | None) -> None:
    """The table of the scores written beside the output (the demo's README table)."""
    from screamcast.evaluation.rollout_scores import truth_gaps

    output = config.output.path
    if table is None:
        print(
            f"wrote {output} (not scored: {config.initial_condition.data} does not hold every "
            "output time; score it against a truth with screamcast-evaluate, docs/evaluation.md)"
        )
        return
    base = str(output).removesuffix(".zarr")
    print_table(table, config.output.steps)
    for line in truth_gaps(table, config.initial_condition.data):
        print(line)
    picture = f", {base}_last_step.png" if Path(f"{base}_last_step.png").exists() else ""
    print(f"\nwrote {output}, {base}_metrics.csv/.json{picture}")


if __name__ == "__main__":
    sys.exit(main())
