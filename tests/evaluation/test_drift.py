# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Drift: the rollout's and the truth's global means, each against an independent area mean
(issue 42: swapping the two went unseen)."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.drift import GlobalMeanDrift
from screamcast.grid import PhysicsGrid

G = PhysicsGrid(8, 2)  # n = 16


def test_both_global_means_are_the_area_means_of_their_own_fields():
    rng = np.random.default_rng(0)
    times = pd.date_range("2020-01-01", periods=3, freq="6h").values
    truth_values = 280 + rng.normal(size=(3, 6, 16, 16))  # (t, F, a, b)
    truth = xr.Dataset({"T": (("time", "face", "y", "x"), truth_values)}, coords={"time": times})
    drift = GlobalMeanDrift(TruthSource(truth, ["T"], times), G.area)
    rollout = truth_values + 2.0 + rng.normal(size=truth_values.shape)  # warmer: +2 K
    for k in range(3):
        drift.record(k, times[k], rollout[k][None])  # (V, F, a, b)
    out = drift.summary()["T"]
    area = G.area.ravel()
    for k in range(3):
        assert out["global_mean"][k] == pytest.approx(np.average(rollout[k].ravel(), weights=area))
        want = np.average(truth_values[k].ravel(), weights=area)
        assert out["truth_global_mean"][k] == pytest.approx(want, rel=1e-12)
        assert 1.5 < out["global_mean"][k] - out["truth_global_mean"][k] < 2.5
