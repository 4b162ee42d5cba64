# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step that owns its adjustments: the prediction, the step's correctors, at
inference the nudging and the declared bounds, returned as a typed output.

Training unrolls it (:mod:`screamcast.train.global_unroll`) and the rollout takes it on any
number of ranks (:mod:`screamcast.rollout.run`): what the correctors do to a prediction is
what the network was trained to expect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from screamcast.model import constraints
from screamcast.model.state import State
from screamcast.step.correctors import StepCorrector, apply_correctors

# ``(x (B, C, *space), t0 (B,), t1 (B,)) -> (B, C + D, *space)``: the tiles' prediction
# reassembled, each state from its own time to its next
Predict = Callable[[torch.Tensor, np.ndarray, np.ndarray], torch.Tensor]


@dataclass
class StepOutput:
    """A step's result on this rank's part of the globe."""

    prognostic: torch.Tensor  # (B, C, *space): the next state's fields
    diagnostic: torch.Tensor  # (B, D, *space)
    time: np.ndarray  # (B,): the model time the step reached
    corrections: dict[str, torch.Tensor] = field(default_factory=dict)  # {what: (B,)}
    previous: torch.Tensor | None = None  # (B, C, *space): the step's input (two input times)

    def state(self) -> State:
        """The next state: the prognostic fields at the step's time (and, for a network of
        two input times, the fields it stepped from)."""
        return State(self.prognostic, self.time, self.previous)

    def fields(self) -> torch.Tensor:
        """``(B, C + D, *space)``: what the output stores."""
        if not self.diagnostic.shape[1]:
            return self.prognostic
        return torch.cat([self.prognostic, self.diagnostic], dim=1)


class Step:
    """``predict``, then ``correctors`` (training and inference alike), then at inference
    the ``nudging`` corrector (in place on each state) and the declared bounds
    (:mod:`screamcast.model.constraints`: precipitation at zero, clipped after the nudging
    too)."""

    def __init__(
        self,
        predict: Predict,
        n_prognostic: int,
        correctors: list[StepCorrector] = (),
        bounded: list = (),
        nudging=None,
    ):
        self.predict, self.C = predict, n_prognostic
        self.correctors, self.bounded, self.nudging = list(correctors), list(bounded), nudging

    def __call__(self, state: State, t1: np.ndarray) -> StepOutput:
        """``state`` (fields ``(B, C, *space)`` at its times) -> the step's output at the
        model times ``t1 (B,)``."""
        x, t1 = state.fields, np.asarray(t1)
        y = self.predict(state.inputs(), state.time, t1)  # (B, C + D, *space)
        y, done = apply_correctors(self.correctors, x, y)
        if self.nudging is not None:  # inference: one state at a time, in place
            y = y.clone()
            for b in range(len(y)):
                self.nudging.apply(y[b, : self.C], t1[b])
        if self.bounded:
            y = constraints.clamp_(y.clone() if y.requires_grad else y, self.bounded)
        previous = None if state.previous is None else x
        return StepOutput(y[:, : self.C], y[:, self.C :], t1, done, previous)
