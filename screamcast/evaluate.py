# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Rollout skill against a truth store, computed step by step: memory flat in the steps.

The rollout used to load every step of every variable of its output and of the truth to score
them at the end (~24 GB per variable at ne1024pg2 and 240 steps). :class:`StepSkill` takes one
predicted step at a time (as the rollout makes it, or read back from an output) and reads the
truth at that time only; what it keeps is the initial truth (persistence) and the scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.metrics import area_weighted_bias, area_weighted_rmse


class StepSkill:
    """Per-step area-weighted RMSE, bias and persistence RMSE of ``variables`` against
    ``truth`` at ``times`` (one per rollout step, the initial condition first)."""

    def __init__(self, truth: xr.Dataset, variables: list[str], times: np.ndarray, area):
        self.truth, self.variables, self.times, self.area = truth, list(variables), times, area
        self.rmse = {v: np.full(len(times), np.nan) for v in self.variables}
        self.bias = {v: np.full(len(times), np.nan) for v in self.variables}
        self.persistence = {v: np.full(len(times), np.nan) for v in self.variables}
        self._initial = self._truth_at(0)  # (V, 6, n, n)
        self.last: tuple[np.ndarray, np.ndarray] | None = None  # (prediction, truth) of var 0

    @classmethod
    def covering(cls, truth: xr.Dataset, variables, times, area) -> StepSkill | None:
        """A scorer when ``truth`` holds every variable at every one of ``times``, else None."""
        t = truth["time"].values
        if any(v not in truth for v in variables) or not np.isin(times, t).all():
            return None
        return cls(truth, variables, times, area)

    def _truth_at(self, k: int) -> np.ndarray:
        at = self.truth[self.variables].sel(time=self.times[k])  # one time is read
        return at.to_array().values  # (V, 6, n, n)

    def add(self, k: int, fields: np.ndarray) -> None:
        """Score step ``k``: ``fields (V, 6, n, n)``, the variables in order."""
        truth = self._truth_at(k)
        for i, v in enumerate(self.variables):
            self.rmse[v][k] = area_weighted_rmse(fields[i], truth[i], self.area)
            self.bias[v][k] = area_weighted_bias(fields[i], truth[i], self.area)
            self.persistence[v][k] = area_weighted_rmse(self._initial[i], truth[i], self.area)
        if k == len(self.times) - 1:
            self.last = (np.array(fields[0]), truth[0])

    def add_from_output(self, output: xr.Dataset, steps: range) -> None:
        """Score ``steps`` of a written output, one step in memory at a time."""
        for k in steps:
            self.add(k, output[self.variables].isel(time=k).to_array().values)

    def table(self) -> dict:
        return {
            v: {
                "rmse": self.rmse[v].tolist(),
                "bias": self.bias[v].tolist(),
                "persistence_rmse": self.persistence[v].tolist(),
            }
            for v in self.variables
        }

    def write(self, base: str | Path) -> dict:
        """``<base>_metrics.csv`` / ``.json`` and, once the last step is scored,
        ``<base>_last_step.png`` (prediction, truth and error of the first variable)."""
        rows = [
            (k, str(self.times[k]), v, self.rmse[v][k], self.bias[v][k], self.persistence[v][k])
            for v in self.variables
            for k in range(len(self.times))
        ]
        with open(f"{base}_metrics.csv", "w") as f:
            f.write("step,time,variable,rmse,bias,persistence_rmse\n")
            f.writelines(f"{k},{t},{v},{r:.6g},{b:.6g},{p:.6g}\n" for k, t, v, r, b, p in rows)
        table = self.table()
        Path(f"{base}_metrics.json").write_text(json.dumps(table, indent=1))
        if self.last is not None:
            from screamcast.plot import plot_prediction

            plot_prediction(f"{base}_last_step.png", *self.last, self.variables[0])
        return table
