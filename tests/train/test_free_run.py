# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The free run at validation: how far a state goes through the step before the rollout's
guard stops it, and the best checkpoint chosen by it."""

import csv
import datetime

import cftime
import numpy as np
import pytest
import torch

from screamcast.data.stats import Stats
from screamcast.model.state import State
from screamcast.step.step import Step
from screamcast.train.free_run import SHORTFALL_WEIGHT, FreeRun, selection_score
from tests.train.test_global_unroll import config

DT = datetime.timedelta(hours=6)
T0 = cftime.DatetimeNoLeap(1, 3, 1)


def drifting(rate: float) -> FreeRun:
    """A one-channel world whose step adds ``rate`` sigma to every cell each step."""
    stats = Stats({"a": 0.0}, {"a": 1.0}, {"a": 1.0})
    step = Step(lambda x, t0, t1: x + rate, n_prognostic=1)
    return FreeRun.of(step, ["a"], stats, np.ones((6, 4, 4)), DT, days=2.0)


def test_the_free_run_stops_where_the_guard_would():
    """The global mean leaves mu +- 1 sigma (the guard's default) at step 4 of 0.3 sigma
    each: 3 steps, 0.75 days held; a state that does not move holds all 2 days (8 steps)."""
    x = State.one(torch.zeros(1, 6, 4, 4), T0)
    held, trip = drifting(0.3)(x)
    assert held == 0.75 and trip.step == 4 and trip.what == "global mean"
    assert trip.time == str(T0 + 4 * DT) and trip.value == pytest.approx(1.2)
    assert drifting(0.0)(x) == (2.0, None)
    nan, trip = drifting(float("nan"))(x)
    assert nan == 0.0 and trip.what == "non-finite value"


def test_the_score_ranks_days_held_before_the_loss():
    assert selection_score(0.3, None, 0.0) == 0.3  # no free run: the loss
    assert selection_score(0.3, 2.0, 2.0) == 0.3
    assert selection_score(0.01, 1.75, 2.0) == 0.01 + 0.25 * SHORTFALL_WEIGHT
    assert selection_score(0.9, 2.0, 2.0) < selection_score(0.01, 1.75, 2.0)


def test_a_global_stage_logs_its_free_runs_and_keeps_the_best_by_them(tiny_store, tmp_path):
    """Every validation runs 12 h free from the first validation cube; metrics.csv has the
    days and the score, and best.pth is the step with the lowest score."""
    from screamcast.checkpoint_io import load_checkpoint
    from screamcast.train.loop import train

    run = tmp_path / "run"
    train(config(tiny_store, f"run_dir={run}", "unroll=global", "rollout_steps=2",
                 "global_unroll.valid_samples=2", "global_unroll.valid_free_days=0.5",
                 "steps=4", "valid_every=2"))  # fmt: skip
    with open(run / "metrics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["valid_loss"]]
    assert [int(r["step"]) for r in rows] == [2, 4]
    for r in rows:
        held, loss = float(r["valid_free_days"]), float(r["valid_loss"])
        assert held in (0.0, 0.125, 0.25, 0.375, 0.5)  # whole 3 h steps of the tiny store
        assert float(r["valid_score"]) == pytest.approx(loss + SHORTFALL_WEIGHT * (0.5 - held))
    best = min(rows, key=lambda r: float(r["valid_score"]))
    assert load_checkpoint(run / "best.pth")["step"] == int(best["step"])


def test_a_free_run_needs_the_global_step(tiny_store, tmp_path):
    from screamcast.train.loop import train

    with pytest.raises(ValueError, match="valid_free_days runs the rollout's step"):
        train(config(tiny_store, f"run_dir={tmp_path}", "global_unroll.valid_free_days=1"))
    with pytest.raises(ValueError, match="valid_free_days=-1.0 must be >= 0"):
        train(config(tiny_store, f"run_dir={tmp_path}", "unroll=global",
                     "global_unroll.valid_free_days=-1"))  # fmt: skip


def test_a_run_that_held_longer_is_kept_over_a_lower_loss(tiny_store, tmp_path, monkeypatch):
    """The selection, apart from the free run's physics: validation at step 2 held all 0.5
    days, at step 4 a quarter day less; best.pth is step 2's though step 4's loss is lower."""
    from screamcast.checkpoint_io import load_checkpoint
    from screamcast.train import objectives
    from screamcast.train.loop import train

    held = iter([0.5, 0.25])
    monkeypatch.setattr(objectives.GlobalObjective, "free_days", lambda self, s: next(held))
    run = tmp_path / "run"
    train(config(tiny_store, f"run_dir={run}", "unroll=global", "rollout_steps=1",
                 "global_unroll.valid_samples=2", "global_unroll.valid_free_days=0.5",
                 "steps=4", "valid_every=2", "optim.lr=1e-3"))  # fmt: skip
    with open(run / "metrics.csv") as f:
        rows = {int(r["step"]): r for r in csv.DictReader(f) if r["valid_loss"]}
    assert float(rows[4]["valid_loss"]) < float(rows[2]["valid_loss"])  # the loss would pick 4
    assert load_checkpoint(run / "best.pth")["step"] == 2


def test_each_step_of_the_free_run_gets_its_own_times():
    seen = []

    def record(x, t0, t1):
        seen.append((t0[0], t1[0]))
        return x

    run = FreeRun.of(Step(record, n_prognostic=1), ["a"], Stats({"a": 0.0}, {"a": 1.0},
                     {"a": 1.0}), np.ones((6, 4, 4)), DT, days=1.0)  # fmt: skip
    run(State.one(torch.zeros(1, 6, 4, 4), T0))
    assert seen == [(T0 + j * DT, T0 + (j + 1) * DT) for j in range(4)]


def test_a_quarter_day_short_outweighs_any_loss():
    """A run that held all 120 days with loss 5 ranks before one a quarter-day short with
    loss 0.1 (a weight of 10 a day would invert them)."""
    assert selection_score(5.0, 120.0, 120.0) < selection_score(0.1, 119.75, 120.0)


def _zonal(u_shift=0.0, eke_scale=1.0, seed=0):
    from screamcast.data.zonal_climate import ZonalStats
    from screamcast.grid import PhysicsGrid

    grid = PhysicsGrid(8, 2)
    rng = np.random.default_rng(seed)
    stats = ZonalStats(grid.lat, grid.area)
    lat = np.deg2rad(grid.lat)
    for _ in range(6):
        eddy = rng.standard_normal((2, 2, *grid.lat.shape)) * eke_scale
        u = 20 * np.cos(lat)[None] + u_shift + eddy[0]
        v = eddy[1]
        t = np.broadcast_to(280 - 30 * np.sin(lat) ** 2, u.shape)
        stats.add(u, v, t)
    return stats


def test_the_climate_score_counts_each_target_once():
    from screamcast.grid import PhysicsGrid
    from screamcast.train.free_run import climate_score

    truth = _zonal()
    same = climate_score(_zonal(), truth)
    assert same["score"] == pytest.approx(0.0, abs=1e-9) and same["times"] == 6
    shifted = climate_score(_zonal(u_shift=1.5), truth)
    assert shifted["u_bias_rms"] == pytest.approx(1.5, rel=1e-6)
    assert shifted["score"] == pytest.approx(1.0, rel=1e-6)
    from screamcast.data.zonal_climate import compare

    weaker = _zonal(eke_scale=np.sqrt(0.75))
    weak, c = climate_score(weaker, truth), compare(weaker, truth)
    error = 1.0 - c["eke_global"] / c["eke_global_truth"]
    assert 0.2 < error < 0.3 and weak["eke_error"] == pytest.approx(error, rel=1e-9)
    assert weak["score"] == pytest.approx(error / 0.25 + weak["u_bias_rms"] / 1.5, rel=1e-6)
    # one of 3 runs stopped half-way: 1/6 of the asked run-days short, 5/6 of a target
    half = climate_score(_zonal(u_shift=1.5), truth, short_fraction=1 / 6)["score"]
    assert half == pytest.approx(1.0 + 5.0 / 6.0, rel=1e-6)
    with pytest.raises(ValueError, match="short_fraction must be in"):
        climate_score(_zonal(), truth, short_fraction=1.5)
    from screamcast.data.zonal_climate import ZonalStats

    grid = PhysicsGrid(8, 2)
    none = ZonalStats(grid.lat, grid.area)
    assert climate_score(none, truth, short_fraction=1.0)["score"] == SHORTFALL_WEIGHT


def test_a_stage_keeps_the_checkpoint_whose_free_runs_climate_is_closest(tiny_store, tmp_path):
    """Three free runs of 12 h from spread validation cubes, their climate against the
    training range's: metrics.csv has the climate columns and the score best.pth minimises;
    fewer than 3 starts are refused."""
    from screamcast.checkpoint_io import load_checkpoint
    from screamcast.train.loop import train

    run = tmp_path / "run"
    keys = ["unroll=global", "rollout_steps=2", "global_unroll.valid_samples=4",
            "global_unroll.valid_free_days=0.5", "global_unroll.valid_climate_starts=3",
            "global_unroll.climate_names=[u,v,temperature]", "steps=4",
            "valid_every=2"]  # fmt: skip
    train(config(tiny_store, f"run_dir={run}", *keys))
    with open(run / "metrics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["valid_loss"]]
    assert len(rows) == 2
    for r in rows:
        score, loss = float(r["valid_climate_score"]), float(r["valid_loss"])
        assert float(r["valid_climate_u_bias_rms"]) >= 0
        assert float(r["valid_score"]) == pytest.approx(score + 1e-3 * loss)
    best = min(rows, key=lambda r: float(r["valid_score"]))
    assert load_checkpoint(run / "best.pth")["step"] == int(best["step"])
    # a run asked for less than a step holds a whole step, more than asked: nothing short
    longer = [k.replace("valid_free_days=0.5", "valid_free_days=0.1") for k in keys]
    train(config(tiny_store, f"run_dir={tmp_path / 'longer'}", *longer))
    # a run asked for less than a step holds a whole step, more than asked: nothing short
    longer = [k.replace("valid_free_days=0.5", "valid_free_days=0.1") for k in keys]
    train(config(tiny_store, f"run_dir={tmp_path / 'longer'}", *longer))
    with pytest.raises(ValueError, match="valid_climate_starts needs at least 3 starts"):
        train(config(tiny_store, f"run_dir={tmp_path / 'two'}", *keys[:4],
                     "global_unroll.valid_climate_starts=2", keys[5], "steps=2"))  # fmt: skip
