# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The corrector protocol: what the rollout applies to the state after every step.

A corrector is built by name (:func:`screamcast.rollout.nudging.build_corrector`) from the
``nudging`` section of the inference config and what the rollout has checked for it (a
:class:`CorrectorContext`: the reference store on the model's grid and calendar, the variables
to correct, the model's step and grid). A new method is one module with a registered factory.
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

    # Optional, for several ranks: ``restrict(rank, blocks, tile, exchange) -> Corrector``,
    # this corrector on one rank's block (its ``apply`` then takes ``(C, F, h, w)``). A
    # corrector without it is refused on several ranks before anything is written
    # (rollout/driver.py); Relaxation has it.
