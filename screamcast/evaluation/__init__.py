# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Evaluation: aggregators fed a rollout one step at a time, and the report built from them.

Each metric is one aggregator in its own module (:mod:`.rmse`, :mod:`.drift`,
:mod:`.anomaly_correlation`, :mod:`.seams`, :mod:`.power_spectra`, :mod:`.reference_misfit`),
all of the :class:`~screamcast.evaluation.aggregator.Aggregator` shape. The rollout is handed
them (:func:`~screamcast.evaluation.rollout_scores.rollout_scores`) and imports nothing of
this package; :func:`~screamcast.evaluation.evaluate.evaluate` feeds them a written output.
"""

__all__ = ["Aggregator", "TruthSource"]


def __getattr__(name: str):
    """The aggregator's protocol on first use (PEP 562): importing a submodule (the export's
    settings, for a command's --help) does not wait for xarray."""
    if name in __all__:
        from screamcast.evaluation import aggregator

        return getattr(aggregator, name)
    raise AttributeError(f"module 'screamcast.evaluation' has no attribute {name!r}")
