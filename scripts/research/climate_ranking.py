# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Does the climate score that chooses best.pth rank checkpoints the same way from two
independent sets of starts? (issue 57, item 3.)

The checkpoints are those a stage chooses among: one fine-tune of the shipped Held-Suarez
emulator through the 8-step global unroll with the climate losses, its weights kept every
``--keep-every`` steps, beside the shipped emulator and any ``--checkpoint NAME=PATH``. Each is
scored as training's validation scores it (``screamcast/train/free_run.py``: the rollout's
step and guard, daily zonal statistics of every run pooled, ``climate_score`` against the
training store's climate) from set A's starts and, separately, from set B's: starts spread
over ``--starts-store`` (an independent run), set A the even ones and set B the odd ones, so
that no two starts are closer than a season. The record has each score, the two rankings and
their Spearman correlation. Resumable: each (checkpoint, set) result is kept in ``--workdir``.

    python scripts/research/climate_ranking.py --store YEAR0.zarr --starts-store YEAR1.zarr \\
        --workdir /tmp/rank --output docs/notes/data/2026-12-06-climate-ranking.json

With ``--steps 0`` nothing is fine-tuned: the shipped emulator and the ``--checkpoint``s are
scored (long free runs from an independent year: ``--days 365``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HS = ROOT / "benchmarks" / "held_suarez"
CLIMATE_LOSSES = ["global_unroll.spectral_weight=0.02", "global_unroll.time_mean_weight=0.2"]


def fine_tune(store: str, run: Path, steps: int, keep_every: int) -> list[Path]:
    """The fine-tune's kept checkpoints (``steps_<N>.pth``), made once."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.held_suarez.training import DISSIPATION, GLOBAL, MODEL, config
    from screamcast.train.loop import train

    if not (run / "done").exists():
        keys = [
            *("data=held_suarez", f"data.url={store}", *MODEL, *GLOBAL, DISSIPATION),
            *("optim.lr=2e-5", "rollout_steps=8", f"steps={steps}", f"valid_every={steps}"),
            *(f"checkpoint_every={keep_every}", f"keep_every={keep_every}", "progress=false"),
            *(f"init_from={HS / 'emulator.pth'}", f"run_dir={run}", *CLIMATE_LOSSES),
        ]
        t0 = time.perf_counter()
        train(config(*keys))
        (run / "done").write_text(f"{(time.perf_counter() - t0) / 60:.2f}\n")
    return sorted(run.glob("steps_*.pth"))


def start_sets(store: str, count: int) -> tuple[list[str], list[str]]:
    """``count`` start times spread over the store (after its first 10 days), alternately
    into set A and set B."""
    import xarray as xr

    from screamcast.data.calendar import DECODER

    times = xr.open_zarr(store, decode_times=DECODER, consolidated=False)["time"].values
    where = np.linspace(40, len(times) - 1, 2 * count).round().astype(int)
    starts = [times[i].strftime("%Y-%m-%dT%H:%M") for i in where]
    return starts[0::2], starts[1::2]


def truth_stats(store: str):
    """The training store's daily zonal statistics (up to a year of days), as the
    benchmark's climate stage reads it."""
    import xarray as xr

    from screamcast.data.calendar import DECODER
    from screamcast.data.stacked import unstack
    from screamcast.evaluation.climate import of_store

    ds = unstack(xr.open_zarr(store, chunks=None, decode_times=DECODER, consolidated=False))
    return of_store(ds.isel(time=slice(0, 4 * 365)), every=4)


def score_set(checkpoint: Path, store: str, starts: list[str], days: float, truth, work) -> dict:
    """Training's validation score of ``checkpoint``'s free runs from ``starts``."""
    import torch

    from screamcast.config.inference import InferenceConfig
    from screamcast.model.state import State
    from screamcast.rollout.driver import Part
    from screamcast.rollout.exchange import LocalExchange
    from screamcast.rollout.plan import plan_rollout
    from screamcast.rollout.rollout_step import build_guard, build_step
    from screamcast.train.free_run import ClimateProbe, FreeRun, climate_score, short_fraction

    pooled, held, trips = None, [], []
    for start in starts:
        keys = {
            "checkpoint.path": str(checkpoint),
            "initial_condition.data": store,
            "initial_condition.start": start,
            "output.path": str(work / "never_written.zarr"),
            "output.steps": 2,
            "stepper.halo_adjoint": True,  # intra-face, as the README's year
        }
        plan, inputs = plan_rollout(InferenceConfig.from_keys(keys))
        stepper = Part(plan, inputs, LocalExchange()).stepper("cpu")  # the rollout's, on one rank
        names = plan.prog + plan.diag
        probe = ClimateProbe(names, plan.grid.lat, plan.grid.area, truth, 4)
        pooled = pooled or probe.stats()
        run = FreeRun(build_step(plan, stepper), build_guard(plan), plan.dt, days)
        x = torch.as_tensor(inputs.initial[: len(plan.prog)])  # (C, 6, n, n)
        earlier = None if plan.input_times == 1 else torch.as_tensor(inputs.previous_state(plan))
        days_held, trip = run(State.one(x, plan.out_times[0], earlier), probe, pooled)
        held.append(days_held)
        trips.append(None if trip is None else str(trip))
    short = short_fraction(held, days)
    return {"starts": starts, "held_days": held, "trips": trips} | climate_score(
        pooled, truth, short
    )


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = (np.argsort(np.argsort(x)).astype(float) for x in (a, b))
    return float(np.corrcoef(ra, rb)[0, 1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--store", required=True, help="the training store (fine-tune, truth)")
    p.add_argument("--starts-store", required=True, help="the starts' store (an independent run)")
    p.add_argument("--workdir", required=True)
    p.add_argument("--steps", type=int, default=120, help="the fine-tune's steps (0: no fine-tune)")
    p.add_argument("--keep-every", type=int, default=30)
    p.add_argument("--starts", type=int, default=3, help="starts per set")
    p.add_argument("--days", type=float, default=60.0, help="days of each free run")
    p.add_argument("--checkpoint", action="append", default=[], help="NAME=PATH, more to rank")
    p.add_argument("--no-shipped", action="store_true", help="leave the shipped emulator out")
    p.add_argument("--output", required=True, help="the JSON record")
    a = p.parse_args(argv)
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    kept = fine_tune(a.store, work / "run", a.steps, a.keep_every) if a.steps else []
    models = {} if a.no_shipped else {"shipped": HS / "emulator.pth"}
    models |= {c.stem: c for c in kept}
    models |= {n: Path(p) for n, p in (c.split("=", 1) for c in a.checkpoint)}
    sets = dict(zip("AB", start_sets(a.starts_store, a.starts), strict=True))
    truth = truth_stats(a.store)
    scores: dict = {"A": {}, "B": {}}
    for name, path in models.items():
        for s, starts in sets.items():
            cache = work / f"{name}.{s}.json"
            if not cache.exists():
                result = score_set(path, a.starts_store, starts, a.days, truth, work)
                cache.write_text(json.dumps(result))
            scores[s][name] = json.loads(cache.read_text())
            print(name, s, f"score {scores[s][name]['score']:.3f}", flush=True)
    names = list(models)
    rho = spearman(*([scores[s][n]["score"] for n in names] for s in "AB"))
    record = {
        "command": "python scripts/research/climate_ranking.py " + " ".join(argv or sys.argv[1:]),
        "fine_tune_minutes": float((work / "run" / "done").read_text()) if a.steps else 0.0,
        "wall_minutes_this_invocation": (time.perf_counter() - t0) / 60,
        "models": {n: str(p) for n, p in models.items()},
        "scores": scores,
        "ranking": {s: sorted(names, key=lambda n: scores[s][n]["score"]) for s in "AB"},
        "spearman": rho,
    }
    Path(a.output).write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(json.dumps(record["ranking"]), f"spearman {rho:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
