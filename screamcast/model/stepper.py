# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stepper protocol: one model step, as training's unroll and the global rollout take it.

Both advance a state by the same pipeline call (:meth:`Pipeline.forward`, or ``predict`` at
inference): :class:`CropStepper` on training crops whose forcing comes with the batch,
:class:`screamcast.rollout.stepper.GlobalStepper` on the whole cube, gathering tiles with their
halo and reassembling them. ``t0, t1`` are the step's two times: positions in the batch's
forcing for a crop, model times for the globe.
"""

from __future__ import annotations

from typing import Protocol

import torch

from screamcast.model.pipeline import Pipeline


class Stepper(Protocol):
    def step(self, state: torch.Tensor, t0, t1) -> torch.Tensor:
        """The prognostic ``state (..., C, a, b)`` at ``t0`` -> ``(..., C + D, a, b)`` at
        ``t1``: the prognostic state, then the diagnostics."""


class CropStepper:
    """Steps a batch of crops: ``forcing (B, k + 1, Fc, S, S)`` holds every time of the unroll,
    ``static (B, F, S, S)`` the crops' static inputs. Differentiable (training)."""

    def __init__(self, pipeline: Pipeline, forcing: torch.Tensor, static: torch.Tensor):
        self.pipeline, self.forcing, self.static = pipeline, forcing, static

    def step(self, state: torch.Tensor, t0: int, t1: int) -> torch.Tensor:
        if t1 != t0 + 1:
            raise ValueError(f"a crop steps one time at a time, got {t0} -> {t1}")
        forcing = self.forcing[:, t0 : t1 + 1].flatten(1, 2)  # (B, 2, Fc, S, S) -> (B, 2 Fc, S, S)
        return self.pipeline(state, forcing, self.static)  # (B, C + D, S, S)
