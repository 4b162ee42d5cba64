# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A free run at validation: how far the emulator goes from a validation state, through the
rollout's own step (correctors and bounds), before the rollout's guard would stop it.

A one-step (6 h) loss does not rank climates: the Held-Suarez benchmark's kept checkpoint
had the stage's best loss and its free year stopped at day 104 (docs/notes). With
``global_unroll.valid_free_days`` the stage's best checkpoint is the one whose free run held
longest, then the one with the lowest loss (:func:`selection_score`).
"""

from __future__ import annotations

import datetime

import numpy as np
import torch

from screamcast.config.inference import GuardSection
from screamcast.data.calendar import seconds
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


class FreeRun:
    """``(x (1, C, 6, n, n), t0) -> (days held, Trip | None)``: ``step`` taken ``days`` worth
    of steps of ``dt`` from ``x`` with no truth, each output checked by ``guard`` (the
    rollout's default bounds against the training statistics)."""

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
    def __call__(self, x: torch.Tensor, t0) -> tuple[float, Trip | None]:
        C = x.shape[1]
        for j in range(self.steps):
            t0s = np.array([t0 + j * self.dt], dtype=object)  # (1,) the step's times
            t1s = np.array([t0 + (j + 1) * self.dt], dtype=object)
            y = self.step(x, t0s, t1s).fields()  # (1, C + D, 6, n, n)
            trip = self.guard.check(y[0].float().cpu(), j + 1, t1s[0])
            if trip is not None:  # step j + 1 left physics: j steps held
                return j * self.dt_days, trip
            x = y[:, :C]
        return self.steps * self.dt_days, None
