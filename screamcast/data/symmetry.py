# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Exact symmetries of a forcing that is symmetric in longitude and between the hemispheres
(Held-Suarez), as permutations of the cube's cells: up to 8 training samples from one state.

Rotating the globe's state eastward by ``90 k`` degrees, and mirroring it north-south, gives
another state of the same climate, step for step, when the forcing does not depend on
longitude or on the hemisphere. On a grid that the rotation maps onto itself (E3SM's cubes:
the equatorial faces trade places, the polar faces turn in their plane), each is a
permutation of the cells, found here by matching the moved cell centres to the grid's own
(refused, naming the grid, unless every centre lands on one to 1e-9 of the unit sphere).
Winds in the local east-north frame keep their components under the rotation; under the
mirror the northward component (``V``, and anything odd in latitude) changes sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCE = 1e-9  # unit-sphere distance a moved centre may be from a cell's
SYMMETRIES = [(k, m) for m in (False, True) for k in range(4)]  # 8: identity first


def _unit(lat_deg: np.ndarray, lon_deg: np.ndarray) -> np.ndarray:
    lat, lon = np.deg2rad(lat_deg).ravel(), np.deg2rad(lon_deg).ravel()
    return np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], -1)


def cell_permutation(grid, quarter_turns: int, mirror: bool) -> np.ndarray:
    """``source (6 n n,)``: the moved field at cell ``c`` is the field at ``source[c]``, for
    the state turned ``quarter_turns`` x 90 degrees east and (``mirror``) north-south."""
    from scipy.spatial import cKDTree

    lat, lon = np.asarray(grid.lat, np.float64), np.asarray(grid.lon, np.float64)
    # the value now at (lat, lon) was at (+-lat, lon - 90 k)
    came_from = _unit(-lat if mirror else lat, lon - 90.0 * quarter_turns)
    distance, source = cKDTree(_unit(lat, lon)).query(came_from)
    shared = int((np.bincount(source) > 1).sum())  # cells two or more land on
    if distance.max() > TOLERANCE or shared:
        why = f"a centre {distance.max():.3g} from any cell"
        if distance.max() <= TOLERANCE:
            why = f"two cells land on one, at {shared} places"
        raise ValueError(
            f"grid {getattr(grid, 'name', '?')} does not map onto itself under a turn of "
            f"{90 * quarter_turns} degrees{' and the mirror' if mirror else ''} ({why}): the "
            "symmetry augmentation needs a grid that does (E3SM's ne*pg* cubes do)"
        )
    return source


@dataclass
class SymmetryAugment:
    """``(x (..., C, 6, n, n), index) -> x moved by symmetry ``index % 8``; ``odd``: the
    channels (by variable name, ``V`` for ``V[2]``) whose sign the mirror flips."""

    grid: object
    names: list[str]
    odd: tuple[str, ...] = ("V", "v")
    mirror: bool = True

    def __post_init__(self):
        chosen = [s for s in SYMMETRIES if self.mirror or not s[1]]
        self.permutations = [cell_permutation(self.grid, k, m) for k, m in chosen]
        self.mirrored = [m for _, m in chosen]
        odd = {n.split("[")[0] for n in self.odd}
        self.sign = np.array([-1.0 if n.split("[")[0] in odd else 1.0 for n in self.names])

    def __len__(self) -> int:
        return len(self.permutations)

    def __call__(self, x: np.ndarray, which: int) -> np.ndarray:
        which %= len(self)
        if which == 0:
            return x
        flat = x.reshape(*x.shape[:-3], -1)  # (..., C, 6 n n)
        moved = flat[..., self.permutations[which]].reshape(x.shape)
        if self.mirrored[which]:
            channels = x.shape[-4]  # (..., C, 6, n, n): sign per channel of the first C
            sign = self.sign[:channels].reshape(-1, 1, 1, 1).astype(x.dtype)
            moved = moved * sign
        return moved
