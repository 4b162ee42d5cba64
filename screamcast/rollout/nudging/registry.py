# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The registry of nudging methods: name -> ``factory(settings, context) -> Corrector``."""

from __future__ import annotations

from collections.abc import Callable

from screamcast.registry import Registry
from screamcast.rollout.nudging.corrector import Corrector, CorrectorContext
from screamcast.rollout.nudging.errors import NudgingError

CORRECTORS = Registry("nudging method", NudgingError)
register_corrector = CORRECTORS.register


def corrector_factory(method: str) -> Callable:
    """The factory registered as ``method`` (``name``, or ``module:name``)."""
    return CORRECTORS[method]


def build_corrector(settings, context: CorrectorContext) -> Corrector:
    """The corrector of the ``nudging`` config section ``settings``."""
    return corrector_factory(settings.method)(settings, context)
