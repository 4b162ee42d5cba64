# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Metrics registered by name: the inference config's ``scoring.metrics`` adds them.

A metric is one module with a factory ``factory(truth, grid, area) -> Aggregator`` (a
:class:`~screamcast.evaluation.aggregator.TruthSource`, the rollout's grid, the truth's cell
areas) registered with :func:`register_metric`; the config names it by its registered name or
as ``module:name`` (which imports ``module``, registering it, first).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

METRICS: dict[str, Callable] = {}


def register_metric(name: str):
    def wrap(factory: Callable) -> Callable:
        METRICS[name] = factory
        return factory

    return wrap


def metric_factory(name: str) -> Callable:
    """The factory registered as ``name`` (or ``module:name``)."""
    module, sep, key = name.rpartition(":")
    if sep:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ValueError(f"scoring.metrics: cannot import {module}: {err}") from None
    else:
        key = name
    if key not in METRICS:
        raise ValueError(
            f"scoring.metrics: {name!r} is not registered (registered: "
            f"{', '.join(sorted(METRICS)) or 'none'}; a plug-in is named module:name)"
        )
    return METRICS[key]
