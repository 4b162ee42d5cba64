# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Multi-step training through the global step: a wrapper around the one-step predictor
(GraphCast's ``autoregressive.Predictor``) that rolls whole cubes ``k`` steps with the
rollout's gather, reassembly and correctors, so every halo after the first step is the
model's own prediction, across cube edges too, and gradients pass through all of it.

Each step can be recomputed in the backward pass instead of kept (activation checkpointing:
``global_unroll.checkpoint``), so memory grows by one state per step, not by a network's
activations per step. Validation takes the same path without gradients.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.checkpoint import checkpoint

from screamcast.data.batch import CubeBatch
from screamcast.model.state import State
from screamcast.step.step import Step
from screamcast.train.climate_losses import spectral_loss, time_mean_loss
from screamcast.train.losses import LossFunction


def lead_weights(weights, steps: int) -> torch.Tensor:
    """``(k,)``: the configured weight of each lead's loss (empty: 1 each), checked."""
    w = list(weights) or [1.0] * steps
    if len(w) != steps or min(w) < 0:
        raise ValueError(
            f"config: lead_weights needs {steps} non-negative weights (one per step of "
            f"rollout_steps={steps}), got {list(weights)}"
        )
    return torch.tensor(w, dtype=torch.float32)


class GlobalUnroll:
    """``(batch, times) -> (summed loss, per-variable loss of the first step)``.

    ``batch``: ``state (B, C, 6, n, n)``, ``target (B, k, C + D, 6, n, n)``, ``start (B,)``
    (time indices into ``times``, whose entries give each step's forcing; ``state (B, 2C, 6,
    n, n)`` with two input times, t's fields then t - dt's); ``scale`` and
    ``mean``: the pipeline's loss scale and output means."""

    def __init__(
        self,
        step: Step,
        loss: LossFunction,
        scale: torch.Tensor,
        mean: torch.Tensor,
        area: np.ndarray,
        weights: torch.Tensor,
        recompute: bool = True,
        input_noise: float = 0.0,
    ):
        self.step, self.loss, self.weights = step, loss, weights
        self.scale, self.mean = scale, mean  # (1, C + D, 1, 1): the loss's and the outputs' mean
        self.area = torch.as_tensor(area / area.mean(), dtype=torch.float32)  # (6, n, n), mean 1
        self.recompute, self.input_noise = recompute, input_noise
        self.climate = None  # (SpectralPower or None, its weight, time-mean weight, std)

    def with_climate_losses(self, power, spectral: float, time_mean: float, std) -> GlobalUnroll:
        """Add the spectral-amplitude and time-mean losses (climate_losses.py) with these
        weights; ``std (1, V, 1, 1)``: each output's standard deviation."""
        if spectral < 0 or time_mean < 0:
            raise ValueError(
                "config: global_unroll.spectral_weight and time_mean_weight must be >= 0, got "
                f"{spectral} and {time_mean}"
            )
        if spectral or time_mean:
            self.climate = (power if spectral else None, spectral, time_mean, std)
        return self

    def _fields(self, x: torch.Tensor, t0s, previous, t1s) -> torch.Tensor:
        return self.step(State(x, t0s, previous), t1s).fields()  # (B, C + D, 6, n, n)

    def _first_state(self, x: torch.Tensor, t0s) -> State:
        """``x (B, T C, 6, n, n)`` (t's fields, then t - dt's with two input times) at
        ``t0s``; in training perturbed by ``input_noise`` x diff_std (both times by the same
        draw: a state off the truth's, with the truth's last change)."""
        C = self.step.C
        x, previous = x[:, :C], (x[:, C:] if x.shape[1] == 2 * C else None)
        if self.input_noise and torch.is_grad_enabled():  # training only; the RNG is the run's
            sigma = self.scale[:, :C].to(x).unsqueeze(2)  # (1, C, 1, 1, 1): diff_std
            noise = self.input_noise * sigma * torch.randn_like(x)
            x = x + noise
            previous = None if previous is None else previous + noise
        return State(x, t0s, previous)

    def __call__(self, batch: CubeBatch, times: np.ndarray):
        target, C = batch.target, self.step.C  # (B, k, V, 6, n, n)
        B, k, start = len(target), target.shape[1], batch.start.cpu().numpy()
        area = self.area.to(target.device).flatten(0, 1).expand(B, -1, -1)  # (B, 6 n, n)
        total, first, preds = 0.0, None, []
        state = self._first_state(batch.state, times[start])  # each cube at its own time
        for j in range(k):
            t1s = times[start + j + 1]
            if self.recompute and torch.is_grad_enabled():
                pred = checkpoint(self._fields, *state, t1s, use_reentrant=False)
            else:
                pred = self._fields(*state, t1s)
            per_var = self.loss(
                pred.flatten(2, 3), target[:, j].flatten(2, 3), area, self.scale
            )  # (B, V, 6 n, n) each -> (V,)
            total = total + self.weights[j].to(per_var.device) * per_var.mean()
            first = per_var.detach() if first is None else first
            preds.append(pred)
            earlier = None if state.previous is None else state.fields  # two input times
            state = State(pred[:, :C], t1s, earlier)  # the model's own prediction, next input
        if self.climate is not None and torch.is_grad_enabled():  # validation: the step loss
            total = total + self._climate_loss(torch.stack(preds, 1), target)
        return total, first

    def _climate_loss(self, preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """``preds, target (B, k, V, 6, n, n)``: the weighted spectral and time-mean terms."""
        power, spectral, time_mean, std = self.climate
        std = std.to(preds)
        out = 0.0
        if power is not None:
            k = preds.shape[1]
            terms = [spectral_loss(power, preds[:, j], target[:, j], std) for j in range(k)]
            out = out + spectral * torch.stack(terms).mean()
        if time_mean:
            area = self.area.to(preds.device)
            out = out + time_mean * preds.shape[1] * time_mean_loss(preds, target, area, std)
        return out

    def no_change(self, batch: CubeBatch) -> torch.Tensor:
        """The first step's loss of the no-change predictor (the state kept, the diagnostics
        at their training mean): what a network that learnt nothing scores."""
        C = self.step.C
        x, target = batch.state[:, :C], batch.target[:, 0]  # (B, C, ..), (B, V, 6, n, n)
        B, D = len(x), target.shape[1] - C
        mean = self.mean.to(x)[0, C:].view(1, D, 1, 1, 1).expand(B, D, *x.shape[2:])
        trivial = torch.cat([x, mean], dim=1)  # (B, V, 6, n, n)
        area = self.area.to(x.device).flatten(0, 1).expand(B, -1, -1)
        return self.loss(trivial.flatten(2, 3), target.flatten(2, 3), area, self.scale).mean()
