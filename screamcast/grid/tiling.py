# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Tiles with halos on the cubed sphere, and where every halo pixel's value comes from.

Each face is padded with a ring of width ``halo`` (the *extended face*, ``n + 2*halo`` square).
Tiles are ``tile + 2*halo`` windows of the extended face at stride ``tile``. Inside the face a
pixel is its own source (weight 1). A ring pixel lies past the face edge: its target point is
the extension of the face's grid (E3SM's element lattice continued along the face's great
circles, :meth:`PhysicsGrid.extended_xyz`), which falls between the neighbour face's cell
centres, so its value is an inverse-distance-weighted mean of its ``k`` nearest cell centres on
the other faces (scikit-learn ``NearestNeighbors`` on unit vectors).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from sklearn.neighbors import NearestNeighbors

from screamcast.grid.cubed_sphere import CubedSphereGrid
from screamcast.grid.physics import PhysicsGrid


class TileLayout:
    """Tiles of ``tile x tile`` pixels with a halo of ``halo`` on every face of ``grid``.

    Tiles are numbered face-major, then tile row, then tile column:
    ``t = (face * tiles_per_side + ty) * tiles_per_side + tx``.
    """

    def __init__(
        self,
        grid: PhysicsGrid | CubedSphereGrid,
        tile: int,
        halo: int,
        k: int = 2,
        power: float = 1.0,
    ):
        n = grid.n
        for name, value, low in (("tile", tile, 1), ("halo", halo, 0), ("k", k, 1)):
            if not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"TileLayout: {name} must be an integer >= {low}, got {value!r}")
        if n % tile:
            raise ValueError(f"TileLayout: tile={tile} does not divide the face size n={n}")
        if halo > n // 2:
            raise ValueError(
                f"TileLayout: halo={halo} exceeds what one neighbour face can supply "
                f"(at most n // 2 = {n // 2} for n={n}: past that the gnomonic extension "
                "of a face runs beyond the neighbour face's centre)"
            )
        if power <= 0:
            raise ValueError(f"TileLayout: power must be positive, got {power!r}")
        self.grid, self.tile, self.halo, self.k, self.power = grid, int(tile), int(halo), k, power

    def __repr__(self) -> str:
        return (
            f"TileLayout(n={self.n}, tile={self.tile}, halo={self.halo}, k={self.k}, "
            f"power={self.power})"
        )

    @property
    def n(self) -> int:
        return self.grid.n

    @property
    def size(self) -> int:
        """Side of a tile with its halo, ``tile + 2 * halo``."""
        return self.tile + 2 * self.halo

    @property
    def padded(self) -> int:
        """Side of an extended face, ``n + 2 * halo``."""
        return self.n + 2 * self.halo

    @property
    def tiles_per_side(self) -> int:
        return self.n // self.tile

    @property
    def n_tiles(self) -> int:
        return 6 * self.tiles_per_side**2

    def tile_origins(self) -> np.ndarray:
        """``(n_tiles, 3)`` of ``(face, y0, x0)``: each tile window's top-left in the extended face
        (equal to the tile interior's top-left in face coordinates)."""
        m = self.tiles_per_side
        f, ty, tx = np.meshgrid(np.arange(6), np.arange(m), np.arange(m), indexing="ij")
        return np.stack([f.ravel(), ty.ravel() * self.tile, tx.ravel() * self.tile], axis=1)

    @cached_property
    def ring_mask(self) -> np.ndarray:
        """``(6, P, P)`` True where an extended-face pixel lies outside its face (P = padded)."""
        i = np.arange(self.padded) - self.halo
        inside = (i >= 0) & (i < self.n)
        ring = ~(inside[:, None] & inside[None, :])
        return np.broadcast_to(ring, (6, self.padded, self.padded)).copy()

    def ring_target_xyz(self) -> np.ndarray:
        """Unit vectors of the ring pixels' target points, ``(R, 3)`` in ``ring_mask`` order."""
        f, py, px = np.nonzero(self.ring_mask)
        return self.grid.extended_xyz(f, px - self.halo, py - self.halo)

    @cached_property
    def _ring(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(flat ring positions in (6, P, P), source indices (R, k), IDW weights (R, k))."""
        pos = np.flatnonzero(self.ring_mask)
        if pos.size == 0:
            empty = np.zeros((0, self.k))
            return pos, empty.astype(np.int64), empty
        face_of_ring = pos // (self.padded**2)
        targets = self.ring_target_xyz()  # (R, 3)
        # Candidates: a strip of every face a few halo widths deep; it holds the same nearest
        # neighbours as the whole face at a fraction of the cost.
        strip = self.grid.edge_mask(self.halo + 2).reshape(-1)
        cand = np.flatnonzero(strip)
        cand_xyz = self.grid.xyz.reshape(-1, 3)[cand]  # (Nc, 3)
        cand_face = cand // (self.n**2)
        idx = np.empty((pos.size, self.k), dtype=np.int64)
        dist = np.empty((pos.size, self.k))
        for f in range(6):
            rows = np.flatnonzero(face_of_ring == f)
            other = cand_face != f  # a point past face f's edge lies on another face
            nn = NearestNeighbors(n_neighbors=self.k).fit(cand_xyz[other])
            chord, j = nn.kneighbors(targets[rows])
            idx[rows] = cand[other][j]
            dist[rows] = 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))  # great-circle
        return pos, idx, inverse_distance_weights(dist, self.power)

    @property
    def ring_positions(self) -> np.ndarray:
        """Flat indices of the ring pixels into the ``(6, P, P)`` extended faces, ``(R,)``."""
        return self._ring[0]

    @property
    def ring_sources(self) -> np.ndarray:
        """Flat indices into the ``(6, n, n)`` field of each ring pixel's neighbours, ``(R, k)``."""
        return self._ring[1]

    @property
    def ring_weights(self) -> np.ndarray:
        """Inverse-distance weights matching ``ring_sources`` (each row sums to 1), ``(R, k)``."""
        return self._ring[2]

    def extended_sources(self) -> tuple[np.ndarray, np.ndarray]:
        """Sources of every extended-face pixel: ``idx, w`` of shape ``(k, 6 * P * P)``.

        Interior pixels copy themselves (weight 1 in row 0, zero weight elsewhere).
        """
        P, H, n = self.padded, self.halo, self.n
        f, py, px = np.meshgrid(np.arange(6), np.arange(P), np.arange(P), indexing="ij")
        own = (f * n + np.clip(py - H, 0, n - 1)) * n + np.clip(px - H, 0, n - 1)
        idx = np.zeros((self.k, 6 * P * P), dtype=np.int64)
        w = np.zeros((self.k, 6 * P * P))
        idx[:] = own.reshape(-1)
        w[0] = 1.0
        pos = self.ring_positions
        w[:, pos] = self.ring_weights.T
        idx[:, pos] = self.ring_sources.T
        return idx, w

    def tile_pixel_positions(self) -> np.ndarray:
        """Flat index into the ``(6, P, P)`` extended faces of every tile pixel,
        ``(n_tiles, S, S)`` with ``S = tile + 2 * halo``."""
        o = self.tile_origins()  # (n_tiles, 3)
        s = np.arange(self.size)
        py = o[:, 1, None, None] + s[None, :, None]  # (n_tiles, S, 1)
        px = o[:, 2, None, None] + s[None, None, :]  # (n_tiles, 1, S)
        return (o[:, 0, None, None] * self.padded + py) * self.padded + px

    def tile_sources(self) -> tuple[np.ndarray, np.ndarray]:
        """The gather operator ``G`` as ``idx, w`` of shape ``(k, n_tiles * S * S)``.

        The slow, explicit form of what ``HaloOperator`` computes: useful as a reference.
        """
        idx, w = self.extended_sources()
        pos = self.tile_pixel_positions().reshape(-1)
        return idx[:, pos], w[:, pos]

    def cross_face_mask(self) -> np.ndarray:
        """``(n_tiles, S, S)`` True where a tile pixel lies on another face (KNN halo)."""
        return self.ring_mask.reshape(-1)[self.tile_pixel_positions()]


def inverse_distance_weights(dist: np.ndarray, power: float = 1.0) -> np.ndarray:
    """Rows of weights ``(1/d^p) / sum(1/d^p)``; an exact hit (d ~ 0) takes weight 1."""
    dist = np.asarray(dist, dtype=np.float64)
    hit = dist < 1e-12
    with np.errstate(divide="ignore"):
        inv = np.where(hit, 0.0, 1.0 / np.where(hit, 1.0, dist) ** power)
    any_hit = hit.any(axis=1, keepdims=True)
    first_hit = hit & (np.cumsum(hit, axis=1) == 1)
    inv = np.where(any_hit, first_hit.astype(np.float64), inv)
    return inv / inv.sum(axis=1, keepdims=True)
