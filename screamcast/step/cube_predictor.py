# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The global step's prediction with gradients, on a batch of whole cubes: the rollout's
gather, the network on every tile, the rollout's reassembly (:mod:`.differentiable_halo`).
Halos come from the model's own previous output, across cube edges too."""

from __future__ import annotations

import torch

from screamcast.halo import HaloOperator
from screamcast.step.differentiable_halo import gather, reassemble
from screamcast.step.reassembly import Reassembly
from screamcast.step.tile_inputs import TileInputs


class CubePredictor:
    """``(x (B, C, 6, n, n), t0s, t1s) -> (B, C + D, 6, n, n)``; ``t0s, t1s``: each cube's
    two times (its forcing)."""

    def __init__(
        self,
        pipeline,
        op: HaloOperator,
        inputs: TileInputs,
        reassembly: Reassembly = Reassembly.INTRA_FACE,
        window: str = "cosine",
    ):
        self.pipeline, self.op, self.inputs = pipeline, op, inputs
        self.reassembly, self.window = reassembly, window

    def __call__(self, x: torch.Tensor, t0s, t1s) -> torch.Tensor:
        B = len(x)
        tiles = gather(self.op, x)  # (B * n_tiles, C, S, S), batch-major
        static = self.inputs.static_tiles.repeat(B, 1, 1, 1)  # (B * n_tiles, F + K, S, S)
        forcing = torch.cat([self.inputs.forcing(a, b) for a, b in zip(t0s, t1s, strict=True)])
        y = self.pipeline(tiles, forcing, static)  # (B * n_tiles, C + D, S, S)
        r = self.reassembly
        return reassemble(self.op, y, r.halo_adjoint, r.cross_face, self.window)
