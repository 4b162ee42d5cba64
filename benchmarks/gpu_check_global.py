# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The prepared GPU check's training through the global step (``unroll=global``): whole
cubes through the rollout's own step (gather, network, overlap-add) for ``k`` steps, the
loss over the leads, backward and AdamW; with and without activation checkpointing (one
state a step kept, the step recomputed in the backward), in bf16 autocast on CUDA. Built
from the package's parts without Hydra or a store, so it runs on a lent GPU's bare image."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.data.batch import CubeBatch
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator
from screamcast.step.cube_predictor import CubePredictor
from screamcast.step.reassembly import Reassembly
from screamcast.step.step import Step
from screamcast.step.tile_inputs import TileInputs
from screamcast.train.global_unroll import GlobalUnroll
from screamcast.train.losses import loss_function


def global_unroll(pipeline, device, n: int, tile: int, halo: int, k: int, recompute: bool):
    """The training objective of ``k`` steps on one cube of faces ``n``, and its batch."""
    layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
    op = HaloOperator(layout, device)
    inputs = TileInputs(pipeline, layout, np.zeros((len(pipeline.static), 6, n, n)), op)
    step = Step(CubePredictor(pipeline, op, inputs, Reassembly.INTRA_FACE), pipeline.n_prognostic)
    area = np.asarray(layout.grid.area, np.float64)  # (6, n, n)
    weights = torch.full((k,), 1.0 / k)
    scale, mean = pipeline.loss_scale(), pipeline.mean
    loss = loss_function("area_weighted_mse")
    unroll = GlobalUnroll(step, loss, scale, mean, area, weights, recompute)
    C, V = pipeline.n_prognostic, len(pipeline.prognostic) + len(pipeline.diagnostic)
    batch = CubeBatch(
        state=torch.randn(1, C, 6, n, n, device=device),
        target=torch.randn(1, k, V, 6, n, n, device=device),
        start=torch.zeros(1, dtype=torch.long),
    )
    times = np.datetime64("2020-01-01T00") + np.arange(k + 1) * np.timedelta64(1, "h")
    return unroll, batch, times


def global_step_rate(pipeline, device, n, tile, halo, k, recompute, bf16, steps, timed) -> dict:
    """Seconds per optimizer step and peak memory of ``k`` global steps (``timed``: the
    check's timer, ``(fn, steps, device) -> (seconds, memory)``)."""
    fmt = torch.channels_last if bf16 else torch.contiguous_format
    pipeline = pipeline.to(device, memory_format=fmt).train()
    unroll, batch, times = global_unroll(pipeline, device, n, tile, halo, k, recompute)
    opt = torch.optim.AdamW(pipeline.parameters(), lr=1e-5)

    def step():
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss, _ = unroll(batch, times)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    dt, mem = timed(step, steps, device)
    shape = {"n": n, "tile": tile, "halo": halo, "k": k, "checkpointing": recompute}
    return shape | {"step_s": dt, "cube_steps_per_s": k / dt, "memory": mem}


def global_step_rates(pipeline, device, n, tile, halo, bf16, steps, timed, ks=(4, 8)) -> list:
    """Every ``k`` in ``ks``, activation checkpointing on and off."""
    return [
        global_step_rate(pipeline, device, n, tile, halo, k, recompute, bf16, steps, timed)
        for k in ks
        for recompute in (True, False)
    ]
