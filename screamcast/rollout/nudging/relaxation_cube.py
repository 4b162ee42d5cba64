# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Relaxation toward a cube reference: the model's grid coarsened by whole elements (or the
model's grid itself). ``P`` is the block mean over each reference cell; the block increment
goes back to the model's cells smoothly in each face (:mod:`.increment`), and on a rank's
block the reference cells past its border are swapped with its neighbours
(:mod:`.block_increment`)."""

from __future__ import annotations

import torch

from screamcast.data.store_axes import is_latlon
from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.nudging.block_increment import BlockIncrement
from screamcast.rollout.nudging.increment import Increment
from screamcast.rollout.nudging.projection import BlockProjection, block_factor
from screamcast.rollout.nudging.relaxation_base import Relaxation


class CubeRelaxation(Relaxation, takes=lambda ref: not is_latlon(ref)):
    def project(self, reference, grid: PhysicsGrid, name: str, partial: str, increment: str):
        self.factor = block_factor(grid, reference, name)  # model cells a reference cell spans
        self.blocks = BlockProjection(grid, self.factor)
        self.increment = Increment(increment, self.factor)
        self.part: BlockIncrement | None = None  # a block's increment (more than 6 ranks)

    @property
    def map(self):
        return None  # a lat-lon reference's nearest-point map: none here

    @property
    def projection(self) -> str:
        if self.factor == 1:
            return "identity"
        block = f"block mean over {self.factor}x{self.factor}"
        if self.increment.kind == "block":
            return block
        return f"{block}, increment {self.increment.kind} in each face"

    def restrict(self, rank: int, blocks: list, tile: int, exchange) -> CubeRelaxation:
        """This corrector on rank ``rank``'s block of ``blocks``
        (:func:`screamcast.rollout.domain.blocks`): :meth:`apply` takes its block's state
        only. Reference cells lie inside a rank's block (or the blocks are refused), so they
        nudge exactly as on one rank; a block's smooth increment swaps the reference cells
        past it with its neighbours (:mod:`.block_increment`: the same values, bit for bit)."""
        block, view = blocks[rank], self.restricted(blocks[rank], tile)
        factor, n = self.factor, self.blocks.grid.n
        if (block.rows, block.cols) != (range(n // tile),) * 2 and factor > 1:
            view.part = BlockIncrement(rank, blocks, tile, factor, n, exchange)
        rows, cols = (range(s.start // factor, s.stop // factor) for s in view.region[1:])
        view.series = self.series.on_block(block.faces, rows, cols)
        return view

    def apply(self, x: torch.Tensor, time: object) -> torch.Tensor:
        """Nudge the prognostic state ``x (C, F, h, w)`` (this corrector's region: the globe,
        or one rank's block) in place toward the reference."""
        ref = torch.as_tensor(self.target(time), dtype=x.dtype, device=x.device)
        # (V, F, c, d): the series holds the block apply() is given (restrict)
        for k, c in enumerate(self.index):
            field = x[c]  # (F, h, w)
            if self.factor == 1:
                x[c] += self.alpha * (ref[k] - field)
                continue
            delta = ref[k] - self.blocks.coarse(field, x, self.region)  # (F, c, d)
            if self.part is not None:
                x[c] += self.alpha * self.part.to_cells(self.increment, delta)  # (F, h, w)
            else:
                x[c] += self.alpha * self.increment.to_cells(delta)  # (F, h, w)
        return x

    def projected_rmse(self, x: torch.Tensor, ref: torch.Tensor) -> list[torch.Tensor]:
        block_area, out = self.blocks.block_area(), []
        for k in range(len(self.index)):
            coarse = self.blocks.coarse(x[k], x)  # (6, m, m)
            d2 = (ref[k] - coarse) ** 2
            out.append(torch.sqrt((block_area * d2).sum() / block_area.sum()))
        return out

    def attrs(self) -> dict:
        return super().attrs() | {"nudge_block_cells": self.factor}
