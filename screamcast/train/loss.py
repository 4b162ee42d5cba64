# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Area-weighted MSE in normalised units, and the k-step unroll with a refreshed halo."""

from __future__ import annotations

import torch

from screamcast.model.pipeline import Pipeline


def area_weighted_mse(
    pred: torch.Tensor, target: torch.Tensor, area: torch.Tensor, scale: torch.Tensor
) -> torch.Tensor:
    """Per-variable MSE of ``(pred - target) / scale`` weighted by ``area``: ``(V,)``.

    pred, target ``(B, V, S, S)``; area ``(B, S, S)`` with mean 1; scale ``(1, V, 1, 1)``.
    """
    err = ((pred - target) / scale) ** 2 * area[:, None]  # (B, V, S, S)
    return err.mean(dim=(0, 2, 3))


def no_change_loss(pipeline: Pipeline, batch: dict) -> torch.Tensor:
    """The one-step loss of the trivial predictor: the state unchanged, the diagnostics at their
    mean (a network that outputs zeros). A validation loss that sits here has learnt nothing."""
    state, target, area = batch["state"], batch["target"][:, 0], batch["area"]
    C = state.shape[1]
    mean = pipeline.mean[:, C:].expand(len(state), -1, *state.shape[-2:])  # (B, D, S, S)
    trivial = torch.cat([state, mean], dim=1)  # (B, C + D, S, S)
    return area_weighted_mse(trivial, target, area, pipeline.loss_scale()).mean()


def rollout_loss(pipeline: Pipeline, batch: dict, halo: int, weights: torch.Tensor | None = None):
    """Unroll ``k`` steps; before each next step the crop's outer ``halo`` ring (its lateral
    boundary) is reset to the truth, as the neighbouring tiles would supply it in a rollout.
    Returns (summed loss, per-variable loss of the first step)."""
    state, target = batch["state"], batch["target"]  # (B, C, S, S), (B, k, C + D, S, S)
    forcing, static, area = batch["forcing"], batch["static"], batch["area"]
    C, k = state.shape[1], target.shape[1]
    scale = pipeline.loss_scale()
    total, first = 0.0, None
    for j in range(k):
        # (B, 2, Fc, S, S) at t, t+1 -> (B, 2 Fc, S, S)
        pred = pipeline(state, forcing[:, j : j + 2].flatten(1, 2), static)  # (B, C + D, S, S)
        per_var = area_weighted_mse(pred, target[:, j], area, scale)
        total = total + (per_var * weights).sum() if weights is not None else total + per_var.mean()
        first = per_var.detach() if first is None else first
        if j + 1 < k:
            state = pred[:, :C]
            if halo:
                ring = torch.ones_like(state[:1, :1], dtype=torch.bool)
                ring[..., halo:-halo, halo:-halo] = False
                state = torch.where(ring, target[:, j, :C], state)
    return total, first
