# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step on one rank's block (whole faces, or a rectangle of a face's tiles): the
block's tiles with their halos (:class:`~screamcast.rollout.block_operator.BlockOperator`,
which exchanges what other ranks own) -> the network -> reassembly on the block. The outputs
equal one rank's bit for bit (tested with 2, 3 and 12 gloo ranks).

With ``overlap_exchange`` the halo exchange is posted, the tiles whose windows need none of
it (the block's interior) run, and only then does the rank wait for it: what the exchange
costs is hidden behind those forwards. The interior and the ring are batched apart, so with
``batch_size > 1`` the batches differ from one rank's (equal to float rounding; bit for bit
with batches of one tile or a block without interior tiles)."""

from __future__ import annotations

import time

import numpy as np
import torch

from screamcast.grid.tiling import TileLayout
from screamcast.model.pipeline import Pipeline
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper, StepperConfig


class DomainStepper(GlobalStepper):
    """Steps the state of the block ``plan.block``: ``(C, F, h, w)`` -> ``(C + D, F, h, n)``.

    ``seconds``: this rank's time in the network's forwards, waiting for the halo exchange
    and reassembling (with the reassembly's exchanges), summed over its steps (what the
    benchmark sets against the step's time)."""

    def __init__(
        self,
        pipeline: Pipeline,
        layout: TileLayout,
        static: np.ndarray,
        config: StepperConfig,
        plan: ExchangePlan,
        exchange: Exchange,
    ):
        super().__init__(pipeline, layout, static, config)
        self.block = BlockOperator(self.op, plan, exchange)  # the stepper's operator
        tiles = torch.as_tensor(plan.block.tiles(layout.tiles_per_side))
        self.inputs = self.inputs.select(tiles)  # (F rows cols, K, S, S): only mine
        self.overlap = config.overlap_exchange
        self.seconds = {"forward": 0.0, "halo_wait": 0.0, "reassembly": 0.0}

    def _timed_forward(self, tiles: torch.Tensor, t0, t1, which=None) -> torch.Tensor:
        start = time.perf_counter()
        out = self._forward(tiles, t0, t1, which)
        self.seconds["forward"] += time.perf_counter() - start
        return out

    def _finish(self, slab: torch.Tensor, pending) -> torch.Tensor:
        start = time.perf_counter()
        slab = self.block.finish(slab, pending)
        self.seconds["halo_wait"] += time.perf_counter() - start
        return slab

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` -> predictions on this rank's tile pixels ``(F rows cols, C + D,
        S, S)``."""
        slab, pending = self.block.start(x.to(self.device))  # (C, F, h + 2H, w + 2H)
        if not self.overlap or not self.block.inner.numel():
            return self._timed_forward(self.block.cut(self._finish(slab, pending)), t0, t1)
        inner, outer = self.block.inner, self.block.outer
        first = self._timed_forward(self.block.cut(slab, inner), t0, t1, inner)
        slab = self._finish(slab, pending)  # the halo: in flight while the interior ran
        rest = self._timed_forward(self.block.cut(slab, outer), t0, t1, outer)
        out = first.new_empty(len(inner) + len(outer), *first.shape[1:])  # (F rows cols, ...)
        out[inner], out[outer] = first, rest
        return out

    def step(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` at t -> ``(C + D, F, h, n)`` at t+1 on this rank's block."""
        tiles = self.predict_tiles(x, t0, t1)  # (F rows cols, C + D, S, S)
        start = time.perf_counter()
        if not self.halo_adjoint:
            out = self.block.crop(tiles)
        else:
            out = self.block.adjoint(tiles, self.cross_face, self.window)
        self.seconds["reassembly"] += time.perf_counter() - start
        return out
