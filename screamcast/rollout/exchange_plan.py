# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One rank's side of a step's three exchanges (halo, overlap, cross-face adjoint), as index
arrays built once from the geometry (:mod:`screamcast.rollout.domain`).

Index spaces, per channel: *own* ``(F, h, w)`` (the block's state); *values* ``cat(own,
received halo from each rank q in rank order)``; the *slab* ``(F, h + 2H, w + 2H)`` (the
padded pixels the block's tile windows read); the *accumulator* ``(F, Ah, Aw)`` (the padded
pixels of the tiles ``acc_rows x acc_cols``, whose windows reach the pixels the block
reassembles); the *buffer* ``(F, nr, nc, S, S)`` (those tiles' predictions); global pixels
are flat into ``(6, n, n)``.
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
    acc_rows: range  # tile rows and columns whose windows reach the reassembled pixels
    acc_cols: range
    out_origin: tuple[int, int]  # the accumulator pixel of the block's first interior pixel
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
        return cls._build(layout, rank, *_every_rank(layout, world))

    @classmethod
    def build_all(cls, layout: TileLayout, world: int) -> list[ExchangePlan]:
        """Every rank's plan, what they share computed once (the projection's 384 ranks)."""
        shared = _every_rank(layout, world)
        return [cls._build(layout, r, *shared) for r in range(world)]

    @classmethod
    def _build(
        cls, layout: TileLayout, rank: int, own: Ownership, reads, needs, owners
    ) -> ExchangePlan:
        world, block = own.world, own.blocks[rank]
        to_local = _Local(layout, own, rank, needs[rank])
        send = {}
        for q in range(world):
            mine = needs[q][owners[q] == rank] if q != rank else needs[q][:0]
            if mine.size:
                send[q] = to_local.own(mine)
        edge, ring = reads[rank]
        T, H = layout.tile, layout.halo
        f0, top, left = block.faces.start, block.rows.start * T, block.cols.start * T
        Sh, Sw = len(block.rows) * T + 2 * H, len(block.cols) * T + 2 * H  # the slab
        f, y, x = np.unravel_index(edge, (6, layout.n, layout.n))
        fill_pos = ((f - f0) * Sh + y + H - top) * Sw + x + H - left
        rf, ry, rx = (c[ring] for c in own.ring_pixels)
        ring_pos = ((rf - f0) * Sh + ry - top) * Sw + rx - left
        rows, cols = own.covering_tiles(rank, 0), own.covering_tiles(rank, 1)
        origin = (top + H - rows.start * T, left + H - cols.start * T)
        return cls(
            rank,
            world,
            block,
            send,
            to_local.counts,
            fill_pos,
            to_local.values(edge),
            ring_pos,
            to_local.values(layout.ring_sources[ring]),
            layout.ring_weights[ring],
            rows,
            cols,
            origin,
            *_overlap(layout, own, rank),
            *_adjoint(layout, own, rank),
        )

    def halo_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the halo exchange of one step."""
        return sum(v.size for v in self.send_halo.values()) * channels * itemsize

    def overlap_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the overlap exchange of one step (blocks smaller than a
        face, with the halo adjoint)."""
        return sum(v.size for v in self.send_overlap.values()) * channels * itemsize

    def adjoint_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the cross-face adjoint exchange of one step."""
        return sum(v.size for v in self.send_adjoint.values()) * channels * itemsize


def _every_rank(layout: TileLayout, world: int) -> tuple[Ownership, list, list, list]:
    """The ownership, and per rank what its slab reads, the pixels of others it needs and
    their owners."""
    own = Ownership(layout, world)
    reads = [_reads(layout, own, b) for b in own.blocks]  # (edge pixels, ring ids) per rank
    needs = [_needs(layout, own, r, *reads[r]) for r in range(world)]
    return own, reads, needs, [own.of_pixels(v) for v in needs]


def _reads(layout: TileLayout, own: Ownership, block: Block) -> tuple[np.ndarray, np.ndarray]:
    """What a block's slab holds besides its own pixels: the interior pixels around it (flat,
    global) and the ring pixels in its rows and columns (ids into the ring)."""
    n, T, H = layout.n, layout.tile, layout.halo
    top, bottom = block.rows.start * T, block.rows.stop * T
    left, right = block.cols.start * T, block.cols.stop * T
    y = np.arange(max(top - H, 0), min(bottom + H, n))
    x = np.arange(max(left - H, 0), min(right + H, n))
    outside = ~(((y >= top) & (y < bottom))[:, None] & ((x >= left) & (x < right))[None, :])
    faces = np.arange(block.faces.start, block.faces.stop)
    edge = ((faces[:, None, None] * n + y[None, :, None]) * n + x[None, None, :])[:, outside]
    rf, ry, rx = own.ring_pixels
    inside = (rf >= block.faces.start) & (rf < block.faces.stop)
    inside &= (ry >= top) & (ry < bottom + 2 * H) & (rx >= left) & (rx < right + 2 * H)
    return edge.ravel(), np.flatnonzero(inside)


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
        T, b = self.layout.tile, self.block
        f, y, x = np.unravel_index(flat, (6, self.layout.n, self.layout.n))
        h, w = len(b.rows) * T, len(b.cols) * T
        return ((f - b.faces.start) * h + y - b.rows.start * T) * w + x - b.cols.start * T

    def values(self, flat: np.ndarray) -> np.ndarray:
        out = np.empty_like(flat)
        owner = self.ownership.of_pixels(flat)
        mine = owner == self.rank
        out[mine] = self.own(flat[mine])
        b, T = self.block, self.layout.tile
        offset = len(b.faces) * len(b.rows) * T * len(b.cols) * T
        for q, pixels in sorted(self.halo_of.items()):
            hit = owner == q
            out[hit] = offset + np.searchsorted(pixels, flat[hit])
            offset += pixels.size
        return out


def _overlap(layout: TileLayout, own: Ownership, rank: int) -> tuple[dict, dict]:
    """Blocks smaller than a face: the parts of this rank's tile windows on a neighbour's
    reassembled pixels (positions in its ``(tiles, S, S)``), and where a neighbour's land in
    its buffer ``(nr, nc, S, S)``."""
    b = own.blocks[rank]
    send, recv = {}, {}
    if b.rows == range(layout.tiles_per_side) and b.cols == b.rows:
        return send, recv  # whole faces: every tile of a face is this rank's
    acc = (own.covering_tiles(rank, 0), own.covering_tiles(rank, 1))
    for q, other in enumerate(own.blocks):
        if q == rank or other.faces != b.faces:
            continue
        theirs = (own.covering_tiles(q, 0), own.covering_tiles(q, 1))
        out = _window_positions(layout, own, b, (b.rows, b.cols), theirs, q)
        if out.size:
            send[q] = out
        got = _window_positions(layout, own, other, acc, acc, rank)
        if got.size:
            recv[q] = got
    return send, recv


def _window_positions(layout, own: Ownership, block: Block, frame, reach, rank: int):
    """Flat positions in ``(F, len(frame rows), len(frame cols), S, S)`` of the pixels of
    ``block``'s tiles within ``reach`` (tile rows, columns) that lie on ``rank``'s
    reassembled pixels; face-major, then tile, row, column (sender and receiver agree: the
    two blocks hold the same faces)."""
    one = _face_window_positions(layout, own, block, frame, reach, rank)  # on one face
    stride = len(frame[0]) * len(frame[1]) * layout.size**2  # one face of the frame
    return (np.arange(len(block.faces))[:, None] * stride + one[None, :]).ravel()


def _face_window_positions(layout, own: Ownership, block: Block, frame, reach, rank: int):
    """:func:`_window_positions` on one face, ``(len(frame rows), len(frame cols), S, S)``."""
    S, parts = layout.size, []
    for ty in block.rows:
        if ty not in reach[0]:
            continue
        r = np.arange(*own.window_span(ty, rank, 0))
        for tx in block.cols:
            if tx not in reach[1]:
                continue
            c = np.arange(*own.window_span(tx, rank, 1))
            tile = (ty - frame[0].start) * len(frame[1]) + tx - frame[1].start
            parts.append(((tile * S + r[:, None]) * S + c[None, :]).ravel())
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _adjoint(layout: TileLayout, own: Ownership, rank: int):
    """The cross-face adjoint's entries, in the single-rank order ``(j, ring pixel)`` over
    ``(k, R)``: each computed by the owner of its ring pixel, added by the owner of its
    source."""
    n, T, H, S = layout.n, layout.tile, layout.halo, layout.size
    b = own.blocks[rank]
    rows, cols = own.covering_tiles(rank, 0), own.covering_tiles(rank, 1)
    Ah, Aw = (len(rows) - 1) * T + S, (len(cols) - 1) * T + S  # the accumulator
    f0, top, left = b.faces.start, rows.start * T, cols.start * T
    rf, ry, rx = own.ring_pixels
    ring_owner = own.of_padded(rf, ry, rx)  # (R,)
    mine_ring = np.flatnonzero(ring_owner == rank)
    fm, ym, xm = rf[mine_ring], ry[mine_ring], rx[mine_ring]
    ring_pos = ((fm - f0) * Ah + ym - top) * Aw + xm - left
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
    index = ((f - f0) * Ah + y + H - top) * Aw + x + H - left  # into (F, Ah, Aw)
    weights = layout.ring_weights[mine_ring]  # (R_o, k)
    return ring_pos, weights, send, recv, local(groups[0]), order, index
