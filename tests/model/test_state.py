# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A model state with its time: a loop that believes a batch stands at a time refuses it
when any of its states stands elsewhere, and a network of two input times is handed the
state's fields first, the fields one step earlier after them."""

import numpy as np
import pytest
import torch

from screamcast.model.state import State
from screamcast.step.step import Step

T = np.array(["2020-01-01T00", "2020-01-01T06", "2020-01-01T12"], dtype="datetime64[h]")


def test_a_batch_with_one_state_at_another_time_is_refused():
    """Three states at 06 h pass ``check_at(06 h)``; with the last at 12 h the batch is
    refused, naming the times it stands at; a batch of one at another time too."""
    fields = torch.zeros(3, 2, 4, 4)
    State(fields, T[[1, 1, 1]]).check_at(T[1])
    with pytest.raises(ValueError, match=r"the state stands at .*, not at 2020-01-01T06"):
        State(fields, T[[1, 1, 2]]).check_at(T[1])
    with pytest.raises(ValueError, match="not at"):
        State(fields, T[[0, 1, 1]]).check_at(T[1])
    with pytest.raises(ValueError, match="not at"):
        State.one(fields[0], T[2]).check_at(T[1])


def test_two_input_times_are_the_fields_then_the_previous_ones():
    """``inputs()``: channels 0..C-1 the state's fields, C..2C-1 the previous ones (the order
    the pipeline reads, ``x_t - x_{t-dt}`` its change); a step whose prediction is the fields
    plus the last step's change extrapolates forward, 3 -> 5 from 1 (never back to 1)."""
    fields, previous = torch.full((1, 2, 3), 3.0), torch.full((1, 2, 3), 1.0)
    fields[0, 1], previous[0, 1] = 7.0, 2.0
    state = State(fields, T[:1], previous)
    inputs = state.inputs()
    assert inputs.shape == (1, 4, 3)
    torch.testing.assert_close(inputs[:, :2], fields)
    torch.testing.assert_close(inputs[:, 2:], previous)
    assert State(fields, T[:1]).inputs() is fields

    def extrapolate(x, t0, t1):  # x_t + (x_t - x_{t-dt})
        return 2 * x[:, :2] - x[:, 2:]

    out = Step(extrapolate, 2)(state, T[1:2])
    assert out.prognostic[0, :, 0].tolist() == [5.0, 12.0]
    torch.testing.assert_close(out.state().previous, fields)
