# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The inputs of the network besides the state on a set of tiles: the static fields with the
position features (computed once), and the forcing of each step (the insolation, evaluated on
the device). One builder for the rollout's tiles and training through the global step."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.data.forcing import (
    cos_zenith_from_terms,
    extended_position_features,
    hour_angle_from_terms,
    solar_terms,
)
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.tiling import TileLayout
from screamcast.halo import HaloOperator


class TileInputs:
    """``static_tiles (n_tiles, F + K, S, S)``: the store's static fields, then the ``K``
    position features, whose last four are sin, cos of latitude and of longitude
    (:func:`screamcast.data.forcing.position_features`): the insolation's inputs."""

    def __init__(self, pipeline, layout: TileLayout, static: np.ndarray, op: HaloOperator):
        self.solar_time, self.insolation = pipeline.solar_time, pipeline.insolation
        self.device = op.device
        pos = layout.tile_pixel_positions()  # (n_tiles, S, S) into the (6, P, P) extended faces
        feats = extended_position_features(ExtendedFaceGeometry(layout), pipeline.grid_metric)
        feats = feats.reshape(len(feats), -1)[:, pos]  # (K, 6 P P) -> (K, nt, S, S)
        tiles = [torch.as_tensor(feats, device=self.device).transpose(0, 1)]  # (nt, K, S, S)
        if len(static):  # a model may have no static inputs
            st = torch.as_tensor(static, dtype=torch.float32, device=self.device)[None]
            tiles.insert(0, op.gather(st))  # (1, F, 6, n, n) -> (nt, F, S, S)
        self.static_tiles = torch.cat(tiles, dim=1)  # (nt, F + K, S, S)

    def select(self, tiles: torch.Tensor) -> TileInputs:
        """The inputs of the ``tiles`` (indices) only: one rank's block."""
        out = object.__new__(TileInputs)
        out.__dict__ |= self.__dict__
        out.static_tiles = self.static_tiles[tiles]
        return out

    def forcing(self, t0, t1, tiles=slice(None)) -> torch.Tensor:
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
