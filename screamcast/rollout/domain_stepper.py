# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step on one rank's block (whole faces, or a rectangle of a face's tiles): the
block's tiles with their halos (:class:`~screamcast.rollout.block_operator.BlockOperator`,
which exchanges what other ranks own) -> the network -> reassembly on the block. The outputs
equal one rank's bit for bit (tested with 2, 3 and 12 gloo ranks)."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.grid.tiling import TileLayout
from screamcast.model.pipeline import Pipeline
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper, StepperConfig


class DomainStepper(GlobalStepper):
    """Steps the state of the block ``plan.block``: ``(C, F, h, w)`` -> ``(C + D, F, h, n)``."""

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

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` -> predictions on this rank's tile pixels ``(F rows cols, C + D,
        S, S)``."""
        return self._forward(self.block.gather(x.to(self.device)), t0, t1)

    def step(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` at t -> ``(C + D, F, h, n)`` at t+1 on this rank's block."""
        tiles = self.predict_tiles(x, t0, t1)  # (F rows cols, C + D, S, S)
        if not self.halo_adjoint:
            return self.block.crop(tiles)
        return self.block.adjoint(tiles, self.cross_face, self.window)
