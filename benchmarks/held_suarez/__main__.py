# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m benchmarks.held_suarez``: the Held-Suarez benchmark, end to end (needs the
``dycore`` extra). Stages, each kept in ``--workdir`` and skipped when done:

1. data: ``--years`` training years (each made once, resumably, in the cache of
   benchmarks/held_suarez/years.py; ``$SCREAMCAST_CACHE``) and an independent 50-day test run
   from the shipped spun-up T42 L20 restart, ingested (4 layers), the nudging reference
   (ne4pg2) and the climatology;
2. train: the stage schedule (benchmarks/held_suarez/training.py);
3. forecasts: from 8 test times 5 days apart, 10 days: the emulator free and nudged, the T21
   dycore, persistence, climatology, the reference; RMSE and ACC per variable and layer;
4. climate: a free rollout of ``--climate-days`` against the training year's climate;
5. cost: simulated days per wall day of the emulator and the dycore at T42 and T21;
6. report: the record (``--record``: benchmarks/results/held_suarez.json, then the tables and
   figures of docs/held-suarez.md are generated from it).

``--stage NAME`` runs the stages up to NAME and stops (data, train, forecasts, climate, cost):
each invocation then takes at most about an hour on 2 cores (the data a year at a time, the
training a Hydra stage at a time, each resumed where a killed one stopped). The wall minutes
of every stage, summed over the invocations in the work folder, go into the record
(``stage_minutes``, ``wall_minutes``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from benchmarks.held_suarez.ledger import STAGES, Ledger

ROOT = Path(__file__).resolve().parents[2]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.held_suarez",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--workdir", default="runs/held_suarez")
    p.add_argument("--train-days", type=float, default=365.0)
    p.add_argument("--test-days", type=float, default=50.0)
    p.add_argument(
        "--years",
        type=int,
        default=5,
        help="training years of --train-days each (5; each ~1 h of the dycore on 2 cores, "
        "made once in the years' cache and reused)",
    )
    p.add_argument(
        "--discard-days",
        type=float,
        default=30.0,
        help="each run's unrecorded days after its seed's perturbation (30)",
    )
    p.add_argument("--ne", type=int, default=16)
    p.add_argument("--reference-ne", type=int, default=4)
    p.add_argument("--truncation", type=int, default=42, help="the truth's dycore (T42)")
    p.add_argument("--starts", type=int, default=8)
    p.add_argument("--lead-days", type=float, default=10.0)
    p.add_argument("--climate-days", type=float, default=365.0)
    p.add_argument("--train-scale", type=float, default=1.0, help="x every stage's steps")
    p.add_argument(
        "--train-override",
        action="append",
        default=[],
        help="more Hydra overrides for every stage (e.g. data.n=8)",
    )
    p.add_argument(
        "--global-override",
        action="append",
        default=[],
        help="Hydra overrides for the stages through the global step only (the climate's "
        "losses and free runs, e.g. global_unroll.spectral_weight=0.02)",
    )
    p.add_argument("--cost-days", type=float, default=5.0)
    p.add_argument(
        "--stage",
        choices=("all", *STAGES),
        default="all",
        help="run the stages up to this one and stop (all: every stage and the report)",
    )
    p.add_argument(
        "--record",
        action="store_true",
        help="write benchmarks/results/held_suarez.json and regenerate the docs",
    )
    return p


def _stop_after(name: str, a, ledger: Ledger) -> bool:
    """True (and the next command printed) when ``--stage`` asked to stop after ``name``."""
    if a.stage != name:
        return False
    following = STAGES[STAGES.index(name) + 1 :]
    print(
        f"stage {name} done ({ledger.minutes.get(name, 0.0):.1f} min in all); "
        + (f"next: --stage {following[0]}" if following else "next: --stage all (the report)")
    )
    return True


def main(argv: list[str] | None = None) -> int:
    from benchmarks.held_suarez import data, report, stages, years

    a = parser().parse_args(argv)
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks.held_suarez " + " ".join(map(shlex.quote, argv or sys.argv[1:]))
    t0, ledger = time.perf_counter(), Ledger(work)
    plan = data.DataPlan(
        work,
        a.train_days,
        a.test_days,
        a.ne,
        a.reference_ne,
        truncation=a.truncation,
        discard_days=a.discard_days,
        years=a.years,
    )
    found = stages.found_done(work)  # before this invocation runs them: the record says so
    with ledger.stage("data"):
        paths = data.make(plan)
    if _stop_after("data", a, ledger):
        return 0
    with ledger.stage("train"):
        checkpoint, minutes = stages.train(
            paths["train"], work, a.train_scale, a.train_override, a.global_override
        )
    if _stop_after("train", a, ledger):
        return 0
    result = {"settings": vars(a), "train_minutes": minutes, "checkpoint": str(checkpoint)}
    result["found_done"] = found
    with ledger.stage("forecasts"):
        result["forecasts"] = stages.forecasts(paths, checkpoint, work, a.starts, a.lead_days)
    if _stop_after("forecasts", a, ledger):
        return 0
    with ledger.stage("climate"):
        result["climate"] = stages.climate(paths, checkpoint, work, a.climate_days)
    if _stop_after("climate", a, ledger):
        return 0
    with ledger.stage("cost"):
        result["cost"] = _cost(paths, checkpoint, work, a, result["climate"])
    if _stop_after("cost", a, ledger):
        return 0
    result["stage_minutes"] = dict(ledger.minutes)
    result["wall_minutes"] = ledger.total()  # every invocation's
    result["wall_minutes_this_invocation"] = (time.perf_counter() - t0) / 60.0
    if a.years > 1:
        result["years_minutes"] = years.minutes_of(years.made_years(plan.year_plan(), a.years))
    (work / "result.json").write_text(json.dumps(result, indent=1, default=str))
    if a.record:
        report.record(result, command, work)
    print(report.summary(result))
    return 0


def _cost(paths: dict, checkpoint, work: Path, a, climate: dict) -> dict:
    """The emulator's and the dycores' cost per simulated day (kept in ``cost.json``)."""
    from benchmarks.held_suarez import stages
    from screamcast.rollout.stepper import fastest_cpu_precision

    cache = work / "cost.json"
    if cache.exists():
        return json.loads(cache.read_text())
    fastest = fastest_cpu_precision()  # bf16 on a CPU with AMX-BF16
    emulator = {
        precision: stages.emulator_cost(paths, checkpoint, work, a.cost_days, precision)
        for precision in dict.fromkeys((fastest, "fp32"))
    }
    emulator["whole_faces"] = stages.emulator_cost(
        paths, checkpoint, work, a.cost_days, fastest, whole_faces=True
    )
    cost = stages.cost(climate, a.truncation, a.cost_days, emulator, fastest)
    cache.write_text(json.dumps(cost))
    return cost


if __name__ == "__main__":
    sys.exit(main())
