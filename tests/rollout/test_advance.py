# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's one loop: each step from ``times[k]`` to ``times[k + 1]``, the guard on every
output with its step number and time, ``emit`` after the guard, the next state the step's."""

import numpy as np
import pytest
import torch

from screamcast.config.inference import GuardSection
from screamcast.model.state import State
from screamcast.rollout.advance import GuardStop, advance
from screamcast.rollout.guard import Guard
from screamcast.step.step import Step


def recording_step(calls: list):
    """A step that adds its lead in hours (t1 - t0) to the state and a diagnostic channel."""

    def predict(x, t0, t1):  # t0, t1 (1,): the state's time and the next
        calls.append((t0[0], t1[0]))
        hours = float((t1[0] - t0[0]) / np.timedelta64(1, "h"))
        y = x + hours  # (1, 1, 2, 2)
        return torch.cat([y, 2 * y], dim=1)  # (1, 2, 2, 2): prognostic, diagnostic

    return Step(predict, n_prognostic=1)


def guard(limit: float) -> Guard:
    """Trips once any value passes ``limit`` (the range [0, limit], no margin)."""
    config = GuardSection(mean_sigmas=1e9, spread_factor=1e9, extreme_margin=0.0)
    area = torch.ones(2, 2)
    return Guard(["x", "d"], [0, 0], [1, 1], area, config, lo=[0, 0], hi=[limit, 2 * limit])


def test_each_step_spans_its_times_and_the_state_is_handed_on():
    hours = [0, 6, 18, 24]  # uneven: a step given the wrong pair of times is seen
    times = np.array(hours, dtype="timedelta64[h]") + np.datetime64("2000-01-01T00", "h")
    calls, emitted = [], []
    emit = lambda k, y: emitted.append((k, y.clone()))  # noqa: E731
    start = State.one(torch.zeros(1, 2, 2), times[0])
    last = advance(recording_step(calls), guard(100.0), start, times, range(3), emit)
    assert calls == [(times[k], times[k + 1]) for k in range(3)]  # 6 h, 12 h, 6 h
    assert [k for k, _ in emitted] == [1, 2, 3]
    assert [float(y[0, 0, 0]) for _, y in emitted] == [6.0, 18.0, 24.0]  # the state carried
    assert [float(y[1, 0, 0]) for _, y in emitted] == [12.0, 36.0, 48.0]  # its diagnostic
    assert float(last.fields[0, 0, 0, 0]) == 24.0 and last.fields.shape == (1, 1, 2, 2)
    assert last.time.tolist() == [times[3]]  # the state carries its time


def test_a_state_at_another_time_than_the_loop_starts_from_is_refused():
    """The loop's first time must be the state's: a state handed on with the wrong time
    would get another time's forcing."""
    times = np.arange(0, 30, 6).astype("datetime64[h]")
    early = State.one(torch.zeros(1, 2, 2), times[1])  # the loop starts at times[2]
    with pytest.raises(ValueError, match="the state stands at"):
        advance(recording_step([]), guard(100.0), early, times, range(2, 4), lambda k, y: None)


def test_a_resumed_loop_starts_at_its_step_and_the_guard_stops_before_emit():
    times = np.arange(0, 30, 6).astype("datetime64[h]")  # 0, 6, ..., 24 h
    calls, emitted = [], []
    x = State.one(torch.full((1, 2, 2), 12.0), times[2])  # as a resume reads it
    emit = lambda k, y: emitted.append(k)  # noqa: E731
    with pytest.raises(GuardStop) as stop:
        advance(recording_step(calls), guard(20.0), x, times, range(2, 4), emit)
    assert calls == [(times[2], times[3]), (times[3], times[4])]
    # step 3 (18, inside [0, 20]) emitted; step 4 (24) tripped and was not
    assert emitted == [3]
    assert stop.value.trip.step == 4 and stop.value.trip.channel == "x"
