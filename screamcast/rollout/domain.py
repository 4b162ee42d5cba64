# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Which rank owns which part of the cube, and what each step's exchanges move (numpy, built
once, the same way on every rank: no negotiation).

A rollout on ``world`` ranks gives each a :class:`Block`, the same rectangle of tiles on
each of a group of faces (:func:`blocks`: every rank the same work): whole faces on 1, 2, 3
and 6 ranks; the top or bottom half of 3 faces on 4; a quarter of 3 faces on 8 (a node's
GPUs); bands of tile rows of one face on 12, 2 x 2 blocks on 24, 4 x 2 on 48 (``a x b``
rectangles a face, ``a >= b``, as near square as the count allows). A rank
keeps only its block's state. Per step
(:class:`~screamcast.rollout.exchange_plan.ExchangePlan`):

- **halo** (before the forward): the pixels its tiles' windows read that other ranks own: the
  strips along its block's sides inside the face, and the KNN sources of its rings on other
  ranks;
- **overlap** (with the halo adjoint, blocks smaller than a face): the parts of a neighbour
  block's tile predictions that fall on the pixels this rank reassembles;
- **cross-face adjoint** (with ``cross_face``): its rings' weighted predictions whose KNN
  source another rank owns, sent to that owner, which adds them in the single-rank operator's
  order.

A rank *reassembles* its block's interior pixels and the ring pixels that continue them past
the face's edge (the block at a face's top owns the ring rows above it, and so on, corners
included): every extended-face pixel has one owner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from screamcast.grid.tiling import TileLayout


@dataclass(frozen=True)
class Block:
    """Tile rows ``rows`` and tile columns ``cols`` of each face in ``faces`` (all of them
    when a rank holds whole faces)."""

    faces: range
    rows: range  # tile rows
    cols: range  # tile columns

    def pixel_rows(self, tile: int) -> slice:
        return slice(self.rows.start * tile, self.rows.stop * tile)

    def pixel_cols(self, tile: int) -> slice:
        return slice(self.cols.start * tile, self.cols.stop * tile)

    def region(self, tile: int) -> tuple[slice, slice, slice]:
        """``(faces, rows, cols)`` of the ``(6, n, n)`` state."""
        faces = slice(self.faces.start, self.faces.stop)
        return faces, self.pixel_rows(tile), self.pixel_cols(tile)

    def tiles(self, m: int) -> np.ndarray:
        """Indices of its tiles in the layout's face-major order, ``(F * rows * cols,)``."""
        f = np.arange(self.faces.start, self.faces.stop)[:, None, None]
        ty = np.arange(self.rows.start, self.rows.stop)[None, :, None]
        tx = np.arange(self.cols.start, self.cols.stop)[None, None, :]
        return ((f * m + ty) * m + tx).ravel()


def interior(count: int, tile: int, halo: int) -> np.ndarray:
    """Which of a block's ``count`` tiles along one axis have windows ``[t T - H, (t + 1) T +
    H)`` inside the block's own pixels, ``(count,)`` bool: their forwards need no halo."""
    t = np.arange(count)
    return (t * tile >= halo) & ((t + 1) * tile + halo <= count * tile)


def split(k: int, m: int) -> tuple[int, int]:
    """``(a, b)``: a face cut into ``a`` rows of ``b`` blocks, ``a * b = k``, ``a >= b``, as
    near square as ``k`` allows (fewer, shorter borders to exchange)."""
    a = next(d for d in range(math.isqrt(k), k + 1) if k % d == 0 and d * d >= k)
    if a > m:
        raise ValueError(
            f"a face of {m} x {m} tiles cannot be cut into {a} x {k // a} blocks of tiles"
        )
    return a, k // a


