# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step: gather tiles with halo -> batched model forward -> reassemble.

:class:`GlobalStepper` is the :class:`screamcast.model.stepper.Stepper` of the whole cube.

Geometry (tile lat/lon, static inputs per tile) is computed once; each step only gathers the
state, evaluates the insolation on the tiles and runs the network. Several ranks split the
globe by faces instead (:class:`~screamcast.rollout.domain_stepper.DomainStepper`).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from screamcast.config.choices import PRECISIONS
from screamcast.config.inference import StepperSection, check_stepper_values
from screamcast.grid.tiling import TileLayout
from screamcast.halo import HaloOperator
from screamcast.model.pipeline import Pipeline
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
    ``fp32``; ``auto`` is bf16 on CUDA. CPU autocast runs bf16 too, so the GPU path is tested.
    On a CPU ``auto`` stays fp32 even with AMX-BF16 (:func:`cpu_has_amx_bf16`): a default
    that changed an output's numbers by machine would make the same command give different
    results on two CPUs; ``--precision bf16`` asks for it."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    cuda = torch.device(device).type == "cuda"
    return "bf16" if precision == "bf16" or (precision == "auto" and cuda) else "fp32"


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
    def __init__(
        self,
        pipeline: Pipeline,
        layout: TileLayout,
        static: np.ndarray,
        section: StepperSection | None = None,
        device: str | None = None,
        tiles: np.ndarray | None = None,
    ):
        """``section``: the inference config's ``stepper`` settings (the one stepper config;
        default its defaults), checked here as the config's validation checks them; ``device``:
        where it runs (default the section's); ``tiles``: the tiles it steps (one rank's
        block; default all), the only ones whose inputs it builds."""
        c = section or StepperSection()
        check_stepper_values(c.batch_size, c.precision, c.window)
        reassembly = Reassembly.from_flags(c.halo_adjoint, c.halo_adjoint_cross_face)
        self.device = torch.device(device or c.device)
        self.precision = resolve_precision(c.precision, self.device)
        self.bounded = pipeline.bounded  # the outputs' bounds (screamcast.model.constraints)
        self.pipeline = inference_network(pipeline, self.device, c.channels_last)
        self.op = HaloOperator(layout, self.device)
        self.batch_size = c.batch_size
        self.halo_adjoint, self.cross_face = reassembly.halo_adjoint, reassembly.cross_face
        self.window = c.window
        self.inputs = TileInputs(pipeline, layout, static, self.op, tiles)
        self.seconds: dict[str, float] = {}  # the parts of its steps it times (none here)

    @property
    def static_tiles(self) -> torch.Tensor:
        return self.inputs.static_tiles  # (n_tiles, F + K, S, S)

    def forcing(self, t0, t1, tiles=slice(None)) -> torch.Tensor:
        """The tiles' forcing of the step ``t0 -> t1`` (:meth:`TileInputs.forcing`)."""
        return self.inputs.forcing(t0, t1, tiles)

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, 6, n, n)`` -> predictions on every tile pixel ``(n_tiles, C + D, S, S)``."""
        tiles = self.op.gather(x[None].to(self.device))  # (n_tiles, C, S, S)
        return self._forward(tiles, t0, t1)

    def _forward(self, tiles: torch.Tensor, t0, t1, which: torch.Tensor | None = None):
        """The network on ``tiles (N, C, S, S)``, the stepper's tiles ``which`` (indices; all
        if None), ``batch_size`` at a time: ``(N, C + D, S, S)``."""
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

    def step(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, 6, n, n)`` at t -> ``(C + D, 6, n, n)`` at t+1 (bounded outputs in bounds)."""
        tiles = self.predict_tiles(x, t0, t1)
        if self.halo_adjoint:
            y = self.op.adjoint(tiles, cross_face=self.cross_face, window=self.window)[0]
        else:
            y = self.op.crop(tiles)[0]
        return y
