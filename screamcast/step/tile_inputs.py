# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The inputs of the network besides the state on a set of tiles: the static fields with the
position features (computed once), and the forcing of each step (the insolation, evaluated on
the device). One builder for the rollout's tiles and training through the global step."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.data.forcing import (
    extended_position_features,
    forcing_fields,
    forcing_names,
    solar_terms,
    trig_channels,
)
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.tiling import TileLayout
from screamcast.halo import HaloOperator


class TileInputs:
    """``static_tiles (n_tiles, F + K, S, S)``: the store's static fields, then the ``K``
    position features (:func:`screamcast.data.forcing.position_names`), among them sin, cos
    of latitude and of longitude: the insolation's inputs (``trig``, their channels)."""

    def __init__(
        self,
        pipeline,
        layout: TileLayout,
        static: np.ndarray,
        op: HaloOperator,
        tiles: np.ndarray | None = None,
    ):
        """``tiles``: the indices of the tiles to build (one rank's block; default all): a
        rank of a production grid keeps its own tiles' inputs, not the globe's."""
        self.forcing_names = forcing_names(pipeline.solar_time, pipeline.insolation)
        self.device = op.device
        pos = layout.tile_pixel_positions()  # (n_tiles, S, S) into the (6, P, P) extended faces
        pos = pos if tiles is None else pos[np.asarray(tiles)]  # (nt, S, S): the tiles built
        feats = extended_position_features(ExtendedFaceGeometry(layout), pipeline.grid_metric)
        parts = [torch.as_tensor(feats.reshape(len(feats), -1)[:, pos])]  # (K, nt, S, S)
        if len(static):  # a model may have no static inputs
            st = torch.as_tensor(static, dtype=torch.float32, device=op.device)[None]
            ext = op.extend(st)[0].flatten(1)  # (1, F, 6, n, n) -> (F, 6 P P), halos filled
            parts.insert(0, ext[:, torch.as_tensor(pos, device=op.device)])  # (F, nt, S, S)
        parts = [p.to(self.device).transpose(0, 1) for p in parts]  # (nt, ., S, S) each
        self.static_tiles = torch.cat(parts, dim=1)  # (nt, F + K, S, S)
        self.trig = trig_channels(len(static), pipeline.grid_metric)

    def forcing(self, t0, t1, tiles=slice(None)) -> torch.Tensor:
        """The forcing channels (:func:`~screamcast.data.forcing.forcing_names`) at t, then
        at t+1, on the ``tiles`` (a slice): ``(n, 2 Fc, S, S)``; ``Fc`` is 1 (the insolation
        / S0), 3 for a ``solar_time`` model (with cos, sin of the hour angle), 0 without a sun.

        Evaluated on the device from the tiles' float32 position features, in float64, by the
        builder the training crops use (the same values bit for bit); only the solar terms of
        the two times come from the host. (On the host, a production grid's 57M tile pixels
        would take seconds per step, longer than the network's forwards on a GPU.)
        """
        static = self.static_tiles[tiles]  # (n, F + K, S, S)
        if not self.forcing_names:  # a model of a world without a sun takes no forcing
            return static.new_zeros((len(static), 0, *static.shape[-2:]))
        wide = torch.float32 if self.device.type == "mps" else torch.float64  # MPS: no float64
        terms = [
            torch.as_tensor(v, dtype=wide, device=self.device).view(1, 2, 1, 1)
            for v in solar_terms(np.array([t0, t1]))
        ]
        trig = static[:, self.trig, None].to(wide).unbind(1)  # 4 x (n, 1, S, S)
        fields = forcing_fields(self.forcing_names, terms, trig)  # Fc x (n, 2, S, S)
        stacked = torch.stack(fields, dim=2)  # (n, 2, Fc, S, S)
        return stacked.flatten(1, 2).float()  # (n, 2 Fc, S, S)
