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
import shutil
import sys
from pathlib import Path

from screamcast.cli.guard import guarded
from screamcast.cli.paths import first_missing
from screamcast.cli.rollout_flags import FLAG_OF, add_flags
from screamcast.config.inference import InferenceConfig
from screamcast.config.strict import ConfigError

DESCRIPTION = """The global nudged rollout of a trained emulator (docs/rollout.md).

Settings come from the inference config: a YAML file (--config, e.g.
configs/production/*.yaml), then key=value overrides, then flags, each later one winning.
With no arguments, or with --demo and any flags, it runs the embedded demo. Several ranks
of a node: screamcast-launch --nproc-per-node 2 screamcast-rollout ... (many nodes: torchrun
... -- run_screamcast_nudged.py ..., the -- keeping torchrun from reading --start)."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(  # no abbreviations: --nudge-tau was taken as --nudge-tau-hours
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="run the embedded demo (the default with no arguments) with the flags given, "
        "e.g. --demo --guard warn",
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
    given.pop("demo")
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


def print_table(metrics: dict, steps: int, step_hours: float | None = None, units=None) -> None:
    """The area-weighted RMSE by lead, with column labels (the lead in hours when the step's
    length is known) and each variable's units; persistence in brackets."""
    units = units or {}
    leads = sorted({1, steps // 4, steps // 2, steps} - {0})
    label = [f"{k * step_hours:g} h" if step_hours else f"step {k}" for k in leads]
    step = f" (1 step = {step_hours:g} h)" if step_hours else ""
    scored = any("rmse" in m for m in metrics.values())
    what = "(persistence in brackets)" if scored else "against the nudging reference"
    print(f"\narea-weighted RMSE {what} by lead time{step}:")
    print(f"  {'variable [units]':<24}" + "".join(f"{x:>22}" for x in label))
    for var, m in metrics.items():
        if scored:
            cells = [f"{m['rmse'][k]:.3g} ({m['persistence_rmse'][k]:.3g})" for k in leads]
        elif "reference_rmse" in m:
            cells = [f"{m['reference_rmse'][k]:.3g}" for k in leads]
        else:
            continue
        unit = units.get(var) or units.get(var.split("[")[0])  # a channel: its variable's
        name = f"{var} [{unit}]" if unit else var
        print(f"  {name:<24}" + "".join(f"{c:>22}" for c in cells))
    if scored and step_hours and steps * step_hours >= 12:
        print(
            "  persistence: the initial state held fixed; in fields with a daily cycle\n"
            "  (temperature, insolation-driven ones) it comes back near the truth every 24 h"
        )


@guarded
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    asks_help = any(a in ("-h", "--help") for a in argv)  # help: no demo store or training
    if not argv or ("--demo" in argv and not asks_help):
        from screamcast.cli.demo import demo_arguments

        try:
            argv = with_flags(demo_arguments(), [a for a in argv if a != "--demo"])
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print("demo:", " ".join(argv), flush=True)
        return _demo(argv)
    return _main(argv)


def with_flags(defaults: list[str], given: list[str]) -> list[str]:
    """The demo's arguments with the user's: a flag given replaces the demo's own (and its
    value), so the command echoed names each flag once."""
    flags = {a.split("=")[0] for a in given if a.startswith("--")}
    out, skip = [], False
    for i, a in enumerate(defaults):
        if skip:
            skip = False
            continue
        if a in flags:
            nxt = defaults[i + 1] if i + 1 < len(defaults) else "--"
            skip = not nxt.startswith("--")  # drop its value too
            continue
        out.append(a)
    return out + given


def _demo(argv: list[str]) -> int:
    """The demo's run; a failed one leaves no new output behind (each try writes a new
    ``demo_out/rollout_NNN.zarr``)."""
    last = len(argv) - 1 - argv[::-1].index("--output")  # argparse keeps the last one
    output = Path(argv[last + 1])
    existed, code, stopped = output.exists(), 1, False
    try:
        code = _main(argv)
    finally:
        if code != 0 and not existed and output.exists():
            from screamcast.rollout.output import read_attrs

            stopped = "stopped" in (read_attrs(output) or {})
            shutil.rmtree(output, ignore_errors=True)
            print(f"(the failed demo's partial output {output} was removed)", file=sys.stderr)
    if stopped:
        print("to run the demo on past the guard: bash ci/demo.sh --guard warn", file=sys.stderr)
    return code


def _main(argv: list[str]) -> int:
    config, origin = parse(argv)
    try:  # the settings first, then the files they name: both before the heavy imports
        config.validate()
    except ConfigError as err:
        print(f"error: {worded(err, origin)}", file=sys.stderr)
        return 2
    if missing := _missing_input(config, origin):
        print(f"error: {missing}", file=sys.stderr)
        return 2
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


def _missing_input(config: InferenceConfig, origin: dict) -> str | None:
    """A local input that does not exist, named as the user gave it (before the imports)."""
    keys = {
        "checkpoint.path": config.checkpoint.path,
        "initial_condition.data": config.initial_condition.data,
        "nudging.reference": config.nudging.reference,
        "scoring.climatology": config.scoring.climatology,
    }
    missing = first_missing({"{" + k + "}": v for k, v in keys.items()})
    return missing and worded(ConfigError(missing, *keys), origin)


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
    print_table(table, config.output.steps, *_step_hours_and_units(output))
    for line in truth_gaps(table, config.initial_condition.data):
        print(line)
    picture = f", {base}_last_step.png" if Path(f"{base}_last_step.png").exists() else ""
    print(f"\nwrote {output}, {base}_metrics.csv/.json{picture}")


def _step_hours_and_units(output) -> tuple[float | None, dict]:
    """The output's step in hours and each variable's units, as its metadata says."""
    import xarray as xr

    from screamcast.data.calendar import DECODER

    ds = xr.open_zarr(output, consolidated=False, chunks=None, decode_times=DECODER)
    times = ds["time"].values
    hours = (times[1] - times[0]).total_seconds() / 3600.0 if len(times) > 1 else None
    return hours, {v: ds[v].attrs.get("units", "") for v in ds.data_vars}


if __name__ == "__main__":
    sys.exit(main())
