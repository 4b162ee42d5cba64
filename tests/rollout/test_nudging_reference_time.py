# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The reference's time weights: exact for quadratics (cubic) or lines (linear), weights that
sum to one, the sample itself at a sample time, and a diurnal cycle's chord error cut."""

import numpy as np
import pytest

from screamcast.rollout.nudging.reference_time import time_weights


def interpolate(samples, values, t, method):
    return sum(w * values[j] for j, w in time_weights(samples, t, method))


def test_cubic_is_exact_for_quadratics_linear_for_lines():
    samples = np.arange(7) * 6.0  # every 6 h, in hours (any unit)
    quad = 3.0 + 2.0 * samples - 0.1 * samples**2
    line = 3.0 + 2.0 * samples
    for t in np.linspace(0, 36, 73):  # the end intervals (quadratic) and the inner ones
        f = 3.0 + 2.0 * t - 0.1 * t**2
        assert interpolate(samples, quad, t, "cubic") == pytest.approx(f, abs=1e-12)
        assert interpolate(samples, line, t, "linear") == pytest.approx(3 + 2 * t, abs=1e-12)
        assert sum(w for _, w in time_weights(samples, t)) == pytest.approx(1.0, abs=1e-14)
    assert abs(interpolate(samples, quad, 3.0, "linear") - (3 + 6 - 0.9)) > 0.8  # the chord
    assert time_weights(samples, 12.0) == [(2, 1.0)]
    assert [j for j, _ in time_weights(samples, 14.0)] == [1, 2, 3, 4]
    assert [j for j, _ in time_weights(samples, 2.0)] == [0, 1, 2]
    assert [j for j, _ in time_weights(samples, 35.0)] == [4, 5, 6]


def test_uneven_samples_and_two_samples():
    samples = np.array([0.0, 6.0, 9.0, 15.0, 27.0])  # uneven: still exact for a line
    for t in (1.0, 7.0, 10.0, 20.0):
        assert interpolate(samples, 1 - 0.5 * samples, t, "cubic") == pytest.approx(1 - 0.5 * t)
    two = np.array([0.0, 6.0])
    assert time_weights(two, 1.5) == [(0, 0.75), (1, 0.25)]  # too few samples for a curve
    with pytest.raises(ValueError, match="time interpolation must be one of"):
        time_weights(two, 1.0, "spline")


def test_a_diurnal_cycle_sampled_every_6_hours():
    """A 24 h cycle sampled every 6 h, 3 h either side of its peak: the chord is off by 29% of
    the amplitude there (1 - cos 45 degrees), the cubic by 12%."""
    samples = np.arange(17) * 6.0
    values = np.cos(2 * np.pi * (samples - 3) / 24)
    t = np.linspace(6, 90, 337)  # inner intervals
    truth = np.cos(2 * np.pi * (t - 3) / 24)
    worst = {
        m: np.abs([interpolate(samples, values, x, m) for x in t] - truth).max()
        for m in ("linear", "cubic")
    }
    assert worst["linear"] == pytest.approx(1 - np.cos(np.pi / 4), rel=1e-3)
    assert worst["cubic"] < 0.12
