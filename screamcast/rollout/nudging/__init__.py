# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Nudging as correctors registered by name (the ``nudging.method`` config key).

``relaxation`` (:mod:`.relaxation`) is the built-in method. A new one is one module whose
factory is registered with :func:`register_corrector`; ``nudging.method`` names it, either
by its registered name or as ``module:name``, which imports ``module`` (registering it) first.
"""

from screamcast.rollout.nudging import relaxation  # noqa: F401  (registers "relaxation")
from screamcast.rollout.nudging.corrector import Corrector, CorrectorContext
from screamcast.rollout.nudging.errors import NudgingError
from screamcast.rollout.nudging.reference import open_reference
from screamcast.rollout.nudging.registry import (
    CORRECTORS,
    build_corrector,
    corrector_factory,
    register_corrector,
)

__all__ = [
    "CORRECTORS",
    "Corrector",
    "CorrectorContext",
    "NudgingError",
    "build_corrector",
    "corrector_factory",
    "open_reference",
    "register_corrector",
]
