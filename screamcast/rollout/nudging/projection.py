# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a reference resolves of the model's state: the projection ``P`` a nudging relaxes.

- A cube reference coarser by whole elements: the area-weighted mean over each reference
  cell's ``f x f`` block of model cells (the identity when ``f = 1``).
- A regular lat-lon reference: each cube cell's nearest reference point
  (:mod:`screamcast.grid.regrid`), and the area-weighted mean over the cells that share one;
  cells outside a regional reference's domain are not covered.
"""

from __future__ import annotations

import numpy as np
import torch
import xarray as xr

from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.regrid import NearestMap, latlon_points, nearest_map, regular_spacing_deg
from screamcast.rollout.nudging.errors import NudgingError


def block_factor(grid: PhysicsGrid, reference: xr.Dataset, name: str) -> int:
    """How many model cells a reference cell spans along each axis: the reference's grid must
    be the model's coarsened by whole elements (``ne`` a divisor, the same ``pg``), so that its
    elements are unions of the model's."""
    ref = PhysicsGrid.from_name(reference.attrs["grid"])
    if ref.pg != grid.pg or grid.ne % ref.ne:
        raise NudgingError(
            f"{name} is on {ref.name}, which is not {grid.name} coarsened by whole elements "
            f"(its ne must divide {grid.ne} and its pg be {grid.pg})"
        )
    return grid.ne // ref.ne


class BlockProjection:
    """Block means over ``factor x factor`` model cells (a coarser cube reference's cells)."""

    def __init__(self, grid: PhysicsGrid, factor: int):
        self.grid, self.factor = grid, factor
        self._weights: dict[tuple, torch.Tensor] = {}
        self._block_area: torch.Tensor | None = None  # (6, m, m), for misfit

    def weights(self, like: torch.Tensor) -> torch.Tensor:
        """Each model cell's share of its ``f x f`` block's area, ``(6, n, n)``."""
        key = (like.device, like.dtype)
        if key not in self._weights:
            f, n = self.factor, self.grid.n
            area = self.grid.area  # (6, n, n)
            block = area.reshape(6, n // f, f, n // f, f).sum(axis=(2, 4))  # (6, m, m)
            share = area / block.repeat(f, 1).repeat(f, 2)
            self._weights[key] = torch.as_tensor(share, dtype=like.dtype, device=like.device)
        return self._weights[key]

    def coarse(
        self, field: torch.Tensor, like: torch.Tensor, region=(slice(None),)
    ) -> torch.Tensor:
        """``field (F, h, w)`` (the cube's ``region``: faces, rows, cols) -> its block means
        ``(F, h / f, w / f)``."""
        f = self.factor
        F, h, w = field.shape
        share = self.weights(like)[region]  # (F, h, w), summing to 1 over each block
        return (field * share).reshape(F, h // f, f, w // f, f).sum(dim=(2, 4))  # (F, c, d)

    def block_area(self) -> torch.Tensor:
        """``(6, m, m)``: the grid's areas summed over each block (float64), built once."""
        if self._block_area is None:
            f, n = self.factor, self.grid.n
            m = n // f
            area = torch.as_tensor(self.grid.area)
            self._block_area = area.reshape(6, m, f, m, f).sum(dim=(2, 4))  # (6, m, m)
        return self._block_area


class NearestProjection:
    """Group means over the cube cells sharing a nearest point of a lat-lon reference."""

    def __init__(self, grid: PhysicsGrid, reference: xr.Dataset, name: str, partial: str):
        lat1, lon1 = reference["lat"].values, reference["lon"].values
        limit = regular_spacing_deg(lat1, lon1)
        self.grid = grid
        self.map: NearestMap = nearest_map(grid, *latlon_points(lat1, lon1), limit)
        if partial not in ("nudge", "refuse"):
            raise NudgingError(f"partial must be 'nudge' or 'refuse', got {partial!r}")
        covered = self.map.covered_fraction
        if partial == "refuse" and covered < 1.0 - 1e-9:
            raise NudgingError(
                f"{name} covers {100 * covered:.1f}% of the globe (lat {lat1.min():g} to "
                f"{lat1.max():g}, lon {lon1.min():g} to {lon1.max():g}); "
                "a global reference is required"
            )
        self.shape = "x".join(str(reference.sizes[d]) for d in ("lat", "lon"))
        self.nlon = reference.sizes["lon"]
        self._groups: dict[tuple, tuple[torch.Tensor, ...]] = {}

    def box(self, cells: np.ndarray) -> tuple[slice, np.ndarray | slice, np.ndarray]:
        """The smallest box of reference points that ``cells`` (flat in ``(6 n n)``: one
        rank's) take their values from, so that the rank reads only it: its latitude rows, its
        longitude columns (the shortest run around the circle holding them: a slice, or the
        indices of a run across the grid's last longitude), and each cell's point in the box,
        flat in ``(rows, columns)``."""
        i, j = np.divmod(self.map.source.ravel()[cells], self.nlon)  # (cells,) row, column
        lat = slice(int(i.min()), int(i.max()) + 1)
        used = np.unique(j)
        gaps = np.diff(np.append(used, used[0] + self.nlon))  # to the next used, round the circle
        widest = int(np.argmax(gaps))
        start = int(used[(widest + 1) % used.size])  # the run begins after the widest gap
        width = self.nlon - int(gaps[widest]) + 1
        lon = (start + np.arange(width)) % self.nlon
        columns = slice(start, start + width) if start + width <= self.nlon else lon
        return lat, columns, (i - lat.start) * width + (j - start) % self.nlon

    @property
    def description(self) -> str:
        return (
            f"nearest neighbour from the {self.shape} lat-lon grid, mean over the "
            f"{self.map.n_groups} groups of cells sharing a reference point"
        )

    def tensors(self, like: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(source, group, area, group_area, covered)`` on ``like``'s device and dtype."""
        key = (like.device, like.dtype)
        if key not in self._groups:
            m = self.map
            as_long = dict(dtype=torch.long, device=like.device)
            as_like = dict(dtype=like.dtype, device=like.device)
            covered = m.covered.ravel()
            self._groups[key] = (
                torch.as_tensor(m.source.ravel(), **as_long),  # (6 n n,) reference point
                torch.as_tensor(m.group.ravel(), **as_long),  # (6 n n,) group
                torch.as_tensor(self.grid.area.ravel() * covered, **as_like),  # (6 n n,)
                # (groups,) area of the covered cells; 1 for a group with none (never used)
                torch.as_tensor(np.where(m.group_area > 0, m.group_area, 1.0), **as_like),
                torch.as_tensor(covered, dtype=torch.bool, device=like.device),  # (6 n n,)
            )
        return self._groups[key]
