# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Losses registered by name: the training config's ``loss`` picks one.

A loss maps ``pred, target (B, V, S, S)``, ``area (B, S, S)`` (mean 1) and ``scale (1, V, 1,
1)`` to a per-variable loss ``(V,)`` in normalised units. A new one is one module with a
function registered by :func:`register_loss`; ``loss`` names it by its registered name or as
``module:name`` (which imports ``module``, registering it, first).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import torch

LossFunction = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
LOSSES: dict[str, LossFunction] = {}


def register_loss(name: str):
    def wrap(fn: LossFunction) -> LossFunction:
        LOSSES[name] = fn
        return fn

    return wrap


def loss_function(name: str) -> LossFunction:
    """The loss registered as ``name`` (or ``module:name``)."""
    module, sep, key = name.rpartition(":")
    if sep:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ValueError(f"loss={name}: cannot import {module}: {err}") from None
    else:
        key = name
    if key not in LOSSES:
        raise ValueError(
            f"loss={name} is not registered (registered: {', '.join(sorted(LOSSES))}; a "
            "plug-in is named module:name)"
        )
    return LOSSES[key]


@register_loss("area_weighted_mse")
def area_weighted_mse(
    pred: torch.Tensor, target: torch.Tensor, area: torch.Tensor, scale: torch.Tensor
) -> torch.Tensor:
    """Per-variable MSE of ``(pred - target) / scale`` weighted by ``area``: ``(V,)``.

    pred, target ``(B, V, S, S)``; area ``(B, S, S)`` with mean 1; scale ``(1, V, 1, 1)``.
    """
    err = ((pred - target) / scale) ** 2 * area[:, None]  # (B, V, S, S)
    return err.mean(dim=(0, 2, 3))
