# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The anomaly correlation on fields with known answers."""

import numpy as np
import pytest

from screamcast.evaluation.anomaly_correlation import AnomalyCorrelation
from screamcast.grid import PhysicsGrid

G = PhysicsGrid(8, 2)  # n = 16


def test_anomaly_correlation_known_answers():
    rng = np.random.default_rng(0)
    clim = rng.normal(size=(2, 6, 16, 16))
    anom = rng.normal(size=(2, 6, 16, 16))
    acc = AnomalyCorrelation(clim, G.area, ["a", "b"], 3)
    acc.score(0, clim + anom, clim + anom)  # the initial condition: persistence = truth
    acc.score(1, clim + anom, clim + anom)  # a perfect forecast
    acc.score(2, clim - 2 * anom, clim + anom)  # anomalies reversed (and scaled: no effect)
    np.testing.assert_allclose(acc.acc[:, :3], [[1, 1, -1], [1, 1, -1]], atol=1e-12)
    np.testing.assert_allclose(acc.persistence_acc[:, 2], 1.0, atol=1e-12)
    w = G.area / G.area.sum()
    want = np.sqrt((anom[0] ** 2 * w).sum())
    assert acc.climatology_rmse[0, 1] == pytest.approx(want, rel=1e-12)
    # uncorrelated anomalies: ACC near 0 (6 x 16 x 16 points)
    acc.score(2, clim + rng.normal(size=anom.shape), clim + anom)
    assert np.abs(acc.acc[:, 2]).max() < 0.1


def weighted_correlation(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    """Independent of the aggregator: sum(w a b) / sqrt(sum(w a^2) sum(w b^2)), one variable."""
    a, b, w = a.ravel(), b.ravel(), np.broadcast_to(w, a.shape).ravel()
    return float(np.dot(w * a, b) / np.sqrt(np.dot(w * a, a) * np.dot(w * b, b)))


def test_persistence_acc_keeps_the_initial_state_at_later_leads():
    """The truth decorrelates from its initial state: persistence's ACC at k >= 1 is the
    correlation of the initial anomaly with step k's, below 1 (issue 42: a persistence state
    reset every step scored 1 everywhere and went unseen)."""
    rng = np.random.default_rng(1)
    clim = rng.normal(size=(1, 6, 16, 16))
    anoms = [rng.normal(size=(1, 6, 16, 16))]
    for _ in range(3):  # AR(1): correlation 0.7 per step with the step before
        anoms.append(0.7 * anoms[-1] + np.sqrt(1 - 0.49) * rng.normal(size=anoms[0].shape))
    acc = AnomalyCorrelation(clim, G.area, ["a"], 4)
    for k, anom in enumerate(anoms):
        acc.score(k, clim + anom, clim + anom)
    w = G.area / G.area.sum()
    for k in range(1, 4):
        want = weighted_correlation(anoms[0][0], anoms[k][0], w)
        assert acc.persistence_acc[0, k] == pytest.approx(want, rel=1e-10)
        assert want < 0.9 and abs(want - 0.7**k) < 0.1, (k, want)
