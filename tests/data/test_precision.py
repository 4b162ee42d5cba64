# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The float16 error budget on the fields that broke it (issue 42): surface pressure over
topography, humidity with E3SM's tiny negatives, a non-positive flux, precipitation."""

import numpy as np
import pytest

from screamcast.data import packing, precision

RNG = np.random.default_rng(0)


def stored(x: np.ndarray, name: str) -> tuple[np.ndarray, list[precision.Budget], list[dict]]:
    """``x (t, 1, points)`` as a float16 stack gives it back, its budget and the report."""
    offsets, scales = packing.choose(x, axis=1)
    codec = packing.codec(offsets, scales, axis=1)
    back = packing.round_trip(codec, x, slice(0, 1))
    budgets = precision.budgets([name], x, axis=1)
    return back, budgets, precision.worst(x, back, budgets, axis=1)


def field(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32).reshape(1, 1, -1)  # (t, C, points)


def test_surface_pressure_over_topography_is_over_its_1_pa_budget():
    ps = RNG.uniform(98e3, 104e3, 10_000)
    ps[:1000] = RNG.uniform(50e3, 60e3, 1000)  # 10% of points on mountains
    back, budgets, report = stored(field(ps), "PS")
    err = np.abs(back - field(ps)).max()
    assert 5 < err < 20  # Pa: what float16 about the mean loses (11.3 Pa measured in the issue)
    assert report[0]["error"] == pytest.approx(err) and report[0]["used"] > 5
    assert precision.over(report, ["PS"], budgets) == [f"PS: max(|error|) {err:.3g}, budget 1"]
    flat = field(RNG.uniform(98e3, 104e3, 10_000))
    assert stored(flat, "PS")[2][0]["used"] < 1


def test_humidity_with_tiny_negatives_keeps_its_relative_precision():
    q = 10 ** RNG.uniform(-7, -5, 10_000)
    q[:50] = -1e-12  # as E3SM writes them
    x = field(q)
    offsets, _ = packing.choose(x, axis=1)
    assert offsets == [0.0]  # about zero, not the mean
    back, budgets, report = stored(x, "Q")
    big = x >= 2e-7
    rel = np.abs(back[big] - x[big]) / x[big]
    assert rel.max() <= 2.0**-11 * 1.001  # was 0.94% about the mean
    assert (back[x < 0] < 0).all()  # the sign kept
    assert report[0]["used"] <= 1


def test_a_non_positive_flux_keeps_its_exact_zeros():
    flux = -RNG.uniform(0, 400, 10_000)
    flux[RNG.random(10_000) < 0.7] = 0.0
    x = field(flux)
    back, budgets, report = stored(x, "FLDS_DOWN")
    assert budgets[0].zeros and packing.choose(x, axis=1)[0] == [0.0]
    assert (back[x == 0] == 0).all() and (back[x != 0] != 0).all()
    assert report[0]["used"] <= 1


def test_changed_zeros_are_over_any_budget():
    x = field(np.r_[np.zeros(100), -RNG.uniform(100, 400, 100)])
    budgets = precision.budgets(["FLDS_DOWN"], x, axis=1)
    back = x.copy()
    back[0, 0, 0] = 1e-9  # one zero no longer zero
    report = precision.worst(x, back, budgets, axis=1)
    assert report[0]["used"] == np.inf
    assert "exact zeros changed" in precision.over(report, ["FLDS_DOWN"], budgets)[0]


def test_precipitation_is_relative_down_to_a_millionth_of_its_peak():
    pr = 10 ** RNG.uniform(-12, -3, 10_000)
    pr[0] = 1e-3
    x = field(pr)
    back, budgets, report = stored(x, "PRECT")
    assert report[0]["used"] <= 1
    above = x >= precision.FLOOR * 1e-3
    rel = np.abs(back[above] - x[above]) / x[above]
    assert rel.max() <= 2.0**-10
    below = ~above  # absolute there: 2**-10 of the floor
    assert np.abs(back[below] - x[below]).max() <= 2.0**-10 * precision.FLOOR * 1e-3
    loose = x.copy()  # the relative rule refuses a 1% error above the floor
    loose[above] *= 1.01
    assert precision.worst(x, loose, budgets, axis=1)[0]["used"] > 5


def test_a_mean_packed_field_gets_a_share_of_its_spread():
    b = precision.budget_of("OMEGA", np.array([-1.0, 0.5, 2.0]))
    assert b.relative == 0 and b.absolute == pytest.approx(2.0**-10 * (2.0 - 0.5))
    assert precision.budget_of("T", np.array([200.0, 300.0])).absolute == 0.1


def test_the_sign_definite_floor_is_a_millionth_of_the_peak():
    """The absolute part of a sign-definite budget: 2**-10 x 1e-6 x the peak, not looser."""
    b = precision.budget_of("PRECT", np.array([0.0, 1e-7, 1e-3]))
    assert b.absolute == pytest.approx(2.0**-10 * 1e-6 * 1e-3, rel=1e-12)
    assert b.relative == 2.0**-10 and b.zeros
