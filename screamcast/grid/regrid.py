# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Put a field given on other points (a regular lat-lon reference) onto the cube.

Nearest-neighbour (scikit-learn on unit vectors), as ``reference/nudging.md`` asks: every cube
cell takes the value of the reference point nearest to it. Cube cells that share their nearest
reference point form a *group*; averaging over the groups keeps exactly the scales the
reference resolves, which is the large-scale projection of nudging toward that reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.neighbors import NearestNeighbors

from screamcast.grid.cubed_sphere import CubedSphereGrid, latlon_to_xyz


@dataclass(frozen=True)
class NearestMap:
    """Where each cube cell takes its reference value from, and the groups that share one.

    ``source (6, n, n)``: index into the flattened reference points; ``group (6, n, n)``:
    ``0 .. n_groups - 1``, one per reference point that is nearest to at least one cell;
    ``group_area (n_groups,)``: the cube area of each group (unit sphere).
    """

    source: np.ndarray
    group: np.ndarray
    group_area: np.ndarray
    max_distance_deg: float

    @property
    def n_groups(self) -> int:
        return int(self.group_area.size)


def latlon_points(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of a regular grid from its 1-D axes, flattened lat-major (as ``(lat, lon)``
    arrays are stored): ``(nlat * nlon,)`` each, in degrees."""
    lat2, lon2 = np.meshgrid(np.asarray(lat, float), np.asarray(lon, float), indexing="ij")
    return lat2.ravel(), lon2.ravel()


def nearest_map(grid: CubedSphereGrid, lat: np.ndarray, lon: np.ndarray) -> NearestMap:
    """The nearest of the points ``(lat, lon)`` (degrees, any shape, flattened) to every cell."""
    lat, lon = np.ravel(lat), np.ravel(lon)
    if lat.shape != lon.shape or lat.size == 0:
        raise ValueError(f"nearest_map: lat and lon must be non-empty and of one shape, got "
                         f"{lat.shape} and {lon.shape}")  # fmt: skip
    nn = NearestNeighbors(n_neighbors=1).fit(latlon_to_xyz(lat, lon))
    chord, j = nn.kneighbors(grid.xyz.reshape(-1, 3))  # (6 n n, 1) each
    source = j[:, 0].reshape(6, grid.n, grid.n)
    used, group = np.unique(source, return_inverse=True)
    group = group.reshape(source.shape)
    area = np.bincount(group.ravel(), weights=grid.area.ravel(), minlength=used.size)
    distance = np.degrees(2.0 * np.arcsin(np.minimum(chord.max() / 2.0, 1.0)))
    return NearestMap(source, group, area, float(distance))