def blocks(world: int, m: int) -> list[Block]:
    """Every rank's block for ``world`` ranks on faces of ``m x m`` tiles, every rank the
    same number of tiles where ``m`` allows: the faces in ``g = gcd(world, 6)`` groups of
    ``6 / g``, each group's faces cut alike into ``world / g`` rectangles (:func:`split`),
    rank ``r`` the rectangle ``r % (world / g)`` on every face of group ``r // (world / g)``.
    So 1, 2, 3, 6 ranks hold whole faces; 4 ranks half of 3 faces each; 8 a quarter of 3;
    12 half a face; 5 a fifth of all 6. Up to 6 ranks fall back to whole faces (an uneven
    load) on faces too small to cut."""
    if world < 1:
        raise ValueError(f"a rollout needs at least one rank, got {world}")
    groups = math.gcd(world, 6)
    k = world // groups  # rectangles per face
    try:
        a, b = split(k, m)
    except ValueError:
        if world > 6:
            raise
        return [
            Block(range(r * 6 // world, (r + 1) * 6 // world), range(m), range(m))
            for r in range(world)
        ]
    per = 6 // groups  # faces in a group
    rows = [range(j * m // a, (j + 1) * m // a) for j in range(a)]  # tile rows
    cols = [range(j * m // b, (j + 1) * m // b) for j in range(b)]
    out = []
    for r in range(world):
        g, j = divmod(r, k)
        out.append(Block(range(g * per, (g + 1) * per), rows[j // b], cols[j % b]))
    return out


def chunk_shape(world: int, layout: TileLayout) -> tuple[int, int]:
    """The output's chunk ``(rows, cols)`` for ``world`` ranks: every block whole chunks."""
    T, every = layout.tile, blocks(world, layout.tiles_per_side)
    rows = [e for b in every for e in (b.rows.start, b.rows.stop)]
    cols = [e for b in every for e in (b.cols.start, b.cols.stop)]
    return T * math.gcd(*rows), T * math.gcd(*cols)


class Ownership:
    """Who owns each pixel: interior ones by tile row; an extended face's ring rows by the
    band they continue (the first band the rows above the face, the last those below)."""

    def __init__(self, layout: TileLayout, world: int):
        m = layout.tiles_per_side
        self.layout, self.world, self.blocks = layout, world, blocks(world, m)
        self.tile_owner = np.empty((6, m, m), dtype=np.int64)  # (6, m, m): per tile
        for r, b in enumerate(self.blocks):
            f, ty, tx = b.faces, b.rows, b.cols
            self.tile_owner[f.start : f.stop, ty.start : ty.stop, tx.start : tx.stop] = r

    @cached_property
    def ring_pixels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(face, padded row, padded col)`` of every ring pixel, each ``(R,)``, in the
        layout's ring order (computed once: every rank's plan reads it)."""
        P = self.layout.padded
        return np.unravel_index(self.layout.ring_positions, (6, P, P))

    def of_pixels(self, flat: np.ndarray) -> np.ndarray:
        """Owners of flat interior pixels of ``(6, n, n)``."""
        n, T = self.layout.n, self.layout.tile
        f, y, x = np.unravel_index(flat, (6, n, n))
        return self.tile_owner[f, y // T, x // T]

    def of_padded(self, face: np.ndarray, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Owners of extended-face pixels on ``face`` at padded ``(row, col)``."""
        L = self.layout
        ty = np.clip((row - L.halo) // L.tile, 0, L.tiles_per_side - 1)
        tx = np.clip((col - L.halo) // L.tile, 0, L.tiles_per_side - 1)
        return self.tile_owner[face, ty, tx]

    def reassembled(self, rank: int, axis: int) -> tuple[int, int]:
        """Padded rows (``axis`` 0) or columns (1) ``[o0, o1)`` whose overlap-add rank
        ``rank`` owns, on each of its faces."""
        L, b = self.layout, self.blocks[rank]
        T, H, m = L.tile, L.halo, L.tiles_per_side
        span = b.rows if axis == 0 else b.cols
        o0 = 0 if span.start == 0 else span.start * T + H
        o1 = L.padded if span.stop == m else span.stop * T + H
        return o0, o1

    def covering_tiles(self, rank: int, axis: int) -> range:
        """The tile rows (columns) whose windows reach its reassembled rows (columns)."""
        L = self.layout
        o0, o1 = self.reassembled(rank, axis)
        lo = max(0, (o0 - L.size) // L.tile + 1)
        return range(lo, min(L.tiles_per_side - 1, (o1 - 1) // L.tile) + 1)

    def window_span(self, t: int, rank: int, axis: int) -> tuple[int, int]:
        """Rows (columns) ``[r0, r1)`` of tile row (column) ``t``'s windows on rank
        ``rank``'s reassembled rows (columns)."""
        o0, o1 = self.reassembled(rank, axis)
        first = t * self.layout.tile
        return max(o0 - first, 0), min(o1 - first, self.layout.size)
