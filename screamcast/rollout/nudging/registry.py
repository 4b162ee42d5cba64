# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The registry of nudging methods: name -> ``factory(settings, context) -> Corrector``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from screamcast.rollout.nudging.corrector import Corrector, CorrectorContext
from screamcast.rollout.nudging.errors import NudgingError

CORRECTORS: dict[str, Callable] = {}


def register_corrector(name: str):
    """Register ``factory(settings, context) -> Corrector`` under ``name``."""

    def wrap(factory):
        CORRECTORS[name] = factory
        return factory

    return wrap


def corrector_factory(method: str) -> Callable:
    """The factory registered as ``method`` (``name``, or ``module:name``)."""
    module, sep, name = method.rpartition(":")
    if sep:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise NudgingError(
                f"nudging method {method!r}: cannot import {module}: {err}"
            ) from None
    else:
        name = method
    if name not in CORRECTORS:
        raise NudgingError(
            f"nudging method {method!r} is not registered (registered: "
            f"{', '.join(sorted(CORRECTORS))}; a plug-in is named module:name)"
        )
    return CORRECTORS[name]


def build_corrector(settings, context: CorrectorContext) -> Corrector:
    """The corrector of the ``nudging`` config section ``settings``."""
    return corrector_factory(settings.method)(settings, context)
