# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where a rollout is scored: on its own cube, or at the points of a regular lat-lon truth.

Scores are area-weighted sums over the last three axes of ``(V, F, a, b)`` fields
(:mod:`screamcast.metrics`): the cube is ``F, a, b = 6, n, n``; a lat-lon truth is one
"face" ``1, nlat, nlon`` whose cell areas are the lat-lon cells'. The rollout's fields reach a
lat-lon truth by :class:`~screamcast.grid.to_latlon.CubeToLatLonMean` (the mean of the cube
cells in each truth cell), so a coarse truth (a reanalysis) is compared at its own scales.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.to_latlon import CubeToLatLonMean, latlon_cell_area


@dataclass(frozen=True)
class ScoringGrid:
    area: np.ndarray  # (F, a, b), unit sphere
    lat: np.ndarray  # (F, a, b), degrees
    # the rollout's (V, 6, n, n) -> (V, F, a, b); None when scored on the cube itself
    regrid: Callable[[np.ndarray], np.ndarray] | None
    description: str
    coverage: float = 1.0  # the share of the globe scored (a regional lat-lon truth: < 1)

    @classmethod
    def cube(cls, grid: PhysicsGrid) -> ScoringGrid:
        return cls(grid.area, grid.lat, None, f"the output's grid {grid.name}")

    @classmethod
    def latlon(cls, grid: PhysicsGrid, truth: xr.Dataset) -> ScoringGrid:
        """At the points of ``truth``'s ``lat``/``lon`` axes (sorted increasing: see
        :func:`sorted_latlon`)."""
        lat, lon = truth["lat"].values.astype(float), truth["lon"].values.astype(float)
        to_points = CubeToLatLonMean(grid, lat, lon)
        area = latlon_cell_area(lat, lon)[None]  # (1, nlat, nlon)
        lat3 = np.broadcast_to(lat[:, None], area.shape[1:])[None]  # (1, nlat, nlon)

        def regrid(fields: np.ndarray) -> np.ndarray:
            return to_points(fields)[..., None, :, :]  # (V, 1, nlat, nlon)

        share = float(area.sum() / (4 * np.pi))
        text = (
            f"the truth's {lat.size} x {lon.size} lat-lon grid ({100 * share:.1f}% of the "
            f"globe): each truth cell against the mean of the output's {grid.name} cells "
            f"nearest to its point ({to_points.interpolated} points with no such cell "
            "interpolated from the 4 nearest)"
        )
        return cls(area, lat3, regrid, text, share)

    @property
    def on_cube(self) -> bool:
        return self.regrid is None

    def __call__(self, fields: np.ndarray) -> np.ndarray:
        """The rollout's ``(V, 6, n, n)`` where the scores are taken."""
        return fields if self.regrid is None else self.regrid(fields)


def sorted_latlon(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with increasing ``lat`` and ``lon`` (maps are then drawn south to north)."""
    return ds.sortby(["lat", "lon"])


def as_faces(values: np.ndarray) -> np.ndarray:
    """A truth's ``(V, 6, n, n)`` as it is; a lat-lon ``(V, nlat, nlon)`` as ``(V, 1, nlat,
    nlon)``: every score sums over the last three axes."""
    return values if values.ndim == 4 else values[:, None]
