# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Drift: the area-weighted global mean of the rollout and of the truth, per step."""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.aggregator import TruthSource


class GlobalMeanDrift:
    per_step = True

    def __init__(self, truth: TruthSource, area: np.ndarray):
        self.truth, self.variables = truth, truth.variables
        self.weights = area / area.sum()  # (F, a, b), summing to 1
        # (2, steps) per variable: the rollout's mean, the truth's
        self.mean = {v: np.full((2, len(truth.times)), np.nan) for v in self.variables}

    def record(self, step: int, time, fields: np.ndarray) -> None:
        truth = self.truth.at(step)  # (V, F, a, b)
        fields = self.truth.on_truth_grid(fields)
        w = self.weights
        for i, v in enumerate(self.variables):
            self.mean[v][:, step] = (fields[i] * w).sum(), (truth[i] * w).sum()

    def summary(self) -> dict:
        return {
            v: {"global_mean": self.mean[v][0].tolist(), "truth_global_mean": m[1].tolist()}
            for v, m in self.mean.items()
        }
