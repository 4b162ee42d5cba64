# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The corrector protocol: what the rollout applies to the state after every step.

A corrector is built by name (:func:`screamcast.rollout.nudging.build_corrector`) from its
typed settings (its registered dataclass, filled from the ``nudging`` section) and what the
rollout has checked for it (a :class:`CorrectorContext`: the reference store on the model's
grid and calendar, the variables to correct, the model's step and grid). A new method is one
module with a registered factory and settings dataclass; a built corrector lacking a member
of :class:`Corrector` is refused, naming it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import xarray as xr

from screamcast.grid.physics import PhysicsGrid


@dataclass(frozen=True)
class CorrectorContext:
    reference: xr.Dataset  # matched to the model's levels, units and calendar
    name: str  # the reference's URL, for messages
    variables: list[str]  # the prognostic variables (channels) to correct
    state_vars: list[str]  # every prognostic channel, in the state's order
    dt: datetime.timedelta | np.timedelta64  # the model's step
    grid: PhysicsGrid  # the model's


class Corrector(Protocol):
    variables: list[str]
    # the attrs (of :meth:`attrs`) that a resumed output must have been made with
    resume_attrs: tuple[str, ...]

    def prepare(self, first: object, last: object) -> None:
        """Check that it can correct every time from ``first`` to ``last`` and read what the
        first step needs, before any step runs (a bad reference fails in seconds)."""

    def apply(self, x: torch.Tensor, time: object) -> torch.Tensor:
        """Correct the prognostic state ``x (C, 6, n, n)`` at ``time``, in place."""

    def misfit(self, fields: np.ndarray, time: object) -> np.ndarray:
        """``(V,)``: how far ``fields (C.., 6, n, n)`` sit from the target, per variable."""

    def attrs(self) -> dict:
        """What the output records of it."""

    def close(self) -> None:
        """Release what it holds (background readers)."""

    def restrict(self, rank: int, blocks: list, tile: int, exchange) -> Corrector:
        """This corrector on rank ``rank``'s block of a rollout on several ranks (``blocks``:
        every rank's, :func:`screamcast.rollout.domain.blocks`; its ``apply`` then takes
        ``(C, F, h, w)``; ``exchange`` swaps and sums tensors between ranks). A method that
        runs on one rank only raises :class:`NudgingError` here, which every rank does before
        anything is written (rollout/driver.py)."""
