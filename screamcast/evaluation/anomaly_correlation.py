# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The anomaly correlation (ACC) of the rollout and of persistence, and the climatology's RMSE.

Anomalies are taken from a climatology (a time-mean map per variable); the climatology's own
RMSE is the reference a forecast must beat at long leads.
"""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.aggregator import TruthSource


class AnomalyCorrelation:
    """ACC against ``climatology (V, F, a, b)`` (on the truth's grid) for ``steps`` steps."""

    per_step = True

    def __init__(
        self,
        climatology: np.ndarray,
        area: np.ndarray,
        variables: list[str],
        steps: int,
        truth: TruthSource | None = None,
    ):
        self.clim = np.asarray(climatology, np.float64)
        self.w = area / area.sum()
        self.variables, self.truth = variables, truth
        nan = np.full((len(variables), steps), np.nan)
        self.acc, self.persistence_acc, self.climatology_rmse = nan.copy(), nan.copy(), nan.copy()
        self._initial: np.ndarray | None = None

    def _acc(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``(V,)`` area-weighted correlation of anomaly fields ``(V, F, a, b)``."""
        ab = (a * b * self.w).sum(axis=(-3, -2, -1))
        aa = (a * a * self.w).sum(axis=(-3, -2, -1))
        bb = (b * b * self.w).sum(axis=(-3, -2, -1))
        return ab / np.sqrt(np.maximum(aa * bb, 1e-300))

    def record(self, step: int, time, fields: np.ndarray) -> None:
        self.score(step, self.truth.on_truth_grid(fields), self.truth.at(step))

    def score(self, k: int, pred: np.ndarray, truth: np.ndarray) -> None:
        """Step ``k`` of ``pred`` against ``truth``, both ``(V, F, a, b)``."""
        truth_anom = np.asarray(truth, np.float64) - self.clim
        if self._initial is None:
            self._initial = truth_anom
        self.acc[:, k] = self._acc(np.asarray(pred, np.float64) - self.clim, truth_anom)
        self.persistence_acc[:, k] = self._acc(self._initial, truth_anom)
        self.climatology_rmse[:, k] = np.sqrt((truth_anom**2 * self.w).sum(axis=(-3, -2, -1)))

    def summary(self) -> dict:
        return {
            v: {
                "acc": self.acc[i].tolist(),
                "persistence_acc": self.persistence_acc[i].tolist(),
                "climatology_rmse": self.climatology_rmse[i].tolist(),
            }
            for i, v in enumerate(self.variables)
        }
