# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A toy nudging plug-in (the test of "a new nudging method is one file and one config
entry"): relax each variable's area-weighted global mean toward the reference's, leaving
every pattern alone."""

import math
from dataclasses import dataclass

import numpy as np
import torch

from screamcast.data.calendar import seconds
from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.nudging import NudgingError, register_corrector
from screamcast.rollout.nudging.reference import ReferenceSeries


@dataclass(frozen=True)
class GlobalMeanConfig:
    """Its settings: ``tau_hours`` is also the relaxation's (``--nudge-tau-hours`` sets it);
    ``fraction`` (its own) comes from ``nudging.config``."""

    tau_hours: float = 6.0
    fraction: float = 1.0  # how much of the relaxation's gap closing it applies


class GlobalMean:
    resume_attrs = ("nudge_vars", "nudge_tau_hours")

    def __init__(self, settings, context):
        self.variables = list(context.variables)
        self.index = [context.state_vars.index(v) for v in self.variables]
        self.tau_hours = settings.tau_hours
        tau = settings.tau_hours * 3600.0
        self.alpha = settings.fraction * (1.0 - math.exp(-seconds(context.dt) / tau))
        self.series = ReferenceSeries(context.reference, self.variables, context.name, "linear")
        ref_area = PhysicsGrid.from_name(context.reference.attrs["grid"]).area
        self.ref_weights = ref_area / ref_area.sum()  # (6, m, m)
        self.weights = torch.as_tensor(context.grid.area / context.grid.area.sum())  # (6, n, n)

    def _gap(self, x: torch.Tensor, time) -> torch.Tensor:
        """(V,): the reference's global mean minus the state's."""
        target = (self.series.target(time) * self.ref_weights).sum(axis=(-3, -2, -1))  # (V,)
        w = self.weights.to(x.dtype)
        mean = torch.stack([(x[c] * w).sum() for c in self.index])
        return torch.as_tensor(target, dtype=x.dtype) - mean

    def prepare(self, first, last) -> None:
        self.series.check_covers(first, last)

    def apply(self, x: torch.Tensor, time) -> torch.Tensor:
        for k, gap in zip(self.index, self.alpha * self._gap(x, time), strict=True):
            x[k] += gap
        return x

    def misfit(self, fields, time) -> np.ndarray:
        x = torch.as_tensor(np.asarray(fields), dtype=torch.float64)
        return np.abs(self._gap(x, time).numpy())

    def attrs(self) -> dict:
        return {"nudge_vars": ",".join(self.variables), "nudge_tau_hours": self.tau_hours}

    def close(self) -> None:
        self.series.close()

    def restrict(self, rank, blocks, tile, exchange):
        raise NudgingError("nudging method global_mean runs on one rank: run it on one rank")


register_corrector("global_mean", GlobalMeanConfig)(GlobalMean)
