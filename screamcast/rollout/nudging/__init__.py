# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Nudging as correctors registered by name (the ``nudging.method`` config key).

``relaxation`` (:mod:`.relaxation`) is the built-in method. A new one is one module whose
factory is registered with :func:`register_corrector` beside its settings dataclass;
``nudging.method`` names it, either by its registered name or as ``module:name``, which
imports ``module`` (registering it) first, and ``nudging.config`` holds its settings.
"""

from screamcast.rollout.nudging.corrector import Corrector, CorrectorContext
from screamcast.rollout.nudging.errors import NudgingConfigError, NudgingError
from screamcast.rollout.nudging.reference import open_reference
from screamcast.rollout.nudging.registry import (
    CORRECTORS,
    build_corrector,
    corrector_factory,
    method_settings,
    register_corrector,
)
from screamcast.rollout.nudging.relaxation import Relaxation, RelaxationConfig

__all__ = [
    "CORRECTORS",
    "Corrector",
    "CorrectorContext",
    "NudgingConfigError",
    "NudgingError",
    "Relaxation",
    "RelaxationConfig",
    "build_corrector",
    "corrector_factory",
    "method_settings",
    "open_reference",
    "register_corrector",
]
