# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Area-weighted RMSE and bias per step, persistence's RMSE, and the time-mean bias map."""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.metrics import area_weighted_bias, area_weighted_rmse
from screamcast.evaluation.panel_grid import LAST_STEP_VARIABLES, shrunk


class RmseBias:
    """Against ``truth``; ``area (F, a, b)`` is where the truth lives (the cube's ``(6, n,
    n)``, or ``(1, nlat, nlon)`` for a lat-lon truth)."""

    per_step = True

    def __init__(self, truth: TruthSource, area: np.ndarray):
        self.truth, self.area, self.variables = truth, area, truth.variables
        steps = len(truth.times)
        self.rmse = {v: np.full(steps, np.nan) for v in self.variables}
        self.bias = {v: np.full(steps, np.nan) for v in self.variables}
        self.persistence = {v: np.full(steps, np.nan) for v in self.variables}
        # (prediction, truth) of the first LAST_STEP_VARIABLES at the last step, shrunk
        self.last: tuple[np.ndarray, np.ndarray] | None = None
        # time-mean bias maps over the steps after the initial condition: one per variable
        self.bias_sum = np.zeros((len(self.variables), *np.shape(area)))
        self.bias_steps = 0

    def record(self, step: int, time, fields: np.ndarray) -> None:
        truth = self.truth.at(step)  # (V, F, a, b)
        fields = self.truth.on_truth_grid(fields)
        initial = self.truth.initial
        for i, v in enumerate(self.variables):
            self.rmse[v][step] = area_weighted_rmse(fields[i], truth[i], self.area)
            self.bias[v][step] = area_weighted_bias(fields[i], truth[i], self.area)
            self.persistence[v][step] = area_weighted_rmse(initial[i], truth[i], self.area)
        if step > 0:
            self.bias_sum += np.asarray(fields, np.float64) - truth
            self.bias_steps += 1
        if step == len(self.truth.times) - 1:
            drawn = slice(0, LAST_STEP_VARIABLES)
            self.last = (shrunk(np.asarray(fields[drawn])), shrunk(np.asarray(truth[drawn])))

    @property
    def mean_bias(self) -> np.ndarray:
        """``(V, F, a, b)``: the time-mean bias over the steps after the initial condition."""
        return self.bias_sum / max(self.bias_steps, 1)

    def summary(self) -> dict:
        return {
            v: {
                "rmse": self.rmse[v].tolist(),
                "bias": self.bias[v].tolist(),
                "persistence_rmse": self.persistence[v].tolist(),
            }
            for v in self.variables
        }
