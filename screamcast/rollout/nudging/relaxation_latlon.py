# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Relaxation toward a regular lat-lon reference: each cell takes its nearest reference
point, and ``P`` is the mean over the cells sharing a point (:mod:`.projection`); cells
outside a regional reference's domain are not nudged. On a rank's block, the groups of cells
that straddle ranks have their sums added over the ranks."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.data.store_axes import is_latlon
from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.nudging.projection import NearestProjection
from screamcast.rollout.nudging.relaxation_base import Relaxation


class LatLonRelaxation(Relaxation, takes=is_latlon):
    def project(self, reference, grid: PhysicsGrid, name: str, partial: str, increment: str):
        self.nearest = NearestProjection(grid, reference, name, partial)
        self.cells: torch.Tensor | None = None  # a rank's cells, flat in (6 n n,)
        self.in_box: torch.Tensor | None = None  # ... and their points in its reference box
        self._on_cells: dict[tuple, tuple] = {}  # the map's tensors on those cells
        self.reduce = None  # sums over the ranks (a group of cells may straddle them)

    @property
    def map(self):
        """The nearest-point map."""
        return self.nearest.map

    @property
    def projection(self) -> str:
        return self.nearest.description

    def restrict(self, rank: int, blocks: list, tile: int, exchange) -> LatLonRelaxation:
        """This corrector on rank ``rank``'s block of ``blocks``: its cells read only the
        reference points in their box; a group's sums are added over the ranks by
        ``exchange.sum_`` (in another order than one rank's: equal to float rounding)."""
        view = self.restricted(blocks[rank], tile)
        view.reduce = None if exchange is None else exchange.sum_
        n = self.nearest.grid.n
        f, y, x = np.meshgrid(*(np.arange(s.start, s.stop) for s in view.region), indexing="ij")
        cells = ((f * n + y) * n + x).ravel()  # (F h w,)
        lat, lon, in_box = self.nearest.box(cells)
        view.cells, view.in_box = torch.as_tensor(cells), torch.as_tensor(in_box)
        view.series = self.series.on_box(lat, lon)  # the points its cells read, only
        view._on_cells = {}
        return view

    def apply(self, x: torch.Tensor, time: object) -> torch.Tensor:
        """``x += alpha * (ref[source] - mean_group(x))`` on the state ``x (C, F, h, w)`` (the
        globe, or one rank's block), in place; the reference ``(V, points)`` is the points in
        this corrector's box."""
        ref = torch.as_tensor(self.target(time), dtype=x.dtype, device=x.device)
        ref = ref.reshape(len(self.index), -1)  # (V, points)
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

    def projected_rmse(self, x: torch.Tensor, ref: torch.Tensor) -> list[torch.Tensor]:
        source, group, area, group_area, _ = self.nearest.tensors(x)
        ref, out = ref.reshape(len(self.index), -1), []  # (V, points)
        for k in range(len(self.index)):
            field = x[k].reshape(-1)  # (6 n n,)
            mean = torch.zeros_like(group_area).index_add_(0, group, field * area)
            d = ref[k][source] - (mean / group_area)[group]  # (6 n n,)
            out.append(torch.sqrt((area * d * d).sum() / area.sum()))
        return out

    def attrs(self) -> dict:
        return super().attrs() | {"nudge_coverage": round(self.nearest.map.covered_fraction, 6)}
