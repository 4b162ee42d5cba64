# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The extended faces' geometry: each face with its ring of width ``halo``, per pixel.

Shared by the training crops (which cut windows of the extended faces) and the rollout (whose
tiles are windows of them too), so both see the same positions and areas.
"""

from __future__ import annotations

import numpy as np

from screamcast.grid.cubed_sphere import xyz_to_latlon
from screamcast.grid.tiling import TileLayout


class ExtendedFaceGeometry:
    """Per extended-face pixel: ring row (or -1), lat/lon and exact area. Computed once."""

    def __init__(self, layout: TileLayout):
        self.layout = layout
        n, H, P = layout.n, layout.halo, layout.padded
        self.ring_row = np.full(6 * P * P, -1, dtype=np.int64)
        self.ring_row[layout.ring_positions] = np.arange(layout.ring_positions.size)
        self.ring_row = self.ring_row.reshape(6, P, P)
        lat = np.empty((6, P, P))
        lon = np.empty((6, P, P))
        lat[:, H : H + n, H : H + n], lon[:, H : H + n, H : H + n] = (
            layout.grid.lat,
            layout.grid.lon,
        )
        ring = layout.ring_mask
        lat[ring], lon[ring] = xyz_to_latlon(layout.ring_target_xyz())
        self.lat, self.lon = lat, lon
        # the extended cells' own areas, past the face edge too: (P, P), the same on every face
        self.area = layout.grid.extended_area(-H, P).astype(np.float32)
