# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The aggregator protocol, and the truth that the aggregators scoring against one share.

An aggregator is fed a rollout one step at a time (as the rollout makes it, or read back from
an output) and keeps only its scores, so memory stays flat in the number of steps. The rollout
is handed aggregators and imports none of this package; a new metric is one new file with a
class of this shape.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import xarray as xr

from screamcast.evaluation.scoring_grid import as_faces


class Aggregator(Protocol):
    """One score over a rollout's steps."""

    # False for scores that are not one value per step (spectra): kept out of the step table
    per_step: bool

    def record(self, step: int, time, fields: np.ndarray) -> None:
        """Step ``step`` at ``time``: ``fields (V, 6, n, n)``, the variables in order."""

    def summary(self) -> dict:
        """``{variable: {score: [value per step]}}`` (or, when not ``per_step``, its own)."""


class TruthSource:
    """``variables`` of the store ``truth`` at ``times`` (one per rollout step, the initial
    condition first), read once per step for every aggregator (the last step is cached).
    ``regrid``: the rollout's ``(V, 6, n, n)`` -> the truth's ``(V, F, a, b)`` (a lat-lon
    truth, :mod:`screamcast.evaluation.scoring_grid`); None on the rollout's own cube."""

    def __init__(self, truth: xr.Dataset, variables, times: np.ndarray, regrid=None):
        self.truth, self.variables, self.times = truth, list(variables), times
        self.regrid = regrid
        self._last: tuple[int, np.ndarray] | None = None
        self.initial = self.at(0)  # (V, F, a, b): persistence's forecast

    @classmethod
    def covering(cls, truth: xr.Dataset, variables, times, regrid=None) -> TruthSource | None:
        """A truth when ``truth`` holds every variable at every one of ``times``, else None."""
        t = truth["time"].values
        if any(v not in truth for v in variables) or not np.isin(times, t).all():
            return None
        return cls(truth, variables, times, regrid)

    def at(self, step: int) -> np.ndarray:
        """``(V, F, a, b)`` at ``times[step]``."""
        if self._last is None or self._last[0] != step:
            at = self.truth[self.variables].sel(time=self.times[step])  # one time is read
            self._last = (step, as_faces(at.to_array().values))
        return self._last[1]

    def on_truth_grid(self, fields: np.ndarray) -> np.ndarray:
        """The rollout's fields where the truth lives."""
        return fields if self.regrid is None else self.regrid(fields)
