# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step: gather tiles with halo -> batched model forward -> reassemble.

:class:`GlobalStepper` is the :class:`screamcast.model.stepper.Stepper` of the whole cube.

Geometry (tile lat/lon, static inputs per tile) is computed once; each step only gathers the
state, evaluates the insolation on the tiles and runs the network. Several ranks split the
globe by faces instead (:class:`~screamcast.rollout.domain_stepper.DomainStepper`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import torch

from screamcast.config.choices import PRECISIONS
from screamcast.data.forcing import (
    cos_zenith_from_terms,
    extended_position_features,
    hour_angle_from_terms,
    solar_terms,
)
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.tiling import TileLayout
from screamcast.halo import HaloOperator
from screamcast.model.pipeline import Pipeline


def resolve_precision(precision: str, device: torch.device | str) -> str:
    """``bf16`` (the network under bf16 autocast; gather, reassembly and nudging stay fp32) or
    ``fp32``; ``auto`` is bf16 on CUDA. CPU autocast runs bf16 too, so the GPU path is tested."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    cuda = torch.device(device).type == "cuda"
    return "bf16" if precision == "bf16" or (precision == "auto" and cuda) else "fp32"


def inference_network(pipeline: Pipeline, device: torch.device, channels_last: bool) -> Pipeline:
    """``pipeline`` (moved, in place) on ``device`` in eval mode; ``channels_last``: NHWC
    convolution weights, which the activations follow. That is what tensor-core convolutions
    want; inference on CPU is faster with it too (measured in docs/rollout.md)."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    return pipeline.to(device, memory_format=fmt).eval()


class Reassembly(str, Enum):
    """How a step's tile predictions become the global state."""

    CROP = "crop"  # each tile's centre, halo predictions unused
    INTRA_FACE = "intra-face"  # normalised overlap-add of every prediction inside each face
    CROSS_FACE = "cross-face"  # ... and of the halo predictions across cube edges (KNN^T)

    @classmethod
    def from_flags(cls, halo_adjoint: bool, cross_face: bool) -> Reassembly:
        """The rollout's two flags as one choice; the only place their rule is checked."""
        if cross_face and not halo_adjoint:
            raise ValueError("the cross-face halo adjoint requires the halo adjoint")
        if not halo_adjoint:
            return cls.CROP
        return cls.CROSS_FACE if cross_face else cls.INTRA_FACE

    @property
    def halo_adjoint(self) -> bool:
        return self is not Reassembly.CROP

    @property
    def cross_face(self) -> bool:
        return self is Reassembly.CROSS_FACE


@dataclass(frozen=True)
class StepperConfig:
    """How :class:`GlobalStepper` runs: reassembly, device and arithmetic, batching."""

    reassembly: Reassembly = Reassembly.CROP
    device: str = "cpu"
    batch_size: int = 16  # tiles per forward pass
    precision: str = "auto"  # the network's: auto (bf16 autocast on CUDA), bf16 or fp32
    channels_last: bool = True  # the network's convolutions in NHWC
    window: str = "cosine"  # the overlap-add's tile window (screamcast.halo.tile_window)

    @classmethod
    def of(cls, section, device: str) -> StepperConfig:
        """From the inference config's ``stepper`` section, on ``device``."""
        return cls(
            Reassembly.from_flags(section.halo_adjoint, section.halo_adjoint_cross_face),
            device,
            section.batch_size,
            section.precision,
            section.channels_last,
            window=section.window,
        )


class GlobalStepper:
    def __init__(
        self,
        pipeline: Pipeline,
        layout: TileLayout,
        static: np.ndarray,
        config: StepperConfig = StepperConfig(),
    ):
        c = self.config = config
        if c.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {c.batch_size}")
        self.device = torch.device(c.device)
        self.precision = resolve_precision(c.precision, self.device)
        self.solar_time = pipeline.solar_time
        self.insolation = pipeline.insolation
        self.bounded = pipeline.bounded  # the outputs' bounds (screamcast.model.constraints)
        self.pipeline = inference_network(pipeline, self.device, c.channels_last)
        self.op = HaloOperator(layout, self.device)
        self.batch_size = c.batch_size
        self.halo_adjoint = c.reassembly.halo_adjoint
        self.cross_face = c.reassembly.cross_face
        self.window = c.window
        pos = layout.tile_pixel_positions()  # (n_tiles, S, S) into the (6, P, P) extended faces
        feats = extended_position_features(ExtendedFaceGeometry(layout), pipeline.grid_metric)
        feats = feats.reshape(len(feats), -1)[:, pos]  # (K, 6 P P) -> (K, nt, S, S)
        tiles = [torch.as_tensor(feats, device=self.device).transpose(0, 1)]  # (nt, K, S, S)
        if len(static):  # a model may have no static inputs
            st = torch.as_tensor(static, dtype=torch.float32, device=self.device)[None]
            tiles.insert(0, self.op.gather(st))  # (1, F, 6, n, n) -> (nt, F, S, S)
        self.static_tiles = torch.cat(tiles, dim=1)  # (nt, F + K, S, S): sin/cos lat, lon last

    def forcing(self, t0: np.datetime64, t1: np.datetime64, tiles=slice(None)) -> torch.Tensor:
        """Insolation / S0 at t and t+1 on the ``tiles`` (a slice): ``(n, 2, S, S)``; for a
        ``solar_time`` model with cos, sin of the hour angle after each: ``(n, 6, S, S)``.

        Evaluated on the device from the tiles' float32 position features, in float64, as the
        training crops evaluate it from theirs (the same values bit for bit); only the solar
        terms of the two times come from the host. (On the host, a production grid's 57M tile
        pixels would take seconds per step, longer than the network's forwards on a GPU.)
        """
        if not self.insolation:  # a model of a world without a sun takes no forcing
            n = self.static_tiles[tiles].shape[0]
            return self.static_tiles.new_zeros((n, 0, *self.static_tiles.shape[-2:]))
        wide = torch.float32 if self.device.type == "mps" else torch.float64  # MPS: no float64
        terms = [
            torch.as_tensor(v, dtype=wide, device=self.device).view(1, 2, 1, 1)
            for v in solar_terms(np.array([t0, t1]))
        ]
        trig = self.static_tiles[tiles, -4:, None].to(wide).unbind(1)  # 4 x (n, 1, S, S)
        sun = cos_zenith_from_terms(terms, *trig).clamp_(min=0.0)  # (n, 2, S, S)
        if not self.solar_time:
            return sun.float()
        cos_h, sin_h = hour_angle_from_terms(terms, *trig[2:])  # (n, 2, S, S) each
        return torch.stack([sun, cos_h, sin_h], dim=2).flatten(1, 2).float()  # (n, 6, S, S)

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, 6, n, n)`` -> predictions on every tile pixel ``(n_tiles, C + D, S, S)``."""
        tiles = self.op.gather(x[None].to(self.device))  # (n_tiles, C, S, S)
        return self._forward(tiles, t0, t1)

    def _forward(self, tiles: torch.Tensor, t0, t1) -> torch.Tensor:
        """The network on ``tiles (N, C, S, S)`` (matching ``static_tiles``), ``batch_size`` at
        a time: ``(N, C + D, S, S)``."""
        out = None
        bf16 = self.precision == "bf16"
        for b in range(0, tiles.shape[0], self.batch_size):
            sl = slice(b, b + self.batch_size)
            forcing = self.forcing(t0, t1, sl)  # (batch, 2, S, S), float32
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bf16):
                y = self.pipeline.predict(tiles[sl], forcing, self.static_tiles[sl]).float()
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
