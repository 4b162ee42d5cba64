# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One rank's side of a step's three exchanges (halo, overlap, cross-face adjoint), as index
arrays built once from the geometry (:mod:`screamcast.rollout.domain`).

Index spaces, per channel: *own* ``(F, h, n)`` (the block's state); *values* ``cat(own,
received halo from each rank q in rank order)``; the *slab* ``(F, h + 2H, P)`` (the padded
rows the block's tile windows read); the *accumulator* ``(F, Pa, P)`` (the padded rows of the
tile rows ``acc_tiles``, whose windows reach the rows the block reassembles); the *buffer*
``(F, nb, m, S, S)`` (those tile rows' predictions); global pixels are flat into ``(6, n, n)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from screamcast.grid.tiling import TileLayout
from screamcast.rollout.domain import Block, Ownership


@dataclass(frozen=True)
class ExchangePlan:
    """``send_*[q]``: positions (own / tile / weighted-ring) whose values go to rank ``q``;
    ``recv_halo[q]``, ``recv_adjoint[q]``: how many values ``q`` sends; ``recv_overlap[q]``:
    where ``q``'s values land in the buffer. ``fill_*``: the slab's interior pixels other
    ranks own; ``ring_*``: the slab's ring pixels, their sources in *values* and weights.
    ``adjoint_ring``: the ring pixels this rank reassembles (accumulator positions), whose
    weighted values are the adjoint's entries; ``adjoint_own`` the entries it adds itself,
    ``adjoint_order`` the permutation of (own, then each sender's) into the single-rank
    operator's order and ``adjoint_index`` their accumulator positions."""

    rank: int
    world: int
    block: Block
    send_halo: dict[int, np.ndarray]
    recv_halo: dict[int, int]
    fill_pos: np.ndarray
    fill_src: np.ndarray
    ring_pos: np.ndarray
    ring_sources: np.ndarray  # (R_s, k) into values
    ring_weights: np.ndarray  # (R_s, k)
    acc_tiles: range
    out_row: int  # the accumulator row of the block's first interior row
    send_overlap: dict[int, np.ndarray]
    recv_overlap: dict[int, np.ndarray]
    adjoint_ring: np.ndarray
    adjoint_weights: np.ndarray  # (R_o, k)
    send_adjoint: dict[int, np.ndarray]
    recv_adjoint: dict[int, int]
    adjoint_own: np.ndarray
    adjoint_order: np.ndarray
    adjoint_index: np.ndarray

    @property
    def faces(self) -> range:
        return self.block.faces

    @classmethod
    def build(cls, layout: TileLayout, rank: int, world: int) -> ExchangePlan:
        own = Ownership(layout, world)
        block = own.blocks[rank]
        reads = [_reads(layout, own, b) for b in own.blocks]  # (edge pixels, ring ids) per rank
        needs = [_needs(layout, own, r, *reads[r]) for r in range(world)]
        to_local = _Local(layout, own, rank, needs[rank])
        send = {}
        for q in range(world):
            mine = needs[q][own.of_pixels(needs[q]) == rank] if q != rank else needs[q][:0]
            if mine.size:
                send[q] = to_local.own(mine)
        edge, ring = reads[rank]
        P, S = layout.padded, layout.size
        f, y, x = np.unravel_index(edge, (6, layout.n, layout.n))
        top, f0 = block.rows.start * layout.tile, block.faces.start
        Ph = len(block.rows) * layout.tile + 2 * layout.halo
        fill_pos = ((f - f0) * Ph + y + layout.halo - top) * P + x + layout.halo
        rf, ry, rx = np.unravel_index(layout.ring_positions[ring], (6, P, P))
        ring_pos = ((rf - f0) * Ph + ry - top) * P + rx
        acc = own.covering_tiles(rank)
        send_ov, recv_ov = _overlap(layout, own, rank)
        return cls(
            rank, world, block, send, to_local.counts,
            fill_pos, to_local.values(edge), ring_pos,
            to_local.values(layout.ring_sources[ring]), layout.ring_weights[ring],
            acc, top + layout.halo - acc.start * layout.tile, send_ov, recv_ov,
            *_adjoint(layout, own, rank, (len(acc) - 1) * layout.tile + S),
        )  # fmt: skip

    def halo_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the halo exchange of one step."""
        return sum(v.size for v in self.send_halo.values()) * channels * itemsize

    def overlap_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the overlap exchange of one step (bands, halo adjoint)."""
        return sum(v.size for v in self.send_overlap.values()) * channels * itemsize

    def adjoint_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the cross-face adjoint exchange of one step."""
        return sum(v.size for v in self.send_adjoint.values()) * channels * itemsize


def _reads(layout: TileLayout, own: Ownership, block: Block) -> tuple[np.ndarray, np.ndarray]:
    """What a block's slab holds besides its own pixels: the interior pixels of the rows
    above and below it (flat, global) and the ring pixels in its rows (ids into the ring)."""
    n, T, H, P = layout.n, layout.tile, layout.halo, layout.padded
    top, bottom = block.rows.start * T, block.rows.stop * T
    rows = [*range(max(top - H, 0), top), *range(bottom, min(bottom + H, n))]
    faces = np.arange(block.faces.start, block.faces.stop)
    edge = ((faces[:, None, None] * n + np.array(rows, dtype=np.int64)[None, :, None]) * n
            + np.arange(n)[None, None, :]).ravel()  # fmt: skip
    rf, ry, _ = np.unravel_index(layout.ring_positions, (6, P, P))
    inside = (rf >= block.faces.start) & (rf < block.faces.stop)
    ring = np.flatnonzero(inside & (ry >= top) & (ry < bottom + 2 * H))
    return edge, ring


def _needs(layout, own: Ownership, rank: int, edge: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """The sorted pixels rank ``rank`` reads that other ranks own."""
    flat = np.unique(np.concatenate([edge, layout.ring_sources[ring].ravel()]))
    return flat[own.of_pixels(flat) != rank]


class _Local:
    """Global pixels -> positions in this rank's *values*: its own block, then the halo
    received from each rank in rank order (each sender's pixels sorted)."""

    def __init__(self, layout: TileLayout, own: Ownership, rank: int, needs: np.ndarray):
        self.layout, self.ownership, self.rank = layout, own, rank
        self.block = own.blocks[rank]
        owners = own.of_pixels(needs)
        self.halo_of = {q: needs[owners == q] for q in np.unique(owners).tolist()}
        self.counts = {q: int(v.size) for q, v in self.halo_of.items()}

    def own(self, flat: np.ndarray) -> np.ndarray:
        n, b = self.layout.n, self.block
        f, y, x = np.unravel_index(flat, (6, n, n))
        h = len(b.rows) * self.layout.tile
        return ((f - b.faces.start) * h + y - b.rows.start * self.layout.tile) * n + x

    def values(self, flat: np.ndarray) -> np.ndarray:
        out = np.empty_like(flat)
        owner = self.ownership.of_pixels(flat)
        mine = owner == self.rank
        out[mine] = self.own(flat[mine])
        b = self.block
        offset = len(b.faces) * len(b.rows) * self.layout.tile * self.layout.n
        for q, pixels in sorted(self.halo_of.items()):
            hit = owner == q
            out[hit] = offset + np.searchsorted(pixels, flat[hit])
            offset += pixels.size
        return out


def _overlap(layout: TileLayout, own: Ownership, rank: int) -> tuple[dict, dict]:
    """Bands: the rows of this rank's tile windows on a neighbour's reassembled rows
    (positions in its ``(tiles, S, S)``), and where a neighbour's land in its buffer."""
    m, b = layout.tiles_per_side, own.blocks[rank]
    send, recv = {}, {}
    for q, other in enumerate(own.blocks):
        if q == rank or other.faces != b.faces or len(b.faces) != 1:
            continue
        out = [
            _window_positions(layout, (ty - b.rows.start) * m, own.window_rows(ty, q))
            for ty in b.rows
            if ty in own.covering_tiles(q)
        ]
        if out and sum(p.size for p in out):
            send[q] = np.concatenate(out)
        acc = own.covering_tiles(rank)
        got = [
            _window_positions(layout, (ty - acc.start) * m, own.window_rows(ty, rank))
            for ty in other.rows
            if ty in acc
        ]
        if got and sum(p.size for p in got):
            recv[q] = np.concatenate(got)
    return send, recv


def _window_positions(layout: TileLayout, first: int, rows: tuple[int, int]) -> np.ndarray:
    """Flat positions in ``(tiles, S, S)`` of rows ``[r0, r1)`` of the ``m`` tiles from
    tile ``first`` on (one tile row), tile-major."""
    S, m = layout.size, layout.tiles_per_side
    r = np.arange(*rows)
    tiles = first + np.arange(m)
    return ((tiles[:, None, None] * S + r[None, :, None]) * S + np.arange(S)).ravel()


def _adjoint(layout: TileLayout, own: Ownership, rank: int, acc_rows: int):
    """The cross-face adjoint's entries, in the single-rank order ``(j, ring pixel)`` over
    ``(k, R)``: each computed by the owner of its ring pixel, added by the owner of its
    source."""
    n, H, P = layout.n, layout.halo, layout.padded
    b, acc = own.blocks[rank], own.covering_tiles(rank)
    f0, top = b.faces.start, acc.start * layout.tile
    rf, ry, rx = np.unravel_index(layout.ring_positions, (6, P, P))
    ring_owner = own.of_padded(rf, ry)  # (R,)
    mine_ring = np.flatnonzero(ring_owner == rank)
    ring_pos = ((rf[mine_ring] - f0) * acc_rows + ry[mine_ring] - top) * P + rx[mine_ring]
    sources = layout.ring_sources.T  # (k, R)
    k, R = sources.shape
    sender = np.broadcast_to(ring_owner, (k, R)).ravel()  # (k R,)
    dest = sources.ravel()  # (k R,) global destination pixel
    receiver = own.of_pixels(dest)
    mine = np.flatnonzero(sender == rank)  # entries I compute, in global order

    def local(entries):  # global entry j R + p -> position in my (k, R_o)
        j, p = np.divmod(entries, R)
        return j * mine_ring.size + np.searchsorted(mine_ring, p)

    send = {q: local(mine[receiver[mine] == q]) for q in range(own.world) if q != rank}
    send = {q: v for q, v in send.items() if v.size}
    incoming = np.flatnonzero(receiver == rank)  # every entry I add, in global order
    groups, recv = [incoming[sender[incoming] == rank]], {}
    for q in range(own.world):
        got = incoming[sender[incoming] == q] if q != rank else incoming[:0]
        if got.size:
            recv[q] = int(got.size)
            groups.append(got)
    arrival = np.concatenate(groups)  # own, then each sender's, each in global order
    order = np.argsort(arrival, kind="stable")  # arrival -> global order
    f, y, x = np.unravel_index(dest[arrival[order]], (6, n, n))
    index = ((f - f0) * acc_rows + y + H - top) * P + x + H  # into (F, Pa, P)
    weights = layout.ring_weights[mine_ring]  # (R_o, k)
    return ring_pos, weights, send, recv, local(groups[0]), order, index
