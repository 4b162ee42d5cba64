# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Relaxation toward a reference: ``x += alpha * P(x_ref(t) - x)``, ``alpha = 1 - exp(-dt/tau)``.

``P`` keeps the scales the reference resolves (:mod:`.projection`): block means over each
coarser cube reference cell with the increment taken back to the model's cells
(:mod:`.increment`), the identity on the model's grid, or group means over the cells sharing a
lat-lon reference point (cells outside a regional reference's domain are not nudged). Between
its samples the reference is interpolated in time (:mod:`.reference`); a rollout past its last
time, a non-finite reference value and units other than the model's are refused.
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
from screamcast.data.store_axes import is_latlon
from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.nudging.block_increment import BlockIncrement
from screamcast.rollout.nudging.corrector import CorrectorContext
from screamcast.rollout.nudging.errors import NudgingConfigError, NudgingError
from screamcast.rollout.nudging.increment import Increment
from screamcast.rollout.nudging.projection import BlockProjection, NearestProjection, block_factor
from screamcast.rollout.nudging.reference import ReferenceSeries
from screamcast.rollout.nudging.registry import register_corrector


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
    resume_attrs = (
        "nudge_vars",
        "nudge_tau_hours",
        "nudge_projection",
        "nudge_time",
        "nudge_coverage",
    )

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
        self.nearest: NearestProjection | None = None
        self.blocks: BlockProjection | None = None
        self.factor = 1
        if is_latlon(reference):
            self.nearest = NearestProjection(grid, reference, name, partial)
        else:
            self.factor = block_factor(grid, reference, name)
            self.blocks = BlockProjection(grid, self.factor)
        self.increment = Increment(increment, self.factor)
        self.series = ReferenceSeries(reference, variables, name, time_interpolation)
        self.index = [state_vars.index(v) for v in variables]
        self.variables, self.tau_hours = list(variables), tau_hours
        self.alpha = 1.0 - math.exp(-seconds(dt) / (tau_hours * 3600.0))
        # the part of the cube apply() is given (faces, rows, cols): all, or one rank's block
        self.region: tuple[slice, ...] = (slice(None),) * 3
        self.cells: torch.Tensor | None = None  # a rank's cells, flat in (6 n n,): lat-lon
        self.in_box: torch.Tensor | None = None  # ... and their points in its reference box
        self._on_cells: dict[tuple, tuple] = {}  # the lat-lon map's tensors on those cells
        self.reduce = None  # sums over the ranks (a lat-lon reference's groups straddle them)
        self.part: BlockIncrement | None = None  # a block's increment (more than 6 ranks)

    def restrict(self, rank: int, blocks: list, tile: int, exchange) -> Relaxation:
        """This corrector for rank ``rank`` of a domain-decomposed rollout whose ranks hold
        ``blocks`` (:func:`screamcast.rollout.domain.blocks`): :meth:`apply` takes the state
        of its block only. Reference cells lie inside a rank's block (or the blocks are
        refused), so they nudge exactly as on one rank; a block's smooth increment swaps the
        reference cells past it with its neighbours (:mod:`.block_increment`: the same
        values, bit for bit); a lat-lon reference's groups of cells may straddle ranks: their
        sums are added over the ranks by ``exchange.sum_`` (in another order than one rank's:
        equal to float rounding)."""
        block = blocks[rank]
        view = copy.copy(self)
        view.region = block.region(tile)
        view.reduce = None if exchange is None else exchange.sum_
        self.series.close()  # its read-ahead of the whole globe is not needed here
        if self.nearest is not None:
            n = self.nearest.grid.n
            f, y, x = np.meshgrid(*(np.arange(s.start, s.stop) for s in view.region), indexing="ij")
            cells = ((f * n + y) * n + x).ravel()  # (F h w,)
            lat, lon, in_box = self.nearest.box(cells)
            view.cells, view.in_box = torch.as_tensor(cells), torch.as_tensor(in_box)
            view.series = self.series.on_box(lat, lon)  # the points its cells read, only
            view._on_cells = {}
            return view
        factor, n = self.factor, self.blocks.grid.n
        if (block.rows, block.cols) != (range(n // tile),) * 2 and factor > 1:
            view.part = BlockIncrement(rank, blocks, tile, factor, n, exchange)
        rows, cols = (range(s.start // factor, s.stop // factor) for s in view.region[1:])
        view.series = self.series.on_block(block.faces, rows, cols)
        return view

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

    @property
    def map(self):
        """The nearest-point map of a lat-lon reference (None for a cube reference)."""
        return None if self.nearest is None else self.nearest.map

    @property
    def projection(self) -> str:
        if self.nearest is not None:
            return self.nearest.description
        if self.factor == 1:
            return "identity"
        block = f"block mean over {self.factor}x{self.factor}"
        if self.increment.kind == "block":
            return block
        return f"{block}, increment {self.increment.kind} in each face"

    def prepare(self, first: object, last: object) -> None:
        self.series.check_covers(first, last)
        self.series.target(first)  # the first values it needs: read and checked now

    def check_covers(self, first: object, last: object) -> None:
        self.series.check_covers(first, last)

    def target(self, time: object) -> np.ndarray:
        return self.series.target(time)

    def close(self) -> None:
        self.series.close()

    def apply(self, x: torch.Tensor, time: object) -> torch.Tensor:
        """Nudge the prognostic state ``x (C, F, h, w)`` (this corrector's region: the globe,
        or one rank's block) in place toward the reference."""
        ref = torch.as_tensor(self.target(time), dtype=x.dtype, device=x.device)
        if self.nearest is not None:
            return self._apply_nearest(x, ref.reshape(len(self.index), -1))
        # (V, F, c, d): the series holds the block apply() is given (restrict)
        for k, c in enumerate(self.index):
            field = x[c]  # (F, h, w)
            if self.factor == 1:
                x[c] += self.alpha * (ref[k] - field)
                continue
            delta = ref[k] - self.blocks.coarse(field, x, self.region)  # (F, c, d)
            if self.part is not None:
                x[c] += self.alpha * self.part.to_cells(self.increment, delta)  # (1, h, w)
            else:
                x[c] += self.alpha * self.increment.to_cells(delta)  # (F, h, w)
        return x

    def _apply_nearest(self, x: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """``x += alpha * (ref[source] - mean_group(x))``; ``ref (V, n_points)`` (one rank's:
        the points in its box)."""
        source, group, area, group_area, covered = self.nearest.tensors(x)
        if self.cells is not None:  # one rank's cells (F h w,), taken once
            key = (x.device, x.dtype)
            if key not in self._on_cells:
                cells = self.cells.to(x.device)
                on = tuple(t[cells] for t in (group, area, covered))
                self._on_cells[key] = (self.in_box.to(x.device), *on)  # its points in its box
            source, group, area, covered = self._on_cells[key]
        for k, c in enumerate(self.index):
            field = x[c].reshape(-1)  # (F h w,)
            sums = torch.zeros_like(group_area).index_add_(0, group, field * area)
            if self.reduce is not None:
                sums = self.reduce(sums)  # (groups,) over every rank's cells
            mean = (sums / group_area)[group]  # (F h w,)
            delta = torch.where(covered, self.alpha * (ref[k][source] - mean), 0.0)
            x[c] += delta.view(x[c].shape)  # (F, h, w)
        return x

    def misfit(self, fields: np.ndarray, time: object) -> np.ndarray:
        """``(V,)``: the area-weighted RMSE of the state ``fields (C.., 6, n, n)`` (prognostic
        variables first), seen at the reference's scales (the projection the nudging uses),
        against the reference at ``time``, per nudged variable; NaN outside its times."""
        if not self.series.covers(time):
            return np.full(len(self.index), np.nan)
        # the nudged channels only, in float64: (V, 6, n, n)
        x = torch.as_tensor(np.asarray(fields)[self.index], dtype=torch.float64)
        ref = torch.as_tensor(self.target(time), dtype=torch.float64)
        out = []
        if self.nearest is not None:
            source, group, area, group_area, _ = self.nearest.tensors(x)
            ref = ref.reshape(len(self.index), -1)  # (V, points)
            for k in range(len(self.index)):
                field = x[k].reshape(-1)  # (6 n n,)
                mean = torch.zeros_like(group_area).index_add_(0, group, field * area)
                d = ref[k][source] - (mean / group_area)[group]  # (6 n n,)
                out.append(torch.sqrt((area * d * d).sum() / area.sum()))
            return torch.stack(out).numpy()
        block_area = self.blocks.block_area()
        for k in range(len(self.index)):
            coarse = self.blocks.coarse(x[k], x)  # (6, m, m)
            d2 = (ref[k] - coarse) ** 2
            out.append(torch.sqrt((block_area * d2).sum() / block_area.sum()))
        return torch.stack(out).numpy()

    def attrs(self) -> dict:
        coverage = 1.0 if self.nearest is None else round(self.nearest.map.covered_fraction, 6)
        return {
            "nudge_vars": ",".join(self.variables),
            "nudge_tau_hours": self.tau_hours,
            "nudge_alpha": self.alpha,
            "nudge_projection": self.projection,
            "nudge_time": self.series.time_interpolation,
            "nudge_coverage": coverage,
            "nudge_reference_calendar": self.series.calendar,
        } | ({} if self.nearest is not None else {"nudge_block_cells": self.factor})


register_corrector("relaxation", RelaxationConfig)(Relaxation.from_config)
