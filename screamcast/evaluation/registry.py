# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Metrics registered by name: the inference config's ``scoring.metrics`` adds them.

A metric is one module with a factory ``factory(truth, grid, area) -> Aggregator`` (a
:class:`~screamcast.evaluation.aggregator.TruthSource`, the rollout's grid, the truth's cell
areas) registered with :func:`register_metric`; the config names it by its registered name or
as ``module:name`` (:class:`screamcast.registry.Registry`).
"""

from __future__ import annotations

from collections.abc import Callable

from screamcast.registry import Registry

METRICS = Registry("scoring.metrics: metric")
register_metric = METRICS.register


def metric_factory(name: str) -> Callable:
    """The factory registered as ``name`` (or ``module:name``)."""
    return METRICS[name]
