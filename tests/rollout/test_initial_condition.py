# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The start a rollout reads: a network of two input times also reads the state one step
before it, which the store must hold (a gap before the start is refused, naming the key)."""

import datetime

import cftime
import numpy as np
import pytest

from screamcast.checkpoint_format import GridSpec, ModelDescription, Variables
from screamcast.config.inference import InitialConditionSection
from screamcast.rollout.errors import RolloutError
from screamcast.rollout.initial_condition import first_time

DT = datetime.timedelta(hours=6)


def description(input_times: int) -> ModelDescription:
    config = {"data": {"input_times": input_times}, "model": {"width": 8, "levels": 1, "blocks": 1}}
    return ModelDescription(
        Variables(("u",), (), ()), GridSpec(16, 8, 2, "ne8pg2"), config, {}, time_step_minutes=360
    )


def test_a_start_whose_time_one_step_before_is_missing_is_refused():
    """Times 00, 06, 18, 24 h, every 6 h but 12 h missing: a start at 18 h (the one before it
    12 h earlier) is refused for two input times, 24 h (18 h before it) is not; one input
    time starts at 18 h."""
    hours = [0, 6, 18, 24]
    times = np.array([cftime.DatetimeNoLeap(2000, 1, 1) + h * DT / 6 for h in hours])
    at = [InitialConditionSection(data="ic.zarr", start=str(t)[:16]) for t in times]
    two, one = description(2), description(1)
    with pytest.raises(RolloutError, match=r"no time one step \(6:00:00\) before the start"):
        first_time(times, DT, at[2], two)
    assert first_time(times, DT, at[3], two) == 3
    assert first_time(times, DT, at[1], two) == 1
    assert first_time(times, DT, at[2], one) == 2
