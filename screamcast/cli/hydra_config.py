# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The training config composed from the checkout's ``configs/`` with Hydra overrides, for
commands that take the same overrides as training (skill, the demo)."""

from __future__ import annotations

from pathlib import Path

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def compose_train(overrides: list[str]):
    """``configs/train.yaml`` with ``overrides`` (``experiment=demo run_dir=...``)."""
    from hydra import compose, initialize_config_dir

    from screamcast.config import register

    register()
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        return compose("train", overrides=overrides)
