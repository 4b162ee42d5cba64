# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A free run at validation: how far the emulator goes from a validation state, through the
rollout's own step (correctors and bounds), before the rollout's guard would stop it.

A one-step (6 h) loss does not rank climates: the Held-Suarez benchmark's kept checkpoint
had the stage's best loss and its free year stopped at day 104 (docs/notes). With
``global_unroll.valid_free_days`` the stage's best checkpoint is the one whose free run held
longest, then the one with the lowest loss (:func:`selection_score`). With
``global_unroll.valid_climate_starts`` (3 or more) the free runs start from that many
validation states and their climate is scored against the training data's (zonal-mean U and
T biases, the eddy kinetic energy's ratio: :func:`climate_score`), as LUCIE keeps the
checkpoint whose rollout has the smallest climate bias; runs the guard stops are charged by
the fraction of the asked run-days they fell short (:data:`SHORT_FRACTION_WEIGHT`).
"""

from __future__ import annotations

import datetime

import numpy as np
import torch

from screamcast.config.inference import GuardSection
from screamcast.data.calendar import seconds
from screamcast.data.zonal_climate import ZonalStats, compare
from screamcast.model.state import State
from screamcast.rollout.advance import GuardStop, advance
from screamcast.rollout.guard import Guard, Trip
from screamcast.step.step import Step

# score units per day short of the asked days: above any normalised loss, so a checkpoint
# that held longer always ranks first and the loss only decides among equal runs
SHORTFALL_WEIGHT = 1000.0


def selection_score(loss: float, held_days: float | None, days: float) -> float:
    """What the stage's best checkpoint minimises: the loss, plus ``SHORTFALL_WEIGHT`` per
    day the free run fell short of ``days`` (``held_days`` None: no free run, the loss)."""
    if held_days is None:
        return loss
    return loss + SHORTFALL_WEIGHT * max(days - held_days, 0.0)


# what each climate number is divided by in the score: the targets (zonal-mean U bias
# rms 1.5 m/s, T 0.8 K, global eddy kinetic energy within 25%), so each counts 1 at its target
CLIMATE_SCALES = {"u_bias_rms": 1.5, "t_bias_rms": 0.8, "eke_error": 0.25}


# score units for runs that fell short of every asked day (the runs' days short over the
# days asked: one of 3 runs stopped half-way costs 5 / 6). A trip within 60 days from 3 starts
# is one start's weather, not a checkpoint's rate: charged 1,000 a day short, it decided the
# score and two independent sets of starts ranked 7 checkpoints with Spearman 0.18; charged
# so, 0.75, about the climate numbers' own 0.71 (docs/notes/2026-12-06-climate-round2.md)
SHORT_FRACTION_WEIGHT = 5.0


def short_fraction(held_days: list[float], days: float) -> float:
    """The fraction of the asked run-days (``days`` each) that runs holding ``held_days``
    fell short (a run that held longer than asked counts nothing short)."""
    return sum(max(days - h, 0.0) for h in held_days) / (days * len(held_days))


def climate_score(model: ZonalStats, truth: ZonalStats, short_fraction: float = 0.0) -> dict:
    """The free runs' climate against the truth's: its numbers and ``score`` (the sum of each
    number over its target scale, plus ``SHORT_FRACTION_WEIGHT`` x ``short_fraction``, the
    fraction of the asked run-days the guard cut off; no day scored: ``SHORTFALL_WEIGHT``)."""
    if not 0.0 <= short_fraction <= 1.0:
        raise ValueError(f"short_fraction must be in [0, 1], got {short_fraction}")
    if model.count == 0:
        return {"score": SHORTFALL_WEIGHT, "times": 0}
    c = compare(model, truth)
    numbers = {
        "u_bias_rms": c["u_bias_rms"],
        "t_bias_rms": c["t_bias_rms"],
        "eke_error": abs(c["eke_global"] / c["eke_global_truth"] - 1.0),
    }
    score = sum(numbers[k] / v for k, v in CLIMATE_SCALES.items())
    penalty = SHORT_FRACTION_WEIGHT * short_fraction
    return numbers | {"score": score + penalty, "times": model.count}


class ClimateProbe:
    """Feeds a free run's winds and temperature (``names``' ``U[k]``, ``V[k]``, ``T[k]`` or
    the 2-D ``U``, ``V``, ``T``) into zonal statistics every ``every`` steps."""

    def __init__(self, names, lat, area, truth: ZonalStats, every: int, uvt=("U", "V", "T")):
        base = [n.split("[")[0] for n in names]
        self.index = [[i for i, b in enumerate(base) if b == v] for v in uvt]  # 3 x (L,)
        if not all(self.index) or len({len(i) for i in self.index}) != 1:
            raise ValueError(
                f"global_unroll.valid_climate_starts needs the winds and temperature "
                f"{', '.join(uvt)} on the same layers among the outputs {list(names)}"
            )
        self.lat, self.area, self.truth, self.every = lat, area, truth, every

    def stats(self) -> ZonalStats:
        return ZonalStats(self.lat, self.area)

    def add(self, stats: ZonalStats, y: torch.Tensor) -> None:
        """``y (C + D, 6, n, n)``: one state of the run."""
        u, v, t = (y[i].double().cpu().numpy() for i in self.index)  # (L, 6, n, n) each
        stats.add(u, v, t)


def free_starts(g, valid_set) -> list:
    """The validation cubes the free runs start from: the first, or with the climate
    selection ``valid_climate_starts`` of them spread evenly (none without free runs)."""
    if not g.valid_free_days:
        return []
    count = max(1, g.valid_climate_starts)
    where = list(dict.fromkeys(np.linspace(0, len(valid_set) - 1, count).round().astype(int)))
    if len(where) < count:
        raise ValueError(
            f"config: global_unroll.valid_climate_starts={count} needs as many validation "
            f"cubes (global_unroll.valid_samples is {len(valid_set)})"
        )
    return [valid_set[int(i)] for i in where]


class FreeRun:
    """``state -> (days held, Trip | None)``: ``step`` taken ``days`` worth of steps of
    ``dt`` from a state (one cube at its time) with no truth, each output checked by
    ``guard`` (the rollout's default bounds against the training statistics)."""

    def __init__(self, step: Step, guard: Guard, dt: datetime.timedelta, days: float):
        self.step, self.guard, self.dt = step, guard, dt
        self.dt_days = seconds(dt) / 86400.0
        self.steps = max(1, round(days / self.dt_days))

    @classmethod
    def of(cls, step: Step, names, stats, area, dt, days: float) -> FreeRun:
        """With the guard of an inference config's defaults over ``names``' ``stats``."""
        guard = Guard.from_stats(names, stats.to_dict(), area, GuardSection())
        return cls(step, guard, dt, days)

    @torch.no_grad()
    def __call__(self, state: State, probe=None, stats=None) -> tuple[float, Trip | None]:
        """Days held and the trip (None: held them all); with ``probe``, every ``probe.every``
        steps of the run (before any trip) go into ``stats``. The rollout's loop
        (:func:`~screamcast.rollout.advance.advance`) drives it."""
        t0 = state.time[0]
        times = np.array([t0 + j * self.dt for j in range(self.steps + 1)], dtype=object)

        def emit(k: int, y: torch.Tensor) -> None:  # y (C + D, 6, n, n), guarded
            if probe is not None and k % probe.every == 0:
                probe.add(stats, y)

        try:
            advance(self.step, self.guard, state, times, range(self.steps), emit)
        except GuardStop as stop:  # step k left physics: k - 1 steps held
            return (stop.trip.step - 1) * self.dt_days, stop.trip
        return self.steps * self.dt_days, None
