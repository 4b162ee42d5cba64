# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Equiangular gnomonic cubed sphere with E3SM/HOMME face numbering.

Not E3SM's physics grid (that is :mod:`screamcast.grid.physics`, whose cells are not
equiangular): kept for the face geometry both share and for analytic checks.

Arrays are laid out ``(face, y, x)``: ``x`` runs along the face's ``alpha`` axis ``e_a`` and
``y`` along ``beta`` (``e_b``). See ``docs/data.md`` for the face table and
``../shared/reference/cubed-sphere.md`` for the formulas.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

# (e_n, e_a, e_b) per face: outward normal, array-x axis, array-y axis (HOMME order, 0-based).
FACE_AXES = np.array(
    [
        [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        [[0, 1, 0], [-1, 0, 0], [0, 0, 1]],
        [[-1, 0, 0], [0, -1, 0], [0, 0, 1]],
        [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
        [[0, 0, -1], [0, 1, 0], [1, 0, 0]],
        [[0, 0, 1], [0, 1, 0], [-1, 0, 0]],
    ],
    dtype=np.float64,
)  # (face, {n, a, b}, xyz)


def gnomonic_xyz(face: np.ndarray | int, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Unit vectors of face-local angles; valid for |alpha|, |beta| < pi/2 (past the edge too).

    Returns ``(*shape, 3)`` for broadcastable ``face``, ``alpha``, ``beta``.
    """
    face, alpha, beta = np.broadcast_arrays(np.asarray(face), alpha, beta)
    axes = FACE_AXES[face]  # (*shape, 3, 3)
    p = axes[..., 0, :] + np.tan(alpha)[..., None] * axes[..., 1, :]
    p = p + np.tan(beta)[..., None] * axes[..., 2, :]  # (*shape, 3)
    return p / np.linalg.norm(p, axis=-1, keepdims=True)


def xyz_to_face_angles(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse projection: the face a unit vector falls on and its ``(alpha, beta)`` there."""
    xyz = np.asarray(xyz, dtype=np.float64)
    comp = np.argmax(np.abs(xyz), axis=-1)  # (*shape,) dominant axis
    sign = np.take_along_axis(xyz, comp[..., None], axis=-1)[..., 0] > 0
    # Face whose e_n is (+/-) that axis: +x 0, +y 1, -x 2, -y 3, -z 4, +z 5.
    lookup = np.array([[2, 0], [3, 1], [4, 5]])
    face = lookup[comp, sign.astype(int)]
    axes = FACE_AXES[face]  # (*shape, 3, 3)
    dn = np.einsum("...k,...k->...", xyz, axes[..., 0, :])
    alpha = np.arctan(np.einsum("...k,...k->...", xyz, axes[..., 1, :]) / dn)
    beta = np.arctan(np.einsum("...k,...k->...", xyz, axes[..., 2, :]) / dn)
    return face, alpha, beta


def xyz_to_latlon(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Latitude and longitude in degrees (longitude in [0, 360))."""
    lat = np.degrees(np.arcsin(np.clip(xyz[..., 2], -1.0, 1.0)))
    lon = np.degrees(np.arctan2(xyz[..., 1], xyz[..., 0])) % 360.0
    return lat, lon


def latlon_to_xyz(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Unit vectors ``(*shape, 3)`` from latitude/longitude in degrees."""
    phi, lam = np.radians(lat), np.radians(lon)
    return np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], axis=-1)


class FaceCells:
    """What a grid of ``6 x n x n`` cells derives from its cell centres ``xyz (6, n, n, 3)``:
    lat/lon, distances to the face edges, the cell width (both grids below share it)."""

    n: int
    xyz: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        return (6, self.n, self.n)

    @cached_property
    def latlon(self) -> tuple[np.ndarray, np.ndarray]:
        return xyz_to_latlon(self.xyz)

    @property
    def lat(self) -> np.ndarray:
        """Cell-centre latitude in degrees, ``(6, n, n)``."""
        return self.latlon[0]

    @property
    def lon(self) -> np.ndarray:
        """Cell-centre longitude in degrees in [0, 360), ``(6, n, n)``."""
        return self.latlon[1]

    def edge_distance(self) -> np.ndarray:
        """Pixels between each cell and the nearest face edge (0 on the edge row), ``(6, n, n)``."""
        i = np.arange(self.n)
        d1 = np.minimum(i, self.n - 1 - i)
        return np.broadcast_to(np.minimum(d1[:, None], d1[None, :]), self.shape).copy()

    def edge_mask(self, d: int) -> np.ndarray:
        """True for the pixels within ``d`` rows of a face edge (``d=1``: the outermost ring)."""
        return self.edge_distance() < d

    def cell_width(self) -> float:
        """Smallest great-circle distance between adjacent cell centres on a face."""
        xyz = self.xyz[0]
        along_x = np.linalg.norm(xyz[:, 1:] - xyz[:, :-1], axis=-1)
        return float(2.0 * np.arcsin(along_x.min() / 2.0))


class CubedSphereGrid(FaceCells):
    """The ``6 x n x n`` equiangular cubed-sphere grid of face size ``n``."""

    def __init__(self, n: int):
        if not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError(f"CubedSphereGrid: face size n must be a positive integer, got {n!r}")
        self.n = int(n)

    def __repr__(self) -> str:
        return f"CubedSphereGrid(n={self.n})"

    @property
    def dalpha(self) -> float:
        """Angular cell width on the face, radians."""
        return 0.5 * np.pi / self.n

    def centre_angles(self, index: np.ndarray) -> np.ndarray:
        """Face-local angle of cell centre ``index`` (any integer, also past the face edge)."""
        return -0.25 * np.pi + (np.asarray(index, dtype=np.float64) + 0.5) * self.dalpha

    @cached_property
    def xyz(self) -> np.ndarray:
        """Cell-centre unit vectors, ``(6, n, n, 3)``."""
        a = self.centre_angles(np.arange(self.n))
        face = np.arange(6)[:, None, None]
        return gnomonic_xyz(face, a[None, None, :], a[None, :, None])  # (face, y, x, 3)

    @cached_property
    def area(self) -> np.ndarray:
        """Exact spherical cell areas on the unit sphere, ``(6, n, n)``; they sum to 4 pi."""
        cell = self.face_cell_areas(np.arange(self.n + 1))  # (n, n)
        return np.broadcast_to(cell, self.shape).copy()

    def face_cell_areas(self, edge_index: np.ndarray) -> np.ndarray:
        """Exact areas of the cells between consecutive cell edges ``edge_index`` (the same
        along x and y; indices past ``0..n`` give the gnomonic extension past the face edge).

        The spherical area of the gnomonic rectangle ``[0, X] x [0, Y]`` is
        ``atan(X Y / sqrt(1 + X^2 + Y^2))``; a cell is the usual four-corner difference.
        """
        edges = np.tan(-0.25 * np.pi + np.asarray(edge_index) * self.dalpha)
        X, Y = edges[None, :], edges[:, None]  # corners: (y, x)
        F = np.arctan(X * Y / np.sqrt(1.0 + X**2 + Y**2))
        return F[1:, 1:] - F[1:, :-1] - F[:-1, 1:] + F[:-1, :-1]

    def extended_xyz(self, face, ix, iy) -> np.ndarray:
        """Centres of cells ``(ix, iy)``, also past the face edge, ``(*shape, 3)``."""
        return gnomonic_xyz(face, self.centre_angles(ix), self.centre_angles(iy))

    def extended_area(self, first: int, count: int) -> np.ndarray:
        """Areas of the ``count x count`` cells from index ``first``, ``(y, x)``."""
        return self.face_cell_areas(np.arange(first, first + count + 1))
