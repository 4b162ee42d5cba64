# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step on one rank's block of the cube (the whole cube on one rank; on several,
the same rectangle of tiles on each face of a group, :func:`~screamcast.rollout.domain.blocks`):
the block's tiles with their halos
(:class:`~screamcast.rollout.block_operator.BlockOperator`, which exchanges what other ranks
own) -> the network -> reassembly on the block. One rank is the one-block case: its plan
sends nothing and its exchange is local, so 1 and N ranks run this same code, and their
outputs are equal bit for bit (tested with 1, 2, 3, 4, 8 and 12 gloo ranks).

Geometry (tile lat/lon, static inputs per tile) is computed once, for this block's tiles
only; each step gathers the state, evaluates the insolation on the tiles and runs the
network. With ``overlap_exchange`` the halo exchange is posted, the tiles whose windows need
none of it (the block's interior) run, and only then does the rank wait for it: what the
exchange costs is hidden behind those forwards. The interior and the ring are batched apart,
so with ``batch_size > 1`` the batches differ from one rank's (equal to float rounding; bit
for bit with batches of one tile or a block without interior tiles).
"""

from __future__ import annotations

import functools
import time
from contextlib import contextmanager

import numpy as np
import torch

from screamcast.config.choices import PRECISIONS
from screamcast.config.inference import StepperSection, check_stepper_values
from screamcast.grid.tiling import TileLayout
from screamcast.halo import HaloOperator
from screamcast.model.pipeline import Pipeline
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.exchange import LocalExchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.step.reassembly import Reassembly
from screamcast.step.tile_inputs import TileInputs


@functools.cache
def cpu_has_amx_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bf16 in hardware (Intel AMX-BF16): there bf16 autocast runs
    the network 2.6x faster than fp32 at unchanged skill (docs/notes/2026-12-03-climate.md);
    without it, bf16 is emulated and slower. False where ``cpuinfo`` cannot be read."""
    try:
        with open(cpuinfo) as f:
            return any(line.startswith("flags") and " amx_bf16" in line for line in f)
    except OSError:
        return False


def resolve_precision(precision: str, device: torch.device | str) -> str:
    """``bf16`` (the network under bf16 autocast; gather, reassembly and nudging stay fp32) or
    ``fp32``; ``auto`` is bf16 on CUDA and on CPUs with AMX-BF16 (:func:`cpu_has_amx_bf16`),
    where it is the faster arithmetic at unchanged skill, fp32 elsewhere (bf16 emulated is
    slower). An output records which it ran, and a resume keeps it
    (:mod:`screamcast.rollout.inference_settings`)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision != "auto":
        return precision
    cuda = torch.device(device).type == "cuda"
    return "bf16" if cuda or cpu_has_amx_bf16() else "fp32"


def fastest_cpu_precision() -> str:
    """``bf16`` on a CPU with AMX-BF16, else ``fp32``: what to ask for on this CPU."""
    return "bf16" if cpu_has_amx_bf16() else "fp32"


def inference_network(pipeline: Pipeline, device: torch.device, channels_last: bool) -> Pipeline:
    """``pipeline`` (moved, in place) on ``device`` in eval mode; ``channels_last``: NHWC
    convolution weights, which the activations follow. That is what tensor-core convolutions
    want; inference on CPU is faster with it too (measured in docs/rollout.md)."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    return pipeline.to(device, memory_format=fmt).eval()


