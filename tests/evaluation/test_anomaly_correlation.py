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
