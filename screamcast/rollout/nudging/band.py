# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A block increment on one rank's band of a face (a rollout on more than 6 ranks).

Bilinear and bicubic increments read the coarse rows just past a band (bicubic two, bilinear
one): the ranks of a face swap those rows, and the increment is evaluated on the whole face
with the rows no tap of this band reads left at zero, then cut to the band. Same matrices,
same shapes as on one rank, and the taps past the band weigh exact zeros: the same values,
bit for bit (tested with 12 gloo ranks).
"""

from __future__ import annotations

import torch

from screamcast.rollout.nudging.errors import NudgingError
from screamcast.rollout.nudging.increment import Increment

REACH = 2  # coarse rows past a band that a bicubic (or bilinear) tap reads


class BandIncrement:
    """``rank``'s band of ``blocks`` (:func:`screamcast.rollout.domain.blocks`), ``factor``
    cells per coarse row; ``exchange`` swaps the rows (:class:`~.exchange.Exchange`)."""

    def __init__(self, rank: int, blocks: list, tile: int, factor: int, n: int, exchange):
        self.rank, self.factor, self.n, self.exchange = rank, factor, n, exchange
        self.rows = {}  # rank -> its coarse rows, for the ranks on this rank's face
        for q, b in enumerate(blocks):
            if b.faces == blocks[rank].faces:
                rows = b.pixel_rows(tile)
                if rows.start % factor or rows.stop % factor:
                    raise NudgingError(
                        f"rank {q}'s rows {rows.start} to {rows.stop - 1} cut the reference's "
                        f"blocks of {factor} cells: nudge on a number of ranks whose bands are "
                        f"whole reference cells (tile rows of {tile} cells)"
                    )
                self.rows[q] = range(rows.start // factor, rows.stop // factor)
        self.mine = self.rows[rank]

    def _wanted(self, q: int, frm: int) -> range:
        """The coarse rows of rank ``frm`` that rank ``q``'s taps read."""
        mine, theirs = self.rows[q], self.rows[frm]
        lo, hi = max(theirs.start, mine.start - REACH), min(theirs.stop, mine.stop + REACH)
        return range(lo, max(lo, hi))

    def to_cells(self, increment: Increment, delta: torch.Tensor) -> torch.Tensor:
        """``delta (1, c, m)`` on this band's coarse rows -> ``(1, h, n)`` on its cells."""
        m = self.n // self.factor
        send = {}
        for q in self.rows:
            rows = self._wanted(q, self.rank) if q != self.rank else range(0)
            if len(rows):
                send[q] = delta[0, rows.start - self.mine.start : rows.stop - self.mine.start]
        recv = {}
        for q in self.rows:
            rows = self._wanted(self.rank, q) if q != self.rank else range(0)
            if len(rows):
                recv[q] = ((len(rows), m), delta.dtype, delta.device)
        got = self.exchange.swap(send, recv)
        face = delta.new_zeros(1, m, m)  # (1, m, m): rows no tap reads stay zero
        face[0, self.mine.start : self.mine.stop] = delta[0]
        for q, values in got.items():
            rows = self._wanted(self.rank, q)
            face[0, rows.start : rows.stop] = values
        f = self.factor
        return increment.to_cells(face)[:, self.mine.start * f : self.mine.stop * f]

    def bytes_per_step(self, variables: int, itemsize: int = 4) -> int:
        """Bytes this rank sends per step for ``variables`` nudged variables."""
        m = self.n // self.factor
        rows = sum(len(self._wanted(q, self.rank)) for q in self.rows if q != self.rank)
        return rows * m * variables * itemsize