class GlobalStepper:
    """Steps the state of the block ``plan.block``: ``(C, F, h, w)`` -> ``(C + D, F, h, w)``
    (the whole cube ``(C, 6, n, n)`` on one rank).

    ``seconds``: this rank's time in the network's forwards, waiting for the halo exchange
    and reassembling (with the reassembly's exchanges), summed over its steps (what the
    benchmarks set against the step's time)."""

    def __init__(
        self,
        pipeline: Pipeline,
        layout: TileLayout,
        static: np.ndarray,
        section: StepperSection | None = None,
        device: str | None = None,
        plan: ExchangePlan | None = None,
        exchange=None,
    ):
        """``section``: the inference config's ``stepper`` settings (the one stepper config;
        default its defaults), checked here as the config's validation checks them; ``device``:
        where it runs (default the section's); ``plan``, ``exchange``: this rank's block and
        its neighbours (default one rank: the whole cube, nothing exchanged)."""
        c = section or StepperSection()
        check_stepper_values(c.batch_size, c.precision, c.window)
        reassembly = Reassembly.from_flags(c.halo_adjoint, c.halo_adjoint_cross_face)
        self.device = torch.device(device or c.device)
        self.precision = resolve_precision(c.precision, self.device)
        self.bounded = pipeline.bounded  # the outputs' bounds (screamcast.model.constraints)
        self.pipeline = inference_network(pipeline, self.device, c.channels_last)
        self.op = HaloOperator(layout, self.device)  # the layout's geometry, counts, windows
        plan = plan or ExchangePlan.build(layout, 0, 1)
        self.block = BlockOperator(self.op, plan, exchange or LocalExchange())
        self.batch_size, self.overlap = c.batch_size, c.overlap_exchange
        self.halo_adjoint, self.cross_face = reassembly.halo_adjoint, reassembly.cross_face
        self.window = c.window
        tiles = plan.block.tiles(layout.tiles_per_side)  # (F rows cols,): only this block's
        self.inputs = TileInputs(pipeline, layout, static, self.op, tiles)
        self.seconds = {"forward": 0.0, "halo_wait": 0.0, "reassembly": 0.0}

    @property
    def static_tiles(self) -> torch.Tensor:
        return self.inputs.static_tiles  # (n_tiles, F + K, S, S)

    def forcing(self, t0, t1, tiles=slice(None)) -> torch.Tensor:
        """The tiles' forcing of the step ``t0 -> t1`` (:meth:`TileInputs.forcing`)."""
        return self.inputs.forcing(t0, t1, tiles)

    @contextmanager
    def _timed(self, part: str):
        start = time.perf_counter()
        yield
        self.seconds[part] += time.perf_counter() - start

    def _forward(self, tiles: torch.Tensor, t0, t1, which: torch.Tensor | None = None):
        """The network on ``tiles (N, C, S, S)``, the stepper's tiles ``which`` (indices; all
        if None), ``batch_size`` at a time: ``(N, C + D, S, S)``."""
        if not len(tiles):
            raise ValueError("the stepper was given no tiles to run")
        out = None
        bf16 = self.precision == "bf16"
        for b in range(0, tiles.shape[0], self.batch_size):
            sl = slice(b, b + self.batch_size)
            mine = sl if which is None else which[sl]
            forcing = self.forcing(t0, t1, mine)  # (batch, 2, S, S), float32
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16):
                y = self.pipeline.predict(tiles[sl], forcing, self.static_tiles[mine]).float()
            if out is None:
                out = torch.zeros((tiles.shape[0], *y.shape[1:]), device=self.device)
            out[sl] = y
        return out

    def _run(self, slab: torch.Tensor, which, t0, t1) -> torch.Tensor:
        """The network on the tiles ``which`` (all if None) of ``slab``, timed."""
        tiles = self.block.cut(slab, which)  # (len(which), C, S, S)
        with self._timed("forward"):
            return self._forward(tiles, t0, t1, which)

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, h, w)`` -> predictions on this block's tile pixels ``(F rows cols, C + D,
        S, S)``."""
        slab, pending = self.block.start(x.to(self.device))  # (C, F, h + 2H, w + 2H)
        inner, outer = self.block.inner, self.block.outer
        if not self.overlap or not self.block.plan.recv_halo or not inner.numel():  # none to hide
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
        """``x (C, F, h, w)`` at t -> ``(C + D, F, h, w)`` at t+1 on this block (bounded
        outputs in bounds)."""
        tiles = self.predict_tiles(x, t0, t1)  # (F rows cols, C + D, S, S)
        with self._timed("reassembly"):
            if not self.halo_adjoint:
                return self.block.crop(tiles)
            return self.block.adjoint(tiles, self.cross_face, self.window)
