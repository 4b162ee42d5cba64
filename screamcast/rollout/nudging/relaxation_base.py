# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What the relaxation (:mod:`.relaxation`) does with any kind of reference: its settings,
the reference over time, ``alpha``, the misfit's reading. Each kind of reference is its own
class, registered as it is defined: a cube reference's (:mod:`.relaxation_cube`) and a
lat-lon one's (:mod:`.relaxation_latlon`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from screamcast.config.choices import INCREMENTS, PARTIAL, TIME_INTERPOLATIONS
from screamcast.data.calendar import seconds
from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.nudging.corrector import CorrectorContext
from screamcast.rollout.nudging.errors import NudgingConfigError, NudgingError
from screamcast.rollout.nudging.reference import ReferenceSeries


@dataclass(frozen=True)
class RelaxationConfig:
    """The relaxation's settings: the ``nudging`` section's keys of the same names (their
    flags ``--nudge-tau-hours``, ``--nudge-increment``, ``--nudge-time``), checked here only."""

    tau_hours: float = 6.0  # the relaxation time scale
    increment: str = "bicubic"  # a coarse cube reference's increment on the model's cells
    time: str = "cubic"  # the reference between its samples: cubic or linear
    partial_reference: str = "nudge"  # a regional reference: nudge inside it, or refuse

    def __post_init__(self):
        if isinstance(self.tau_hours, bool) or not self.tau_hours > 0:
            raise NudgingConfigError(
                f"{{nudging.tau_hours}} must be positive, got {self.tau_hours}",
                "nudging.tau_hours",
            )
        for key, choices in (
            ("increment", INCREMENTS),
            ("time", TIME_INTERPOLATIONS),
            ("partial_reference", PARTIAL),
        ):
            if getattr(self, key) not in choices:
                raise NudgingConfigError(
                    f"{{nudging.{key}}} must be one of {', '.join(choices)}, got "
                    f"{getattr(self, key)!r}",
                    f"nudging.{key}",
                )


class Relaxation:
    """The relaxation toward ``reference``: ``Relaxation(reference, ...)`` is the subclass that
    takes its kind (a lat-lon reference: :class:`~.relaxation_latlon.LatLonRelaxation`; a
    cube one: :class:`~.relaxation_cube.CubeRelaxation`; each registers itself with
    ``takes=``), so callers need not know which."""

    resume_attrs = (
        "nudge_vars",
        "nudge_tau_hours",
        "nudge_projection",
        "nudge_time",
        "nudge_coverage",
    )

    kinds: list[tuple] = []  # (takes(reference) -> bool, subclass), as each is defined

    def __init_subclass__(cls, takes=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if takes is not None:
            Relaxation.kinds.append((takes, cls))

    def __new__(cls, reference: xr.Dataset | None = None, *args, **kwargs):
        if cls is Relaxation:  # (copy.copy calls it with no reference, on a subclass)
            cls = next(kind for takes, kind in Relaxation.kinds if takes(reference))
        return super().__new__(cls)

    def __init__(
        self,
        reference: xr.Dataset,
        variables: list[str],
        state_vars: list[str],
        tau_hours: float,
        dt,  # the model's step: datetime.timedelta (cftime) or np.timedelta64
        grid: PhysicsGrid,
        name: str = "reference",
        partial: str = "nudge",
        increment: str = "bicubic",
        time_interpolation: str = "cubic",
    ):
        RelaxationConfig(tau_hours, increment, time_interpolation, partial)  # checked
        for v in variables:
            if v not in state_vars:
                raise NudgingError(
                    f"nudge_vars: '{v}' is not a prognostic variable of the checkpoint "
                    f"({', '.join(state_vars)})"
                )
            if v not in reference:
                raise NudgingError(f"{name} has no variable '{v}' to nudge toward")
        self.project(reference, grid, name, partial, increment)
        self.series = ReferenceSeries(reference, variables, name, time_interpolation)
        self.index = [state_vars.index(v) for v in variables]
        self.variables, self.tau_hours = list(variables), tau_hours
        self.alpha = 1.0 - math.exp(-seconds(dt) / (tau_hours * 3600.0))
        # the part of the cube apply() is given (faces, rows, cols): all, or one rank's block
        self.region: tuple[slice, ...] = (slice(None),) * 3

    def project(self, reference, grid: PhysicsGrid, name: str, partial: str, increment: str):
        """Build the projection ``P`` onto what ``reference`` resolves (the subclass's)."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, settings: RelaxationConfig, context: CorrectorContext) -> Relaxation:
        """From its settings and what the rollout checked for it."""
        return cls(
            context.reference,
            context.variables,
            context.state_vars,
            settings.tau_hours,
            context.dt,
            context.grid,
            name=context.name,
            partial=settings.partial_reference,
            increment=settings.increment,
            time_interpolation=settings.time,
        )

    def restricted(self, block, tile: int) -> Relaxation:
        """A copy of this corrector on ``block``'s region (the subclass restricts the rest);
        the whole globe's read-ahead is closed (each rank reads its part)."""
        view = copy.copy(self)
        view.region = block.region(tile)
        self.series.close()
        return view

    def prepare(self, first: object, last: object) -> None:
        self.series.check_covers(first, last)
        self.series.target(first)  # the first values it needs: read and checked now

    def check_covers(self, first: object, last: object) -> None:
        self.series.check_covers(first, last)

    def target(self, time: object) -> np.ndarray:
        return self.series.target(time)

    def close(self) -> None:
        self.series.close()

    def misfit(self, fields: np.ndarray, time: object) -> np.ndarray:
        """``(V,)``: the area-weighted RMSE of the state ``fields (C.., 6, n, n)`` (prognostic
        variables first), seen at the reference's scales (the projection the nudging uses),
        against the reference at ``time``, per nudged variable; NaN outside its times."""
        if not self.series.covers(time):
            return np.full(len(self.index), np.nan)
        # the nudged channels only, in float64: (V, 6, n, n)
        x = torch.as_tensor(np.asarray(fields)[self.index], dtype=torch.float64)
        ref = torch.as_tensor(self.target(time), dtype=torch.float64)
        return torch.stack(self.projected_rmse(x, ref)).numpy()

    def projected_rmse(self, x: torch.Tensor, ref: torch.Tensor) -> list[torch.Tensor]:
        """Per variable, the RMSE of ``x (V, 6, n, n)`` against ``ref`` (the subclass's)."""
        raise NotImplementedError

    def attrs(self) -> dict:
        return {
            "nudge_vars": ",".join(self.variables),
            "nudge_tau_hours": self.tau_hours,
            "nudge_alpha": self.alpha,
            "nudge_projection": self.projection,
            "nudge_time": self.series.time_interpolation,
            "nudge_coverage": 1.0,
            "nudge_reference_calendar": self.series.calendar,
        }
