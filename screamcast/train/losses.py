# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Losses registered by name: the training config's ``loss`` picks one.

A loss maps ``pred, target (B, V, S, S)``, ``area (B, S, S)`` (mean 1) and ``scale (1, V, 1,
1)`` to a per-variable loss ``(V,)`` in normalised units. A new one is one module with a
function registered by :func:`register_loss`; ``loss`` names it by its registered name or as
``module:name`` (:class:`screamcast.registry.Registry`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from screamcast.registry import Registry

LossFunction = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
LOSSES = Registry("loss")
register_loss = LOSSES.register


def loss_function(name: str) -> LossFunction:
    """The loss registered as ``name`` (or ``module:name``)."""
    return LOSSES[name]


@register_loss("area_weighted_mse")
def area_weighted_mse(
    pred: torch.Tensor, target: torch.Tensor, area: torch.Tensor, scale: torch.Tensor
) -> torch.Tensor:
    """Per-variable MSE of ``(pred - target) / scale`` weighted by ``area``: ``(V,)``.

    pred, target ``(B, V, S, S)``; area ``(B, S, S)`` with mean 1; scale ``(1, V, 1, 1)``.
    """
    err = ((pred - target) / scale) ** 2 * area[:, None]  # (B, V, S, S)
    return err.mean(dim=(0, 2, 3))
