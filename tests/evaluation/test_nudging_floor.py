# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The perfect model's nudged error: zero against its own truth, the closed-form recursion
against a 6-hourly one, above 24 h persistence for a diurnal temperature on a coarse one."""

import math

import numpy as np
import pytest

from screamcast.cli.nudging_floor import main
from screamcast.data.store import open_store
from screamcast.evaluation.metrics import area_weighted_rmse
from screamcast.evaluation.nudging_floor import perfect_model_errors
from screamcast.sources.synthetic import write_store
from tests.conftest import TINY

VARS = ["u", "v", "temperature"]


def test_a_reference_equal_to_the_truth_costs_nothing(tiny_store):
    truth = open_store(tiny_store, variables=VARS)
    errors = perfect_model_errors(truth, truth, VARS, steps=16, start=0)
    for v in VARS:
        assert errors[v]["rmse"].max() < 1e-4 * errors[v]["persistence_rmse"].max(), v


def midpoint(T: np.ndarray, k: int, method: str) -> np.ndarray:
    """The 6-hourly samples (every other 3-hourly time) at the odd time ``k``: the chord, or
    Catmull-Rom's (-1, 9, 9, -1) / 16, the quadratic's (3, 6, -1) / 8 in the end intervals."""
    if method == "linear":
        return 0.5 * (T[k - 1] + T[k + 1])
    if k == 1:
        return (3 * T[0] + 6 * T[2] - T[4]) / 8
    if k == len(T) - 2:
        return (3 * T[k + 1] + 6 * T[k - 1] - T[k - 3]) / 8
    return (9 * (T[k - 1] + T[k + 1]) - T[k - 3] - T[k + 3]) / 16


@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_a_six_hourly_reference_follows_the_relaxation_recursion(tiny_store, tmp_path, method):
    """Reference = the truth every 6 h on the model grid (the projection is the identity), the
    model 3-hourly: the error obeys ``e_k = (1 - a) e_{k-1} + a (r_k - T_k)``, ``r`` the
    reference interpolated in time (:func:`midpoint` at odd k), ``a = 1 - exp(-3/6)``."""
    six = {**TINY, "step_hours": 6.0}
    ref = open_store(write_store(tmp_path / "six.zarr", **six), variables=VARS)
    truth = open_store(tiny_store, variables=VARS)
    errors = perfect_model_errors(truth, ref, VARS, 16, start=0, time_interpolation=method)
    T = np.stack([truth[v].values for v in VARS], 1).astype(np.float64)  # (time, V, 6, n, n)
    a = 1 - math.exp(-0.5)
    e, expected = np.zeros_like(T[0]), [np.zeros(len(VARS))]
    for k in range(1, 17):
        r = T[k] if k % 2 == 0 else midpoint(T, k, method)
        e = (1 - a) * e + a * (r - T[k])
        expected.append(area_weighted_rmse(T[k] + e, T[k], truth["area"].values))
    expected = np.stack(expected)  # (17, V)
    for i, v in enumerate(VARS):
        np.testing.assert_allclose(errors[v]["rmse"], expected[:, i], rtol=1e-5, atol=1e-7)
        assert errors[v]["rmse"][1] > 0, v  # the chord is off the truth between samples


def test_a_coarse_reference_puts_temperature_above_24h_persistence(
    tiny_store, tiny_reference, capsys
):
    """The demo's premise at small scale: the truth's temperature repeats every 24 h, so its
    persistence there is ~0, while a 6-hourly reference costs even a perfect model tenths of a
    kelvin (linear: 0.20 K at +24 h; cubic 0.09) and the winds hundredths of a m/s (linear
    0.04; cubic 0.0003-0.004)."""
    truth = open_store(tiny_store, variables=VARS)
    ref = open_store(tiny_reference, variables=VARS)
    errors = perfect_model_errors(truth, ref, VARS, 16, 0)  # cubic in time
    chord = perfect_model_errors(truth, ref, VARS, 16, 0, time_interpolation="linear")
    t, t_chord = errors["temperature"], chord["temperature"]
    assert t["persistence_rmse"][8] < 0.01 < 0.05 < t["rmse"][8] < 0.5 * t_chord["rmse"][8]
    for v in ("u", "v"):  # lead 8 = +24 h, 16 = +48 h
        assert errors[v]["rmse"][16] < 0.1 * chord[v]["rmse"][16]
        assert chord[v]["rmse"][16] < 0.01 * chord[v]["persistence_rmse"][16]
    main(["--data", str(tiny_store), "--reference", str(tiny_reference), "--steps", "16"])
    out = capsys.readouterr().out
    assert "perfect model" in out and "temperature" in out
    with pytest.raises(ValueError, match="17 steps from time index 0 do not fit"):
        perfect_model_errors(truth, truth, VARS, 17, start=0)


def test_negative_start_counts_from_the_end(tiny_store, tiny_reference, capsys):
    """``--start -49`` is what a user tries for "the last 48 steps": the same as the default,
    and an index out of range is a message, not a traceback."""
    truth = open_store(tiny_store, variables=VARS)
    ref = open_store(tiny_reference, variables=VARS)
    steps = 4
    last = perfect_model_errors(truth, ref, VARS, steps)
    from_end = perfect_model_errors(truth, ref, VARS, steps, start=-(steps + 1))
    for v in VARS:
        np.testing.assert_array_equal(last[v]["rmse"], from_end[v]["rmse"])
    T = truth.sizes["time"]
    rc = main(
        [
            "--data",
            str(tiny_store),
            "--reference",
            str(tiny_reference),
            "--steps",
            "4",
            "--start",
            str(-T - 1),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and f"--start {-T - 1} with --steps 4" in err and f"-{T} to -1" in err


def test_nonsense_arguments_are_one_line_and_exit_2(tiny_store, capsys):
    """``--steps -5`` raised an IndexError's traceback (issue 42)."""

    base = ["--data", str(tiny_store), "--reference", str(tiny_store)]
    cases = [
        (["--steps", "-5"], "--steps must be >= 1, got -5"),
        (["--steps", "0"], "--steps must be >= 1, got 0"),
        (["--nudge-tau-hours", "0"], "--nudge-tau-hours must be positive"),
        (["--leads", "1,x"], "--leads: comma-separated steps"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit) as stop:
            main(base + extra)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and "Traceback" not in err


def test_a_truth_with_nan_or_no_times_is_one_line(holed_stores, tiny_reference, capsys):
    """A NaN in the truth made every score NaN without a word; a store with no times, and
    the default range on a store too short for it, are refused naming what fits."""
    nan, empty = holed_stores
    base = ["--reference", str(tiny_reference), "--steps", "4"]
    assert main(["--data", str(nan), *base, "--start", "0"]) == 2
    err = capsys.readouterr().err
    assert "nan.zarr at 2020-01-01 03:00:00: variable 'u' has 1536 non-finite values" in err
    assert "choose a --start and --steps where the truth is finite" in err
    assert main(["--data", str(nan), *base]) == 0  # the last 5 times are finite
    assert "nan" not in capsys.readouterr().out.split("at steps")[1]
    assert main(["--data", str(empty), *base]) == 2
    assert "has no 'time' values" in capsys.readouterr().err
    assert main(["--data", str(nan), "--reference", str(tiny_reference), "--steps", "17"]) == 2
    err = capsys.readouterr().err  # 17 times: 16 steps at most
    assert err.startswith("error: --steps 17: 17 steps from time index -1 do not fit")
    assert "16 steps at most" in err
    assert "--start None" not in err


def test_the_default_variables_are_the_stores_winds_and_temperature(
    tiny_store, tiny_reference, capsys
):
    """As the rollout's default: u, v, temperature of the demo-like store, not its tracer or
    vorticity (the old default list was spelt for this store only)."""
    argv = ["--data", str(tiny_store), "--reference", str(tiny_reference), "--steps", "2"]
    assert main([*argv, "--leads", "1,2"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert sorted(rows) == ["temperature", "u", "v"]  # in the store's order
