# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a stage says before it starts, when its settings look like a mistake it would only
find out about after hours."""

from __future__ import annotations

from screamcast.config.training import TrainConfig

DEMO_STEPS = 10_000  # more steps than any demo schedule: a production stage


def demo_store_note(cfg: TrainConfig, ds) -> str | None:
    """One line when a production-length stage is about to train on the analytic demo store
    (data.url's default): a day of training on data made for a 3-minute demo."""
    if "analytic flows" not in ds.attrs.get("title", "") or cfg.steps <= DEMO_STEPS:
        return None
    return (
        f"note: data.url={cfg.data.url} is the analytic demo store, but this stage trains "
        f"{cfg.steps} steps (a production schedule): give it a production store with "
        "data.url=... (docs/training.md), or fewer steps (steps=...) for a try"
    )
