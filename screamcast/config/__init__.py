# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Structured configs: training (Hydra's ConfigStore, :mod:`.training`) and inference (a
strict YAML dataclass tree, :mod:`.inference`). A misspelt key fails loudly in both.

The training names are loaded on first use, so that modules which only need the choices
(:mod:`.choices`) or the inference tree do not import Hydra.
"""

_TRAINING = (
    "DataConfig",
    "ModelConfig",
    "OptimConfig",
    "PipelineConfig",
    "SchedulerConfig",
    "TrainConfig",
    "check_schema",
    "register",
)


def __getattr__(name: str):
    if name in _TRAINING:
        from screamcast.config import training

        return getattr(training, name)
    raise AttributeError(f"module 'screamcast.config' has no attribute {name!r}")


__all__ = list(_TRAINING)
