# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""E3SM's physics grid ``ne<NE>pg<PG>``: the cells SCREAM's ``ncol`` columns are.

Each face is cut into ``ne x ne`` spectral elements whose corners are equiangular; each element
into ``pg x pg`` cells by the 3-D bilinear interpolation of its corner unit vectors (E3SM's
``cubed_sphere_map = 2``). So the cells are *not* an equiangular grid of size ``n = ne * pg``
(4% of a cell off at ne4pg2, ~1% at ne30pg2). Centres are normalised corner means, areas
spherical quadrilaterals. ``../shared/reference/e3sm-physics-grid.md`` has the formulas;
``tests/grid/test_physics.py`` checks every cell against E3SM's own grid files.

Cell indices may run past the face edge (``-halo .. n + halo - 1``): the element lattice is
then extended along the face's own great circles, which is where a halo pixel lies.
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from screamcast.grid.cubed_sphere import FACE_AXES, FaceCells

_NAME = re.compile(r"^ne(\d+)pg(\d+)$")


def _normalise(p: np.ndarray) -> np.ndarray:
    return p / np.linalg.norm(p, axis=-1, keepdims=True)


def spherical_triangle_area(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Area of the great-circle triangles ``(..., 3)`` of unit vectors (Van Oosterom and
    Strackee: ``tan(E / 2) = |a . (b x c)| / (1 + a.b + b.c + c.a)``), exact to rounding."""
    num = np.abs(np.einsum("...k,...k->...", a, np.cross(b, c)))
    dots = (a * b).sum(-1) + (b * c).sum(-1) + (c * a).sum(-1)
    return 2.0 * np.arctan2(num, 1.0 + dots)


class PhysicsGrid(FaceCells):
    """The ``6 x n x n`` cells of ``ne<ne>pg<pg>`` (``n = ne * pg``), arrays ``(face, y, x)``
    with ``x`` along the face's ``e_a`` axis and ``y`` along ``e_b`` (HOMME face order)."""

    def __init__(self, ne: int, pg: int = 2):
        for key, value in (("ne", ne), ("pg", pg)):
            if not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"PhysicsGrid: {key} must be a positive integer, got {value!r}")
        self.ne, self.pg = int(ne), int(pg)
        self.n = self.ne * self.pg

    @classmethod
    def from_name(cls, name: str) -> PhysicsGrid:
        """``"ne30pg2"`` -> ``PhysicsGrid(30, 2)``; anything else is refused, naming it."""
        match = _NAME.match(str(name).strip())
        if not match:
            raise ValueError(
                f"grid name {name!r} is not an E3SM physics grid name such as 'ne30pg2' "
                "(ne<elements per face edge>pg<cells per element edge>)"
            )
        return cls(int(match[1]), int(match[2]))

    @classmethod
    def for_face_size(cls, n: int, pg: int = 2) -> PhysicsGrid:
        if n % pg:
            raise ValueError(f"face size n={n} is not a multiple of pg={pg}: no ne{n}/{pg}pg{pg}")
        return cls(n // pg, pg)

    @property
    def name(self) -> str:
        return f"ne{self.ne}pg{self.pg}"

    def __repr__(self) -> str:
        return f"PhysicsGrid({self.name}, n={self.n})"

    def corner_xyz(self, face, cx, cy) -> np.ndarray:
        """Unit vectors of cell corners at integer corner indices ``cx, cy`` (``0..n`` on the
        face, beyond it past the edge), ``(*shape, 3)`` for broadcastable inputs."""
        face, cx, cy = np.broadcast_arrays(np.asarray(face), np.asarray(cx), np.asarray(cy))
        ex, ey = np.floor_divide(cx, self.pg), np.floor_divide(cy, self.pg)  # element corner
        s = ((cx - ex * self.pg) / self.pg)[..., None]  # position inside the element, [0, 1)
        t = ((cy - ey * self.pg) / self.pg)[..., None]
        c00, c10 = self._element_corner(face, ex, ey), self._element_corner(face, ex + 1, ey)
        c01, c11 = (
            self._element_corner(face, ex, ey + 1),
            self._element_corner(face, ex + 1, ey + 1),
        )
        p = (1 - s) * (1 - t) * c00 + s * (1 - t) * c10 + (1 - s) * t * c01 + s * t * c11
        return _normalise(p)

    def _element_corner(self, face, kx, ky) -> np.ndarray:
        """Equiangular element corners (unit vectors), ``(*shape, 3)``."""
        axes = FACE_AXES[face]  # (*shape, 3, 3)
        X = np.tan(-0.25 * np.pi + kx * (0.5 * np.pi / self.ne))[..., None]
        Y = np.tan(-0.25 * np.pi + ky * (0.5 * np.pi / self.ne))[..., None]
        return _normalise(axes[..., 0, :] + X * axes[..., 1, :] + Y * axes[..., 2, :])

    def cell_corners(self, face, ix, iy) -> np.ndarray:
        """The four corners of cells ``(ix, iy)``, counter-clockwise from the one at the
        lowest ``x, y`` (SCRIP's order), ``(*shape, 4, 3)``."""
        face, ix, iy = np.broadcast_arrays(np.asarray(face), np.asarray(ix), np.asarray(iy))
        offsets = ((0, 0), (1, 0), (1, 1), (0, 1))
        return np.stack([self.corner_xyz(face, ix + a, iy + b) for a, b in offsets], axis=-2)

    def extended_xyz(self, face, ix, iy) -> np.ndarray:
        """Cell centres (normalised corner means) of cells ``(ix, iy)``, ``(*shape, 3)``."""
        return _normalise(self.cell_corners(face, ix, iy).sum(axis=-2))

    def extended_area(self, first: int, count: int) -> np.ndarray:
        """Areas of the ``count x count`` cells from index ``first`` (the same on every face by
        symmetry), ``(y, x)``: with ``first = -halo`` the extended face of a tile layout."""
        i = np.arange(first, first + count)
        return self._areas(self.cell_corners(0, i[None, :], i[:, None]))

    @staticmethod
    def _areas(c: np.ndarray) -> np.ndarray:
        """Spherical quadrilaterals ``(..., 4, 3)`` as two triangles."""
        a, b, cc, d = (c[..., k, :] for k in range(4))
        return spherical_triangle_area(a, b, cc) + spherical_triangle_area(a, cc, d)

    @cached_property
    def corners(self) -> np.ndarray:
        """Cell corners of the whole grid, ``(6, n, n, 4, 3)``."""
        i = np.arange(self.n)
        return self.cell_corners(np.arange(6)[:, None, None], i[None, None, :], i[None, :, None])

    @cached_property
    def xyz(self) -> np.ndarray:
        """Cell-centre unit vectors, ``(6, n, n, 3)``."""
        return _normalise(self.corners.sum(axis=-2))

    @cached_property
    def area(self) -> np.ndarray:
        """Cell areas on the unit sphere (sr), ``(6, n, n)``; they sum to 4 pi."""
        return np.broadcast_to(self.extended_area(0, self.n), self.shape).copy()

    def column_index(self) -> np.ndarray:
        """Flat index into ``(6, n, n)`` of every ``ncol`` column in E3SM's file order,
        ``(6 n^2,)``: ``ncol = ((face*ne + ej)*ne + ei)*pg^2 + sj*pg + si`` with the cell at
        ``x = ei*pg + si``, ``y = ej*pg + sj``."""
        ne, pg = self.ne, self.pg
        face, ej, ei, sj, si = np.meshgrid(
            np.arange(6), np.arange(ne), np.arange(ne), np.arange(pg), np.arange(pg), indexing="ij"
        )  # each (6, ne, ne, pg, pg), in ncol order when flattened
        y, x = ej * pg + sj, ei * pg + si
        return ((face * self.n + y) * self.n + x).reshape(-1)


def block_mean(field: np.ndarray, area: np.ndarray, factor: int) -> np.ndarray:
    """``(..., 6, n, n) -> (..., 6, n/f, n/f)``: the area-weighted mean over each ``f x f``
    block (``area (6, n, n)``); blocks of whole elements, so they tile the coarse elements."""
    *lead, six, n, _ = field.shape
    m = n // factor
    blocks = (six, m, factor, m, factor)
    a = area.reshape(blocks)
    return (field.reshape(*lead, *blocks) * a).sum(axis=(-3, -1)) / a.sum(axis=(-3, -1))
