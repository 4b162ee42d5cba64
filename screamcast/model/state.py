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
    times); ``previous (B, C, *space)``: the fields one step earlier, for a network of two
    input times (None for one)."""

    fields: torch.Tensor
    time: np.ndarray
    previous: torch.Tensor | None = None

    def inputs(self) -> torch.Tensor:
        """What a step's predictor takes: the fields, then (two input times) the previous
        ones as more channels, ``(B, C or 2C, *space)``: the gather and the halo exchange
        move them as any other channels."""
        if self.previous is None:
            return self.fields
        return torch.cat([self.fields, self.previous.to(self.fields.device)], dim=1)

    @classmethod
    def one(cls, fields: torch.Tensor, time, previous: torch.Tensor | None = None) -> State:
        """One state: ``fields (C, *space)`` at the model time ``time`` (``previous (C,
        *space)`` one step earlier) -> a batch of one."""
        earlier = None if previous is None else previous[None]
        return cls(fields[None], np.asarray([time]), earlier)  # datetime64, or cftime objects

    def check_at(self, time) -> None:
        """Refuse a loop that believes this state stands at ``time`` when it does not (its
        forcing would be another time's)."""
        if not (self.time == time).all():
            raise ValueError(f"the state stands at {list(self.time)}, not at {time}")
