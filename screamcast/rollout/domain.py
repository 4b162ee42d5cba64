# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Which rank owns which faces, and what each step's two exchanges move (numpy, built once).

A rollout on ``world`` ranks gives each a contiguous block of whole faces (``world <= 6``:
faces ``[r * 6 // world, (r + 1) * 6 // world)``). A rank keeps only its faces' state. Each
step needs two exchanges with the ranks that own neighbouring faces, both fixed by the
geometry and computed here the same way on every rank (no negotiation):

- **halo** (before the forward): the KNN sources of its faces' halo rings that lie on other
  ranks' faces: a strip a few cells deep along each shared cube edge;
- **cross-face adjoint** (with ``cross_face``): its rings' weighted predictions whose KNN
  source lies on another rank's face, sent to that face's owner, which adds them into its
  overlap-add in the single-rank operator's order (so the sums are the same, bit for bit).

Flat pixel indices are into ``(6, n, n)``; "local" ones into the rank's ``(F, n, n)`` block,
or past it into the received halo values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from screamcast.grid.tiling import TileLayout


def faces_of(rank: int, world: int) -> range:
    """The faces rank ``rank`` of ``world`` owns (whole faces; ``world`` at most 6)."""
    if not 1 <= world <= 6:
        raise ValueError(
            f"a domain-decomposed rollout splits whole faces over at most 6 ranks, got {world} "
            "(sub-face blocks are not built)"
        )
    return range(rank * 6 // world, (rank + 1) * 6 // world)


def owner_of_face(world: int) -> np.ndarray:
    """``(6,)``: the rank that owns each face."""
    owner = np.empty(6, dtype=np.int64)
    for r in range(world):
        owner[list(faces_of(r, world))] = r
    return owner


@dataclass(frozen=True)
class ExchangePlan:
    """One rank's side of both exchanges. ``send_halo[q]``: local pixel indices whose values
    rank ``q`` needs; ``recv_halo[q]``: how many values ``q`` sends; ``ring_sources_local (R_F,
    k)``: this rank's rings' sources as indices into ``cat(own field, halo from rank q in
    rank order)``. ``send_adjoint[q]``: positions in this rank's flat ``(k, R_F)`` weighted
    ring values to send to ``q``; ``adjoint_order``: for the entries destined to this rank's
    faces, own ones first then each sender's in rank order, the permutation into the
    single-rank operator's order, and ``adjoint_index`` their local destinations in ``(F, P,
    P)`` extended faces."""

    rank: int
    world: int
    faces: range
    send_halo: dict[int, np.ndarray]
    recv_halo: dict[int, int]
    ring_sources_local: np.ndarray
    ring_slice: slice  # this rank's rings in the layout's (R,) ring order
    send_adjoint: dict[int, np.ndarray]
    recv_adjoint: dict[int, int]
    adjoint_own: np.ndarray  # positions in my (k, R_F) of the entries I add myself
    adjoint_order: np.ndarray
    adjoint_index: np.ndarray

    @classmethod
    def build(cls, layout: TileLayout, rank: int, world: int) -> ExchangePlan:
        faces, owner = faces_of(rank, world), owner_of_face(world)
        n, P, R = layout.n, layout.padded, layout.ring_positions.size
        r_face = R // 6  # ring pixels per face, face-major
        rings = slice(faces.start * r_face, faces.stop * r_face)
        sources = layout.ring_sources  # (R, k) flat into (6, n, n)
        f0 = faces.start * n * n
        send_halo, recv, halo_of = {}, {}, {}
        for q in range(world):
            if q == rank:
                continue
            theirs = _needed(sources[_rings_of(q, world, r_face)], owner, rank, n)
            if theirs.size:
                send_halo[q] = theirs - f0  # my pixels q's rings read, local
            halo_of[q] = _needed(sources[rings], owner, q, n)  # q's pixels my rings read
            if halo_of[q].size:
                recv[q] = int(halo_of[q].size)
        local = _local_sources(sources[rings], halo_of, owner, rank, faces, n)
        send_adj, recv_adj, own, order, index = _adjoint(layout, owner, rank, world, r_face, n, P)
        return cls(
            rank, world, faces, send_halo, recv, local, rings, send_adj, recv_adj, own, order, index
        )

    def halo_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the halo exchange of one step."""
        return sum(v.size for v in self.send_halo.values()) * channels * itemsize

    def adjoint_bytes(self, channels: int, itemsize: int = 4) -> int:
        """Bytes this rank sends in the cross-face adjoint exchange of one step."""
        return sum(v.size for v in self.send_adjoint.values()) * channels * itemsize


def _rings_of(q: int, world: int, r_face: int) -> slice:
    f = faces_of(q, world)
    return slice(f.start * r_face, f.stop * r_face)


def _needed(sources: np.ndarray, owner: np.ndarray, holder: int, n: int) -> np.ndarray:
    """The sorted unique pixels among ``sources`` that lie on ``holder``'s faces."""
    flat = np.unique(sources.ravel())
    return flat[owner[flat // (n * n)] == holder]


def _local_sources(sources, halo_of: dict, owner, rank: int, faces: range, n: int):
    """``sources (R_F, k)`` (global) as indices into ``cat(own (F n n), halo from q...)``, the
    halo values of each sender ``q`` (rank order) in ``halo_of[q]``'s sorted order."""
    out = np.empty_like(sources)
    face = owner[sources // (n * n)]
    mine = face == rank
    out[mine] = sources[mine] - faces.start * n * n
    offset = len(faces) * n * n
    for q, pixels in sorted(halo_of.items()):
        hit = face == q
        out[hit] = offset + np.searchsorted(pixels, sources[hit])
        offset += pixels.size
    return out


def _adjoint(layout: TileLayout, owner, rank: int, world: int, r_face: int, n: int, P: int):
    """The cross-face adjoint's entries: global order is ``(j, ring pixel)`` over ``(k, R)``,
    as the single-rank operator scatters them."""
    sources = layout.ring_sources.T  # (k, R)
    k, R = sources.shape
    ring_face = np.repeat(np.arange(6), r_face)  # (R,)
    sender = np.broadcast_to(owner[ring_face], (k, R)).ravel()  # (k R,) who computes it
    dest = sources.ravel()  # (k R,) global destination pixel
    receiver = owner[dest // (n * n)]
    mine = np.flatnonzero(sender == rank)  # entries I compute, in global order
    local_pos = _local_entry_positions(mine, rank, world, r_face, k)
    send = {
        q: local_pos[receiver[mine] == q] for q in range(world) if q != rank
    }  # positions in my (k, R_F) array, global order
    send = {q: v for q, v in send.items() if v.size}
    incoming = np.flatnonzero(receiver == rank)  # every entry I add, in global order
    groups = [incoming[sender[incoming] == rank]]
    recv = {}
    for q in range(world):
        if q != rank:
            got = incoming[sender[incoming] == q]
            if got.size:
                recv[q] = int(got.size)
                groups.append(got)
    own = _local_entry_positions(groups[0], rank, world, r_face, k)
    arrival = np.concatenate(groups)  # own, then each sender's, each in global order
    order = np.argsort(arrival, kind="stable")  # arrival -> global order
    f, y, x = np.unravel_index(dest[arrival[order]], (6, n, n))
    H = layout.halo
    index = ((f - faces_of(rank, world).start) * P + y + H) * P + x + H  # into (F, P, P)
    return send, recv, own, order, index


def _local_entry_positions(entries: np.ndarray, rank: int, world: int, r_face: int, k: int):
    """Global entry ids ``j * R + p`` of this rank's rings -> positions in its ``(k, R_F)``."""
    R = 6 * r_face
    j, p = np.divmod(entries, R)
    f0 = faces_of(rank, world).start
    R_F = len(faces_of(rank, world)) * r_face
    return j * R_F + (p - f0 * r_face)
