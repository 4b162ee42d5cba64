# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The k-step unroll with a refreshed halo, scored by the configured loss (:mod:`.losses`)."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.data.batch import CropBatch
from screamcast.model.pipeline import Pipeline
from screamcast.model.state import State
from screamcast.model.stepper import CropStepper
from screamcast.train.losses import LossFunction, area_weighted_mse


def no_change_loss(
    pipeline: Pipeline, batch: CropBatch, loss: LossFunction = area_weighted_mse
) -> torch.Tensor:
    """The one-step loss of the trivial predictor: the state unchanged, the diagnostics at their
    mean (a network that outputs zeros). A validation loss that sits here has learnt nothing."""
    state, target, area = batch.state, batch.target[:, 0], batch.area
    C = state.shape[1]
    mean = pipeline.mean[:, C:].expand(len(state), -1, *state.shape[-2:])  # (B, D, S, S)
    trivial = torch.cat([state, mean], dim=1)  # (B, C + D, S, S)
    return loss(trivial, target, area, pipeline.loss_scale()).mean()


def rollout_loss(
    pipeline: Pipeline,
    batch: CropBatch,
    times: np.ndarray,
    halo: int,
    weights: torch.Tensor | None = None,
    loss: LossFunction = area_weighted_mse,
):
    """Unroll ``k`` steps from the crops' model times (``times``: the store's, which the
    batch's ``time`` indexes); before each next step the crop's outer ``halo`` ring (its
    lateral boundary) is reset to the truth, as the neighbouring tiles would supply it in a
    rollout. Returns (summed loss, per-variable loss of the first step)."""
    target = batch.target  # (B, k, C + D, S, S)
    C, k = batch.state.shape[1], target.shape[1]
    when = np.asarray(times)[batch.time.cpu().numpy()[:, None] + np.arange(k + 1)]  # (B, k + 1)
    stepper = CropStepper(pipeline, batch.forcing, batch.static, when)
    state = State(batch.state, when[:, 0])  # (B, C, S, S) at the crops' first times
    area = batch.area
    scale = pipeline.loss_scale()
    total, first = 0.0, None
    for j in range(k):
        pred = stepper.step(state, when[:, j + 1])  # (B, C + D, S, S)
        per_var = loss(pred, target[:, j], area, scale)
        total = total + (per_var * weights).sum() if weights is not None else total + per_var.mean()
        first = per_var.detach() if first is None else first
        if j + 1 < k:
            fields = pred[:, :C]
            if halo:
                ring = torch.ones_like(fields[:1, :1], dtype=torch.bool)
                ring[..., halo:-halo, halo:-halo] = False
                fields = torch.where(ring, target[:, j, :C], fields)
            state = State(fields, when[:, j + 1])
    return total, first
