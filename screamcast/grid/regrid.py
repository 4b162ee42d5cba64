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

from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid


@dataclass(frozen=True)
class NearestMap:
    """Where each cube cell takes its reference value from, and the groups that share one.

    ``source (6, n, n)``: index into the flattened reference points; ``group (6, n, n)``:
    ``0 .. n_groups - 1``, one per reference point that is nearest to at least one cell;
    ``group_area (n_groups,)``: the cube area of each group's covered cells (unit sphere);
    ``covered (6, n, n)``: cells within ``max_distance_deg`` of their reference point, i.e.
    inside the reference's domain (all of them for a global reference).
    """

    source: np.ndarray
    group: np.ndarray
    group_area: np.ndarray
    max_distance_deg: float
    covered: np.ndarray

    @property
    def covered_fraction(self) -> float:
        """The share of the sphere's area (4 pi) that the reference covers."""
        return float(self.group_area.sum() / (4.0 * np.pi))

    @property
    def n_groups(self) -> int:
        return int(self.group_area.size)


def latlon_points(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of a regular grid from its 1-D axes, flattened lat-major (as ``(lat, lon)``
    arrays are stored): ``(nlat * nlon,)`` each, in degrees."""
    lat2, lon2 = np.meshgrid(np.asarray(lat, float), np.asarray(lon, float), indexing="ij")
    return lat2.ravel(), lon2.ravel()


def regular_spacing_deg(lat: np.ndarray, lon: np.ndarray) -> float:
    """The farthest a point of the sphere inside a regular grid's domain can be from its
    nearest grid point, in degrees: half the diagonal of the largest grid cell (lon spacing
    measured at the equator, where it is largest), with 5% slack for rounding."""
    dlat = np.abs(np.diff(np.asarray(lat, float))).max(initial=0.0)
    dlon = np.abs(np.diff(np.asarray(lon, float))).max(initial=0.0)
    return 1.05 * 0.5 * float(np.hypot(dlat, dlon))


def nearest_map(
    grid: PhysicsGrid, lat: np.ndarray, lon: np.ndarray, max_distance_deg: float | None = None
) -> NearestMap:
    """The nearest of the points ``(lat, lon)`` (degrees, any shape, flattened) to every cell.

    Cells farther than ``max_distance_deg`` from every point lie outside the reference's domain
    (a regional reference) and are not ``covered``. Ties (a cell exactly between two points) are
    broken the same way however the points are listed: -180..180 or 0..360 longitudes, either
    order of the axes.
    """
    lat, lon = np.ravel(lat), np.ravel(lon)
    if lat.shape != lon.shape or lat.size == 0:
        raise ValueError(
            f"nearest_map: lat and lon must be non-empty and of one shape, got "
            f"{lat.shape} and {lon.shape}"
        )
    lon = np.mod(lon, 360.0)  # -90 and 270 give bitwise the same unit vector
    order = np.lexsort((lon, lat))  # a canonical order of the points
    nn = NearestNeighbors(n_neighbors=1).fit(latlon_to_xyz(lat[order], lon[order]))
    chord, j = nn.kneighbors(grid.xyz.reshape(-1, 3))  # (6 n n, 1) each
    distance = np.degrees(2.0 * np.arcsin(np.minimum(chord[:, 0] / 2.0, 1.0)))  # (6 n n,)
    covered = np.ones(distance.shape, bool)
    if max_distance_deg is not None:
        covered = distance <= max_distance_deg
    source = order[j[:, 0]].reshape(6, grid.n, grid.n)
    used, group = np.unique(source, return_inverse=True)
    group = group.reshape(source.shape)
    weights = (grid.area * covered.reshape(source.shape)).ravel()
    area = np.bincount(group.ravel(), weights=weights, minlength=used.size)
    farthest = float(distance[covered].max()) if covered.any() else float("nan")
    return NearestMap(source, group, area, farthest, covered.reshape(source.shape))
