# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's one loop, for one rank or many: step, guard, hand the fields on.

What differs by rank count is only what ``emit`` does with a step's fields (write this rank's
part and, on several ranks, commit each step once every rank's is on disk; the scores get the
globe on rank 0) and the reduction the step's correctors and the guard sum through.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from screamcast.model.state import State
from screamcast.rollout.guard import Guard, Trip
from screamcast.step.step import Step


class GuardStop(Exception):
    """The guard stopped the run at ``trip`` (the caller records it and says so)."""

    def __init__(self, trip: Trip):
        super().__init__(trip.message("the output"))
        self.trip = trip


def advance(
    step: Step,
    guard: Guard,
    state: State,
    times: np.ndarray,
    steps: range,
    emit: Callable[[int, torch.Tensor], None],
) -> State:
    """From ``state`` (one state, at ``times[steps.start]``), each ``k`` of ``steps``: the
    step to ``times[k + 1]``, the guard, then ``emit(k + 1, fields (C + D, *space))``.
    Returns the last state; raises :class:`GuardStop` at the first step the guard refuses."""
    state.check_at(times[steps.start])
    for k in steps:
        out = step(state, np.asarray([times[k + 1]]))
        y = out.fields()[0]  # (C + D, *space)
        trip = guard.check(y, k + 1, times[k + 1])
        if trip is not None:
            raise GuardStop(trip)
        state = out.state()
        emit(k + 1, y)
    return state
