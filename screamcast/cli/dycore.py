# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-dycore``: Held-Suarez data from the dinosaur dynamical core (docs/held-suarez.md).

    screamcast-dycore spinup --days 200 --truncation 21 --output t21.npz
    screamcast-dycore spinup --restart t21.npz --days 50 --output spunup.npz
    screamcast-dycore history --restart spunup.npz --seed 1 --days 365 --output-dir hist/
    screamcast-dycore coarsen STORE --ne 4 --output ref.zarr

``history`` writes EAM history files that ``python -m screamcast.ingest`` turns into a store;
run the same command again to continue a killed run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from screamcast.cli.guard import guarded
from screamcast.cli.help_text import plain
from screamcast.sources.held_suarez import DycoreConfig, DycoreError


def _config_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--truncation", type=int, default=42, help="spectral truncation T (42)")
    p.add_argument("--levels", type=int, default=20, help="equidistant sigma levels (20)")
    p.add_argument("--dt-minutes", type=float, default=20.0, help="time step (20 min)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="screamcast-dycore",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("spinup", help="advance a state (from rest or a restart) to a restart")
    s.add_argument("--output", required=True, help="the restart to write (.npz)")
    s.add_argument("--days", type=float, required=True, help="simulated days to run")
    s.add_argument("--restart", help="start from this restart (default: from rest)")
    s.add_argument("--seed", type=int, default=0, help="from rest: where the starting bump is")
    _config_flags(s)
    h = sub.add_parser("history", help="a recorded run: EAM history files on ne<NE>pg2")
    h.add_argument("--restart", required=True, help="a spun-up restart (spinup's output)")
    h.add_argument("--output-dir", required=True, help="folder for the history files")
    h.add_argument("--days", type=float, required=True, help="simulated days recorded")
    h.add_argument("--seed", type=int, default=1, help="the run's perturbation (independent runs)")
    h.add_argument("--discard-days", type=float, default=30.0, help="run before recording (30)")
    h.add_argument("--output-hours", type=float, default=6.0, help="interval of outputs (6 h)")
    h.add_argument("--file-days", type=float, default=10.0, help="days per file (10)")
    h.add_argument("--ne", type=int, default=16, help="the ne<NE>pg2 grid (16)")
    h.add_argument(
        "--states-every-hours",
        type=float,
        default=0.0,
        help="also keep the spectral state this often (for the dycore baseline)",
    )
    h.add_argument("--no-progress", action="store_true")
    _config_flags(h)
    c = sub.add_parser("coarsen", help="a store -> area-weighted block means on ne<NE>pg2")
    c.add_argument("store", help="a cube store (local or s3://)")
    c.add_argument("--ne", type=int, required=True, help="the coarser grid's ne (divides it)")
    c.add_argument("--output", required=True, help="the coarse store to write")
    c.add_argument("--every", type=int, default=1, help="keep every k-th time (1)")
    c.add_argument("--storage-options", default="{}", help="JSON, for s3:// stores")
    return p


def _non_finite(store) -> dict:
    import zarr

    return dict(zarr.open_group(store, mode="r").attrs.get("non_finite", {}))


@guarded
def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    command = "screamcast-dycore " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    try:
        if a.command == "coarsen":
            from screamcast.sources.coarsen import coarsen_store

            out = coarsen_store(a.store, a.output, a.ne, a.every, json.loads(a.storage_options))
            print(f"wrote {out}")
            for v, e in _non_finite(out).items():
                print(
                    f"note: {v} is not finite in {e['values']} coarse cells at {len(e['times'])} "
                    f"times (first {e['times'][0]}): the input {a.store} is not finite there"
                )
            return 0
        config = DycoreConfig(a.truncation, a.levels, a.dt_minutes)
        from screamcast.sources import dycore_run as run

        if a.command == "spinup":
            r = run.spinup(a.output, a.days, config, a.restart, a.seed, command)
            print(f"wrote {a.output}: T{r.truncation} L{r.levels}, day {r.day:g}")
        else:
            options = run.HistoryOptions(
                a.restart,
                a.output_dir,
                a.days,
                a.seed,
                a.discard_days,
                a.output_hours,
                a.file_days,
                a.ne,
                a.states_every_hours,
                config,
            )
            print(json.dumps(run.history(options, progress=not a.no_progress)))
    except (DycoreError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
