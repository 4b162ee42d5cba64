# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The halo operator restricted to ranks' blocks (whole faces and bands of a face) equals the
single-rank operator bit for bit, on geometries the gloo tests cannot afford (24 and 48 ranks,
a halo wider than a tile, uneven bands). The ranks run as threads of this process, their
messages handed over in memory; the same operator over gloo processes is tested in
tests/distributed/test_rollout_ranks.py."""

import threading

import numpy as np
import pytest
import torch

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.domain import blocks, chunk_rows
from screamcast.rollout.exchange_plan import ExchangePlan


class ThreadExchange:
    """``swap`` between threads: every rank posts what it sends, then takes what it gets."""

    def __init__(self, rank: int, shared: dict, barrier: threading.Barrier):
        self.rank, self.shared, self.barrier = rank, shared, barrier

    def swap(self, send: dict, recv: dict) -> dict:
        for q, tensor in send.items():
            self.shared[self.rank, q] = tensor.clone()
        self.barrier.wait()
        got = {q: self.shared[q, self.rank] for q in recv}
        for q, (shape, dtype, _) in recv.items():
            assert got[q].shape == shape and got[q].dtype == dtype, (self.rank, q)
        self.barrier.wait()  # every rank has taken its messages
        if self.rank == 0:
            self.shared.clear()
        self.barrier.wait()
        return got


def on_ranks(layout: TileLayout, world: int, x: torch.Tensor, work) -> torch.Tensor:
    """``work(operator, x_block)`` on every rank's block at once, reassembled to the globe."""
    shared, barrier = {}, threading.Barrier(world)
    plans = [ExchangePlan.build(layout, r, world) for r in range(world)]
    out, errors = {}, []

    def rank(r: int) -> None:
        try:
            b = plans[r].block
            op = BlockOperator(layout, plans[r], ThreadExchange(r, shared, barrier), "cpu")
            out[r] = work(op, x[:, b.faces.start : b.faces.stop, b.pixel_rows(layout.tile)])
        except BaseException as err:
            errors.append(err)
            barrier.abort()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    C = out[0].shape[0]
    whole = torch.empty(C, 6, layout.n, layout.n)
    for r, p in enumerate(plans):
        b = p.block
        whole[:, b.faces.start : b.faces.stop, b.pixel_rows(layout.tile)] = out[r]
    return whole


def network(tiles: torch.Tensor) -> torch.Tensor:
    """A pointwise stand-in for the model: a prediction differing from the input."""
    return torch.sin(3 * tiles) + tiles


@pytest.mark.parametrize(
    "n, tile, halo, world",
    [
        (16, 8, 4, 3),  # whole faces
        (16, 8, 4, 12),  # bands of one tile row
        (32, 4, 6, 24),  # a halo wider than a tile: windows reach two bands away
        (32, 8, 4, 18),  # uneven bands (1, 1, 2 tile rows)
        (32, 4, 3, 48),
    ],
)
def test_every_reassembly_on_blocks_equals_one_rank_bit_for_bit(n, tile, halo, world):
    layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
    single = HaloOperator(layout)
    x = torch.randn(3, 6, n, n, generator=torch.Generator().manual_seed(0))
    pred = network(single.gather(x[None]))
    want = {
        "crop": single.crop(pred)[0],
        "intra-face": single.adjoint(pred, cross_face=False, window="cosine")[0],
        "cross-face": single.adjoint(pred, cross_face=True, window="cosine")[0],
    }
    got = {
        "crop": on_ranks(layout, world, x, lambda op, xb: op.crop(network(op.gather(xb)))),
        "intra-face": on_ranks(
            layout, world, x, lambda op, xb: op.adjoint(network(op.gather(xb)), False, "cosine")
        ),
        "cross-face": on_ranks(
            layout, world, x, lambda op, xb: op.adjoint(network(op.gather(xb)), True, "cosine")
        ),
    }
    for kind in want:
        assert torch.equal(got[kind], want[kind]), kind


def test_bands_and_their_chunks():
    assert [(b.faces, b.rows) for b in blocks(12, 2)[:3]] == [
        (range(0, 1), range(0, 1)),
        (range(0, 1), range(1, 2)),
        (range(1, 2), range(0, 1)),
    ]
    assert [b.rows for b in blocks(18, 4)[:3]] == [range(0, 1), range(1, 2), range(2, 4)]
    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    assert chunk_rows(3, layout) == 32 and chunk_rows(12, layout) == 16
    assert chunk_rows(18, layout) == 8  # uneven bands: the rows every band is made of
    for world in (7, 30):
        with pytest.raises(ValueError, match=f"multiple of 6 and at most 6 x 4 .* got {world}"):
            blocks(world, 4)


def test_what_a_band_sends_is_what_its_neighbours_receive():
    """Every message's size agrees on both sides; a middle band sends its neighbours exactly
    their halo rows (halo x face wide); the cross-face entries are the single operator's."""
    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    plans = [ExchangePlan.build(layout, r, 24) for r in range(24)]
    for p in plans:
        for q, pos in p.send_halo.items():
            assert pos.size == plans[q].recv_halo[p.rank]
        for q, pos in p.send_overlap.items():
            assert pos.size == plans[q].recv_overlap[p.rank].size
        for q, pos in p.send_adjoint.items():
            assert pos.size == plans[q].recv_adjoint[p.rank]
    middle = plans[1]  # face 0, tile row 1 of 4
    for q in (0, 2):  # the bands above and below
        rows = np.unique(middle.send_halo[q] // 32)  # own rows (of 8) it sends to q
        assert rows.tolist() == ([0, 1, 2, 3] if q == 0 else [4, 5, 6, 7])
        assert middle.send_halo[q].size == 4 * 32
    k, R = layout.ring_sources.T.shape
    entries = sum(p.adjoint_own.size + sum(p.recv_adjoint.values()) for p in plans)
    assert entries == k * R  # every entry added once, by the owner of its source
