# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stepper protocol: one model step, as training's unroll and the global rollout take it.

Crops and cubes step on one contract, ``(state, t1)``: a
:class:`~screamcast.model.state.State` (fields and the model time they stand at) to the
next model time, by the same pipeline call (:meth:`Pipeline.forward`, or ``predict`` at
inference). :class:`CropStepper` (this protocol) steps training crops whose forcing comes
with the batch and returns the fields; :class:`screamcast.step.step.Step` steps cubes (its
predictor gathers tiles with their halo and reassembles them) and returns a ``StepOutput``
with the next state. A crop finds its forcing at those times among the batch's, the globe
evaluates it there.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from screamcast.model.pipeline import Pipeline
from screamcast.model.state import State


class Stepper(Protocol):
    def step(self, state: State, t1: np.ndarray) -> torch.Tensor:
        """``state`` (fields ``(B, C, a, b)`` at their times) -> ``(B, C + D, a, b)`` at the
        model times ``t1 (B,)``: the prognostic fields, then the diagnostics."""


class CropStepper:
    """Steps a batch of crops: ``forcing (B, k + 1, Fc, S, S)`` holds the forcing at each of
    the unroll's model times ``times (B, k + 1)``, ``static (B, F, S, S)`` the crops' static
    inputs. Differentiable (training)."""

    def __init__(
        self, pipeline: Pipeline, forcing: torch.Tensor, static: torch.Tensor, times: np.ndarray
    ):
        self.pipeline, self.forcing, self.static = pipeline, forcing, static
        self.times = np.asarray(times)  # (B, k + 1)

    def step(self, state: State, t1: np.ndarray) -> torch.Tensor:
        """``state`` (fields ``(B, C, S, S)`` at its times) -> ``(B, C + D, S, S)`` at ``t1``."""
        j = self.position(state.time)
        if self.position(t1) != j + 1:
            raise ValueError(f"a crop steps to its batch's next time, got {state.time} -> {t1}")
        forcing = self.forcing[:, j : j + 2].flatten(1, 2)  # (B, 2, Fc, S, S) -> (B, 2 Fc, S, S)
        return self.pipeline(state.fields, forcing, self.static)  # (B, C + D, S, S)

    def position(self, t: np.ndarray) -> int:
        """Where the times ``t (B,)`` stand among the batch's (the same for every crop)."""
        for j in range(self.times.shape[1]):
            if (self.times[:, j] == t).all():
                return j
        raise ValueError(f"{t} are not times of this batch's crops")
