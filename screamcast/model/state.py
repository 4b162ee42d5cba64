# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A model state with its time (NeuralGCM's state and its ``sim_time``): what every step
takes and returns, crops and globes alike, so no loop carries the times beside the fields
and a step cannot be handed a time that is not its state's."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch


class State(NamedTuple):
    """``fields (B, C, *space)``: the prognostic fields of ``B`` states (crops or cubes);
    ``time (B,)``: the model time each stands at (the calendar's datetimes, or the store's
    times)."""

    fields: torch.Tensor
    time: np.ndarray

    @classmethod
    def one(cls, fields: torch.Tensor, time) -> State:
        """One state: ``fields (C, *space)`` at the model time ``time`` -> a batch of one."""
        return cls(fields[None], np.asarray([time]))  # datetime64, or objects (cftime)

    def check_at(self, time) -> None:
        """Refuse a loop that believes this state stands at ``time`` when it does not (its
        forcing would be another time's)."""
        if not (self.time == time).all():
            raise ValueError(f"the state stands at {list(self.time)}, not at {time}")
