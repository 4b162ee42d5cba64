# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A block increment on one rank's block of a face, or the same block of several faces (a
rollout on 4, or more than 6, ranks).

Bilinear and bicubic increments read the reference cells just past a block (bicubic two,
bilinear one, corners included): the ranks of a face swap those cells, and the increment is
evaluated on the whole faces with the cells no tap of this block reads left at zero, then cut
to the block. Same matrices, same shapes as on one rank, and the taps past the block weigh
exact zeros: the same values, bit for bit (tested with 12 gloo ranks, and 24 as threads).
"""

from __future__ import annotations

import torch

from screamcast.rollout.nudging.errors import NudgingError
from screamcast.rollout.nudging.increment import Increment

REACH = 2  # reference cells past a block that a bicubic (or bilinear) tap reads


class BlockIncrement:
    """``rank``'s block of ``blocks`` (:func:`screamcast.rollout.domain.blocks`), ``factor``
    model cells per reference cell; ``exchange`` swaps the cells
    (:class:`~screamcast.rollout.exchange.Exchange`)."""

    def __init__(self, rank: int, blocks: list, tile: int, factor: int, n: int, exchange):
        self.rank, self.factor, self.n, self.exchange = rank, factor, n, exchange
        self.faces = len(blocks[rank].faces)
        self.rects: dict[int, tuple[range, range]] = {}  # the face's ranks' reference cells
        for q, b in enumerate(blocks):
            if b.faces != blocks[rank].faces:
                continue
            spans = (("rows", b.pixel_rows(tile)), ("columns", b.pixel_cols(tile)))
            for name, px in spans:
                if px.start % factor or px.stop % factor:
                    raise NudgingError(
                        f"rank {q}'s {name} {px.start} to {px.stop - 1} cut the reference's "
                        f"blocks of {factor} cells: nudge on a number of ranks whose blocks are "
                        f"whole reference cells (tiles of {tile} cells)"
                    )
            self.rects[q] = tuple(range(px.start // factor, px.stop // factor) for _, px in spans)
        self.mine = self.rects[rank]

    def _wanted(self, q: int, frm: int) -> tuple[range, range]:
        """The reference cells of rank ``frm`` that rank ``q``'s taps read."""
        out = []
        for mine, theirs in zip(self.rects[q], self.rects[frm], strict=True):
            lo, hi = max(theirs.start, mine.start - REACH), min(theirs.stop, mine.stop + REACH)
            out.append(range(lo, max(lo, hi)))
        return out[0], out[1]

    def _neighbours(self, receiving: bool):
        """``(q, rows, cols)`` of the face's other ranks that send to (or take from) this one."""
        for q in self.rects:
            if q != self.rank:
                rows, cols = self._wanted(self.rank, q) if receiving else self._wanted(q, self.rank)
                if len(rows) and len(cols):
                    yield q, rows, cols

    def to_cells(self, increment: Increment, delta: torch.Tensor) -> torch.Tensor:
        """``delta (F, c, d)`` on this block's reference cells -> ``(F, h, w)`` on its cells."""
        if increment.kind == "block":  # one value per cell: nothing past the block is read
            return increment.to_cells(delta)
        (r0, c0), m = (s.start for s in self.mine), self.n // self.factor
        send = {
            q: delta[:, rows.start - r0 : rows.stop - r0, cols.start - c0 : cols.stop - c0]
            for q, rows, cols in self._neighbours(receiving=False)
        }
        shapes = {
            q: ((delta.shape[0], len(rows), len(cols)), delta.dtype, delta.device)
            for q, rows, cols in self._neighbours(receiving=True)
        }
        got = self.exchange.swap(send, shapes)
        face = delta.new_zeros(delta.shape[0], m, m)  # (F, m, m): cells no tap reads stay zero
        rows, cols = self.mine
        face[:, rows.start : rows.stop, cols.start : cols.stop] = delta
        for q, r, c in self._neighbours(receiving=True):
            face[:, r.start : r.stop, c.start : c.stop] = got[q]
        f = self.factor
        return increment.to_cells(face)[
            :, rows.start * f : rows.stop * f, cols.start * f : cols.stop * f
        ]

    def bytes_per_step(self, variables: int, itemsize: int = 4) -> int:
        """Bytes this rank sends per step for ``variables`` nudged variables (smooth
        increments)."""
        cells = sum(len(r) * len(c) for _, r, c in self._neighbours(receiving=False))
        return cells * self.faces * variables * itemsize
