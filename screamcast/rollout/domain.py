# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Which rank owns which part of the cube, and what each step's exchanges move (numpy, built
once, the same way on every rank: no negotiation).

A rollout on ``world`` ranks gives each a :class:`Block`: whole faces when ``world <= 6``
(faces ``[r * 6 // world, (r + 1) * 6 // world)``), else one face's band of tile rows
(``world`` a multiple of 6, each face cut into ``world / 6`` bands). A rank keeps only its
block's state. Per step (:class:`~screamcast.rollout.exchange_plan.ExchangePlan`):

- **halo** (before the forward): the pixels its tiles' windows read that other ranks own: the
  rows just above and below a band, and the KNN sources of its rings on other ranks;
- **overlap** (with the halo adjoint, bands only): the rows of a neighbour band's tile
  predictions that fall on the rows this rank reassembles;
- **cross-face adjoint** (with ``cross_face``): its rings' weighted predictions whose KNN
  source another rank owns, sent to that owner, which adds them in the single-rank operator's
  order.

A rank *reassembles* its block's interior rows and, on a face's first (last) band, the ring
rows above (below) the face: every extended-face pixel has one owner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from screamcast.grid.tiling import TileLayout


@dataclass(frozen=True)
class Block:
    """Tile rows ``rows`` of each face in ``faces`` (every row when a rank holds whole faces)."""

    faces: range
    rows: range  # tile rows

    def pixel_rows(self, tile: int) -> slice:
        return slice(self.rows.start * tile, self.rows.stop * tile)

    def tiles(self, m: int) -> np.ndarray:
        """Indices of its tiles in the layout's face-major order, ``(F * rows * m,)``."""
        f = np.arange(self.faces.start, self.faces.stop)[:, None, None]
        ty = np.arange(self.rows.start, self.rows.stop)[None, :, None]
        return ((f * m + ty) * m + np.arange(m)[None, None, :]).ravel()

    def describe(self, tile: int) -> str:
        faces = f"faces {self.faces.start} to {self.faces.stop - 1}"
        if len(self.faces) == 1:
            faces = f"face {self.faces.start}"
        rows = self.pixel_rows(tile)
        return f"{faces}, rows {rows.start} to {rows.stop - 1}"


def blocks(world: int, m: int) -> list[Block]:
    """Every rank's block for ``world`` ranks on faces of ``m`` tile rows."""
    if world < 1:
        raise ValueError(f"a rollout needs at least one rank, got {world}")
    if world <= 6:
        return [Block(range(r * 6 // world, (r + 1) * 6 // world), range(m)) for r in range(world)]
    s = world // 6
    if world % 6 or s > m:
        raise ValueError(
            f"a rollout on more than 6 ranks cuts each face into bands of tile rows: the ranks "
            f"must be a multiple of 6 and at most 6 x {m} (a face's tile rows), got {world}"
        )
    bands = [range(j * m // s, (j + 1) * m // s) for j in range(s)]  # tile rows
    return [Block(range(r // s, r // s + 1), bands[r % s]) for r in range(world)]


def chunk_rows(world: int, layout: TileLayout) -> int:
    """The output's chunk height for ``world`` ranks: every block a whole number of chunks."""
    T = layout.tile
    edges = [e for b in blocks(world, layout.tiles_per_side) for e in (b.rows.start, b.rows.stop)]
    return T * math.gcd(*edges)


class Ownership:
    """Who owns each pixel: interior ones by tile row; an extended face's ring rows by the
    band they continue (the first band the rows above the face, the last those below)."""

    def __init__(self, layout: TileLayout, world: int):
        m = layout.tiles_per_side
        self.layout, self.world, self.blocks = layout, world, blocks(world, m)
        self.row_owner = np.empty((6, m), dtype=np.int64)  # (6, m): per tile row
        for r, b in enumerate(self.blocks):
            self.row_owner[b.faces.start : b.faces.stop, b.rows.start : b.rows.stop] = r

    def of_pixels(self, flat: np.ndarray) -> np.ndarray:
        """Owners of flat interior pixels of ``(6, n, n)``."""
        n, T = self.layout.n, self.layout.tile
        f, y = flat // (n * n), flat % (n * n) // n
        return self.row_owner[f, y // T]

    def of_padded(self, face: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Owners of extended-face pixels on ``face`` at padded ``row`` (ring or interior)."""
        L = self.layout
        ty = np.clip((row - L.halo) // L.tile, 0, L.tiles_per_side - 1)
        return self.row_owner[face, ty]

    def reassembled_rows(self, rank: int) -> tuple[int, int]:
        """Padded rows ``[o0, o1)`` whose overlap-add rank ``rank`` owns, on each of its faces."""
        L, b = self.layout, self.blocks[rank]
        T, H, m = L.tile, L.halo, L.tiles_per_side
        o0 = 0 if b.rows.start == 0 else b.rows.start * T + H
        o1 = L.padded if b.rows.stop == m else b.rows.stop * T + H
        return o0, o1

    def covering_tiles(self, rank: int) -> range:
        """The tile rows whose windows reach its reassembled rows."""
        L = self.layout
        o0, o1 = self.reassembled_rows(rank)
        lo = max(0, (o0 - L.size) // L.tile + 1)
        return range(lo, min(L.tiles_per_side - 1, (o1 - 1) // L.tile) + 1)

    def window_rows(self, ty: int, rank: int) -> tuple[int, int]:
        """Rows ``[r0, r1)`` of tile row ``ty``'s windows on rank ``rank``'s reassembled rows."""
        o0, o1 = self.reassembled_rows(rank)
        top = ty * self.layout.tile
        return max(o0 - top, 0), min(o1 - top, self.layout.size)
