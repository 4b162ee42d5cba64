# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Cube fields onto the points of a regular lat-lon grid (pure numpy + scikit-learn).

Two maps, for two uses:

- :class:`PointsToLatLon` interpolates: inverse-distance weights from the ``k`` nearest source
  points. Spectra use it (cube -> Driscoll-Healy grid, and a lat-lon truth -> the same grid).
- :class:`CubeToLatLonMean` averages: each lat-lon point takes the area-weighted mean of the
  cube cells nearest to it (its Voronoi cell's cube cells), falling back to interpolation at
  points no cube cell is nearest to (where the lat-lon grid is finer than the cube, e.g. near
  the poles). Scoring a cube rollout against a coarser lat-lon truth (a reanalysis) then
  compares like with like: the prediction's average over the truth's cell, not its value at
  one point, which would alias the cube's small scales into the score.
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.regrid import latlon_points, nearest_map


class PointsToLatLon:
    """Inverse-distance weights from source points ``xyz (N, 3)`` (unit vectors) to the points
    of the grid ``lat (nlat,) x lon (nlon,)`` (degrees), built once."""

    def __init__(self, xyz: np.ndarray, lat: np.ndarray, lon: np.ndarray, k: int = 4):
        lat2, lon2 = np.meshgrid(lat, lon, indexing="ij")
        targets = latlon_to_xyz(lat2.ravel(), lon2.ravel())  # (P, 3)
        nn = NearestNeighbors(n_neighbors=k).fit(np.asarray(xyz).reshape(-1, 3))
        dist, self.index = nn.kneighbors(targets)  # (P, k) each
        w = 1.0 / np.maximum(dist, 1e-12)
        self.weights = w / w.sum(axis=1, keepdims=True)  # (P, k), rows sum to 1
        self.shape = lat2.shape

    def __call__(self, field: np.ndarray) -> np.ndarray:
        """``(N,)`` (or any shape holding N values) ``-> (nlat, nlon)``."""
        flat = np.asarray(field, dtype=np.float64).reshape(-1)
        return (flat[self.index] * self.weights).sum(axis=1).reshape(self.shape)


class CubeToLatLon(PointsToLatLon):
    """:class:`PointsToLatLon` from the cube's cell centres: ``(6, n, n) -> (nlat, nlon)``."""

    def __init__(self, grid: PhysicsGrid, lat: np.ndarray, lon: np.ndarray, k: int = 4):
        super().__init__(grid.xyz.reshape(-1, 3), lat, lon, k)
        self.grid = grid


class CubeToLatLonMean:
    """``(..., 6, n, n) -> (..., nlat, nlon)``: the mean of each point's cube cells, or the
    interpolation where it has none (``interpolated`` counts those points)."""

    def __init__(self, grid: PhysicsGrid, lat: np.ndarray, lon: np.ndarray):
        plat, plon = latlon_points(lat, lon)  # (P,) each, lat-major
        self.shape = (np.size(lat), np.size(lon))
        self.P = plat.size
        self.source = nearest_map(grid, plat, plon).source.ravel()  # (6 n n,) point of a cell
        self.area = grid.area.ravel()  # (6 n n,)
        weight = np.bincount(self.source, weights=self.area, minlength=self.P)  # (P,)
        self.has_cells = weight > 0
        self.weight = np.where(self.has_cells, weight, 1.0)
        self.interpolated = int((~self.has_cells).sum())
        self._idw = None
        if self.interpolated:
            self._idw = CubeToLatLon(grid, np.asarray(lat), np.asarray(lon))

    def _one(self, field: np.ndarray) -> np.ndarray:
        flat = np.asarray(field, np.float64).reshape(-1)  # (6 n n,)
        mean = np.bincount(self.source, weights=flat * self.area, minlength=self.P) / self.weight
        if self._idw is not None:
            mean = np.where(self.has_cells, mean, self._idw(flat).ravel())
        return mean.reshape(self.shape)  # (nlat, nlon)

    def __call__(self, fields: np.ndarray) -> np.ndarray:
        fields = np.asarray(fields)
        lead = fields.shape[:-3]
        flat = fields.reshape(-1, *fields.shape[-3:])  # (M, 6, n, n)
        out = np.stack([self._one(f) for f in flat])  # (M, nlat, nlon)
        return out.reshape(*lead, *self.shape)


def latlon_cell_area(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Areas on the unit sphere of the cells of a regular grid ``(nlat, nlon)``: bounds half
    way between points (half a spacing past the ends, clipped at the poles), so a global grid's
    areas sum to 4 pi and a pole row (lat = +-90) gets its half-cell cap."""
    lat, lon = np.asarray(lat, float), np.asarray(lon, float)

    def bounds(x: np.ndarray) -> np.ndarray:
        if x.size == 1:
            return np.array([x[0] - 0.5, x[0] + 0.5])
        mid = 0.5 * (x[1:] + x[:-1])
        return np.concatenate([[2 * x[0] - mid[0]], mid, [2 * x[-1] - mid[-1]]])

    lat_b = np.radians(np.clip(bounds(lat), -90.0, 90.0))  # (nlat + 1,)
    lon_b = np.radians(bounds(lon))  # (nlon + 1,)
    band = np.abs(np.diff(np.sin(lat_b)))  # (nlat,)
    width = np.abs(np.diff(lon_b))  # (nlon,)
    return band[:, None] * width[None, :]
