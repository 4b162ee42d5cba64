# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Learning-rate schedules as multipliers of the base lr (for ``LambdaLR``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from screamcast.config import SchedulerConfig


def dampened_cosine_with_hard_restarts(
    step: int,
    total: int,
    base_lr: float,
    warmup_steps: int = 0,
    cycles: int = 1,
    damping: float = 0.5,
    min_lr: float = 1e-6,
) -> float:
    """The lr at ``step``: linear warmup, then ``cycles`` cosine cycles from a peak to
    ``min_lr``; each restart's peak is ``damping`` times the previous one's.

    With ``cycles=1, warmup_steps=0`` it anneals from ``base_lr`` to ``min_lr`` over ``total``.
    """
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    span = max(total - warmup_steps, 1)
    progress = min((step - warmup_steps) / span, 1.0) * cycles
    cycle = min(int(progress), cycles - 1)
    within = progress - cycle
    peak = max(base_lr * damping**cycle, min_lr)
    return min_lr + (peak - min_lr) * 0.5 * (1 + math.cos(math.pi * within))


def lr_lambda(cfg: SchedulerConfig, base_lr: float, total: int) -> Callable[[int], float]:
    if cfg.name == "constant":  # after a linear warm-up, when one is set
        warmup = cfg.warmup_steps
        return lambda step: min(1.0, (step + 1) / warmup) if warmup > 0 else 1.0
    if cfg.name == "cosine":
        return lambda step: (
            dampened_cosine_with_hard_restarts(
                step, total, base_lr, cfg.warmup_steps, 1, 1.0, cfg.min_lr
            )
            / base_lr
        )
    if cfg.name == "dampened_cosine_with_hard_restarts":
        return lambda step: (
            dampened_cosine_with_hard_restarts(
                step, total, base_lr, cfg.warmup_steps, cfg.cosine_n_cycles, cfg.damping, cfg.min_lr
            )
            / base_lr
        )
    raise ValueError(
        f"scheduler.name={cfg.name!r}: expected constant, cosine or "
        "dampened_cosine_with_hard_restarts"
    )


def build_scheduler(optimizer, cfg: SchedulerConfig, base_lr: float, total: int):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(cfg, base_lr, total))
