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
from contextlib import contextmanager

import numpy as np
import torch

from screamcast.config.inference import StepperSection
from screamcast.grid.tiling import TileLayout
from screamcast.model.pipeline import Pipeline
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper


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
        section: StepperSection,
        plan: ExchangePlan,
        exchange: Exchange,
        device: str | None = None,
    ):
        tiles = plan.block.tiles(layout.tiles_per_side)  # (F rows cols,): only mine
        super().__init__(pipeline, layout, static, section, device, tiles)
        self.block = BlockOperator(self.op, plan, exchange)  # the stepper's operator
        self.overlap = section.overlap_exchange
        self.seconds = {"forward": 0.0, "halo_wait": 0.0, "reassembly": 0.0}

    @contextmanager
    def _timed(self, part: str):
        start = time.perf_counter()
        yield
        self.seconds[part] += time.perf_counter() - start

    def _run(self, slab: torch.Tensor, which, t0, t1) -> torch.Tensor:
        """The network on the tiles ``which`` (all if None) of ``slab``, timed."""
        tiles = self.block.cut(slab, which)  # (len(which), C, S, S)
        with self._timed("forward"):
            return self._forward(tiles, t0, t1, which)

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` -> predictions on this rank's tile pixels ``(F rows cols, C + D,
        S, S)``."""
        slab, pending = self.block.start(x.to(self.device))  # (C, F, h + 2H, w + 2H)
        inner, outer = self.block.inner, self.block.outer
        if not self.overlap or not inner.numel():
            with self._timed("halo_wait"):
                slab = self.block.finish(slab, pending)
            return self._run(slab, None, t0, t1)
        first = self._run(slab, inner, t0, t1)
        with self._timed("halo_wait"):  # the halo: in flight while the interior ran
            slab = self.block.finish(slab, pending)
        rest = self._run(slab, outer, t0, t1)
        out = first.new_empty(len(inner) + len(outer), *first.shape[1:])  # (F rows cols, ...)
        out[inner], out[outer] = first, rest
        return out

    def step(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` at t -> ``(C + D, F, h, n)`` at t+1 on this rank's block."""
        tiles = self.predict_tiles(x, t0, t1)  # (F rows cols, C + D, S, S)
        with self._timed("reassembly"):
            if not self.halo_adjoint:
                return self.block.crop(tiles)
            return self.block.adjoint(tiles, self.cross_face, self.window)
