# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The halo operator restricted to ranks' blocks equals the single-rank operator bit for bit,
on geometries the gloo tests cannot afford (6 to 96 ranks: whole faces, bands, 2 x 2 to 4 x 4
blocks of a face, a halo wider than a tile, uneven blocks). The ranks run as threads of this
process, their messages handed over in memory; the same operator over gloo processes is
tested in tests/distributed/test_rollout_ranks.py."""

import threading

import numpy as np
import pytest
import torch

from screamcast.config.inference import StepperSection
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator
from screamcast.rollout.block_operator import BlockOperator
from screamcast.rollout.domain import blocks, chunk_shape
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper
from tests.rollout.test_stepper import stepper


class ThreadExchange:
    """``swap`` between threads: every rank posts what it sends, then takes what it gets;
    ``start`` posts, and its ``wait`` takes (the rank may compute in between)."""

    def __init__(self, rank: int, shared: dict, barrier: threading.Barrier):
        self.rank, self.shared, self.barrier = rank, shared, barrier

    def swap(self, send: dict, recv: dict) -> dict:
        return self.start(send, recv).wait()

    def start(self, send: dict, recv: dict):
        for q, tensor in send.items():
            self.shared[self.rank, q] = tensor.clone()
        return _Posted(self, recv)

    def _take(self, recv: dict) -> dict:
        self.barrier.wait()
        got = {q: self.shared[q, self.rank] for q in recv}
        for q, (shape, dtype, _) in recv.items():
            assert got[q].shape == shape and got[q].dtype == dtype, (self.rank, q)
        self.barrier.wait()  # every rank has taken its messages
        if self.rank == 0:
            self.shared.clear()
        self.barrier.wait()
        return got

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` summed over the ranks, in place, in rank order."""
        self.shared["sum", self.rank] = tensor.clone()
        self.barrier.wait()
        total = sum(self.shared["sum", q] for q in range(self.barrier.parties))
        self.barrier.wait()
        if self.rank == 0:
            self.shared.clear()
        self.barrier.wait()
        return tensor.copy_(total)


class _Posted:
    def __init__(self, exchange: ThreadExchange, recv: dict):
        self.exchange, self.recv = exchange, recv

    def wait(self) -> dict:
        return self.exchange._take(self.recv)


def run_ranks(world: int, body) -> None:
    """``body(rank, exchange)`` for every rank at once, each in a thread; the first error is
    raised (the others' barriers broken, so no thread waits forever)."""
    shared, barrier, errors = {}, threading.Barrier(world), []

    def rank(r: int) -> None:
        try:
            body(r, ThreadExchange(r, shared, barrier))
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


def on_ranks(layout: TileLayout, world: int, x: torch.Tensor, work) -> torch.Tensor:
    """``work(operator, x_block)`` on every rank's block at once, reassembled to the globe."""
    plans = [ExchangePlan.build(layout, r, world) for r in range(world)]
    whole = torch.empty(x.shape[0], 6, layout.n, layout.n)

    def body(r: int, exchange: ThreadExchange) -> None:
        where = (slice(None), *plans[r].block.region(layout.tile))
        whole[where] = work(BlockOperator(HaloOperator(layout), plans[r], exchange), x[where])

    run_ranks(world, body)
    return whole


def network(tiles: torch.Tensor) -> torch.Tensor:
    """A pointwise stand-in for the model: a prediction differing from the input."""
    return torch.sin(3 * tiles) + tiles


@pytest.mark.parametrize(
    "n, tile, halo, world",
    [
        (16, 8, 4, 3),  # whole faces
        (16, 8, 4, 4),  # half of 3 faces each
        (40, 8, 4, 5),  # a fifth of all 6 faces: one tile row of each
        (16, 8, 4, 8),  # a quarter of 3 faces (a node of 8)
        (32, 8, 4, 16),  # 4 x 2 blocks of 3 faces
        (16, 8, 4, 2),
        (16, 8, 4, 6),
        (16, 8, 4, 12),  # bands of one tile row
        (16, 8, 4, 24),  # 2 x 2 blocks of one tile: corners from three neighbours
        (32, 4, 6, 24),  # a halo wider than a tile: windows reach two blocks away
        (32, 8, 4, 18),  # uneven bands (1, 1, 2 tile rows)
        (40, 8, 4, 24),  # uneven 2 x 2 blocks (2 and 3 tiles a side)
        (32, 8, 4, 48),  # 4 x 2 blocks
        (32, 4, 3, 96),  # 4 x 4 blocks
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


def test_blocks_and_their_chunks():
    """1, 2, 3, 6 ranks whole faces; 4 and 8 halves and quarters of 3 faces; beyond 6, each
    face cut as near square as the rank count allows (12: bands, 24: 2 x 2, 48: 4 x 2 rows
    of blocks); every rank the same tiles; chunks fit every block."""
    assert [(b.faces, b.rows, b.cols) for b in blocks(12, 2)[:3]] == [
        (range(0, 1), range(0, 1), range(0, 2)),
        (range(0, 1), range(1, 2), range(0, 2)),
        (range(1, 2), range(0, 1), range(0, 2)),
    ]
    assert [b.rows for b in blocks(18, 4)[:3]] == [range(0, 1), range(1, 2), range(2, 4)]
    assert [(b.rows, b.cols) for b in blocks(24, 4)[:2]] == [
        (range(0, 2), range(0, 2)),
        (range(0, 2), range(2, 4)),
    ]
    assert {(len(b.rows), len(b.cols)) for b in blocks(48, 4)} == {(1, 2)}  # 4 rows x 2 cols
    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    assert chunk_shape(3, layout) == (32, 32) and chunk_shape(12, layout) == (16, 32)
    assert chunk_shape(18, layout) == (8, 32)  # uneven bands: the rows every band is made of
    assert chunk_shape(24, layout) == (16, 16)
    assert [(b.faces, b.rows, b.cols) for b in blocks(4, 2)] == [
        (range(0, 3), range(0, 1), range(0, 2)),  # top halves of faces 0-2
        (range(0, 3), range(1, 2), range(0, 2)),
        (range(3, 6), range(0, 1), range(0, 2)),
        (range(3, 6), range(1, 2), range(0, 2)),
    ]
    eight = blocks(8, 4)  # a node's GPUs: a quarter of 3 faces each
    assert {(b.faces, len(b.rows), len(b.cols)) for b in eight} == {
        (range(0, 3), 2, 2),
        (range(3, 6), 2, 2),
    }
    assert len({(b.faces, b.rows, b.cols) for b in eight}) == 8
    for world in (1, 2, 3, 4, 5, 6, 8, 10, 12, 16):  # every rank the same tiles
        assert {b.tiles(20).size for b in blocks(world, 20)} == {6 * 400 // world}, world
        every = np.sort(np.concatenate([b.tiles(20) for b in blocks(world, 20)]))
        assert np.array_equal(every, np.arange(6 * 400)), world  # each tile owned once
    assert [len(b.faces) for b in blocks(4, 1)] == [1, 2, 1, 2]  # faces of one tile: whole
    assert chunk_shape(8, layout) == (16, 16)
    with pytest.raises(ValueError, match="4 x 4 tiles cannot be cut into 7 x 1 blocks"):
        blocks(7, 4)
    with pytest.raises(ValueError, match="4 x 4 tiles cannot be cut into 5 x 1 blocks"):
        blocks(30, 4)


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
    bands = [ExchangePlan.build(layout, r, 12) for r in range(3)]
    middle = bands[1]  # face 0, tile rows 2 and 3 of 4: between bands 0 and... face 1's
    assert list(middle.send_halo)[:1] == [0]
    rows = np.unique(middle.send_halo[0] // 32)  # own rows (of 16) it sends to band 0
    assert rows.tolist() == [0, 1, 2, 3] and middle.send_halo[0].size == 4 * 32
    k, R = layout.ring_sources.T.shape
    entries = sum(p.adjoint_own.size + sum(p.recv_adjoint.values()) for p in plans)
    assert entries == k * R  # every entry added once, by the owner of its source


@pytest.mark.parametrize(
    "n, tile, halo, world, inner",
    [
        (32, 4, 3, 6, 36),  # whole faces of 8 x 8 tiles: the 6 x 6 inside the ring
        (32, 4, 3, 24, 4),  # 2 x 2 blocks of 4 x 4 tiles: the 2 x 2 in the middle
        (32, 4, 6, 24, 0),  # a halo wider than a tile: every window reads a neighbour's
        (32, 8, 4, 12, 0),  # bands of one tile row
        (32, 4, 3, 8, 12),  # a quarter of 3 faces: 2 x 2 tiles inside each of 4 x 4
    ],
)
def test_the_tiles_that_need_no_halo_counted_by_hand(n, tile, halo, world, inner):
    """The interior a rank runs while its halo is in flight: windows inside its own pixels."""
    layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
    op = BlockOperator(HaloOperator(layout), ExchangePlan.build(layout, 0, world), None)
    assert op.inner.numel() == inner
    assert sorted(op.inner.tolist() + op.outer.tolist()) == list(range(op.F * op.rows * op.cols))


@pytest.mark.parametrize("world", [4, 6, 8, 24])
@pytest.mark.parametrize("overlap", [True, False])
def test_the_domain_step_with_its_exchange_hidden_equals_one_rank(world, overlap):
    """The rollout's domain stepper (the network, its forcing and static tiles), the halo
    exchange posted and the interior tiles run before it is waited for, on 6 and 24 ranks as
    threads: the globe's step bit for bit (batches of one tile; with the exchange waited for
    first, batches of 4 too: a block's tiles come in the same order as one rank's)."""
    layout = TileLayout(PhysicsGrid.for_face_size(32), 4, 3)
    torch.manual_seed(0)
    single = stepper(layout)  # a small U-Net on u, v with an orography
    batch = 1 if overlap else 4
    config = StepperSection(
        halo_adjoint=True, halo_adjoint_cross_face=True, batch_size=batch, overlap_exchange=overlap
    )
    single = GlobalStepper(single.pipeline, layout, np.zeros((1, 6, 32, 32)), config)
    x = torch.randn(2, 6, 32, 32, generator=torch.Generator().manual_seed(1))
    t0, t1 = np.datetime64("2000-06-01T00"), np.datetime64("2000-06-01T06")
    want = single.step(x, t0, t1)  # (C + D, 6, n, n)
    plans = ExchangePlan.build_all(layout, world)
    whole, waits = torch.empty_like(want), []

    def body(r: int, exchange: ThreadExchange) -> None:
        static = np.zeros((1, 6, 32, 32))
        s = GlobalStepper(single.pipeline, layout, static, config, plan=plans[r], exchange=exchange)
        region = (slice(None), *plans[r].block.region(layout.tile))
        whole[region] = s.step(x[region], t0, t1)
        waits.append(s.seconds)

    run_ranks(world, body)
    assert torch.equal(whole, want)
    assert all(w["forward"] > 0 for w in waits)


@pytest.mark.parametrize("world", [12, 48])  # bands (1 x 2 tiles) and 1 x 2 blocks of a face
def test_picked_tiles_are_those_of_the_whole_cut_on_blocks_that_are_not_square(world):
    """The overlapped step cuts its interior and then its outer tiles by index: on a block
    with more tile columns than rows, each index must still find its own window."""
    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    plan = ExchangePlan.build(layout, 1, world)
    op = BlockOperator(HaloOperator(layout), plan, None)
    assert op.rows != op.cols
    F, h, w = op.F, op.h + 2 * layout.halo, op.w + 2 * layout.halo
    slab = torch.arange(3 * F * h * w, dtype=torch.float32).view(3, F, h, w)
    every = op.cut(slab)  # (F rows cols, C, S, S)
    which = torch.arange(len(every)).flip(0)
    assert torch.equal(op.cut(slab, which), every[which])


@pytest.mark.parametrize("world", [2, 3, 4, 6, 8, 12, 24])
def test_a_global_mean_is_the_same_on_any_rank_count(world):
    """The correctors' global means (the dry mass, the mean temperature) on several ranks
    equal one rank's to the bit: each tile summed on its own rank, the tiles then added in
    the globe's order (a sum of the ranks' partial sums rounds by rank count, and a one-ULP
    shift of the surface pressure grows into every field within steps)."""
    from screamcast.rollout.rollout_step import tile_sums
    from screamcast.step.correctors import StepGeometry

    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    area = torch.as_tensor(layout.grid.area, dtype=torch.float32)  # (6, n, n)
    x = 1e5 + torch.randn(2, 6, 32, 32, generator=torch.Generator().manual_seed(5))
    one = StepGeometry(("PS",), area, tiles=tile_sums(layout, None)).global_mean(x)
    plans, got = ExchangePlan.build_all(layout, world), {}

    def body(r: int, exchange: ThreadExchange) -> None:
        region = plans[r].block.region(layout.tile)
        geometry = StepGeometry(("PS",), area[region], exchange, tile_sums(layout, region))
        got[r] = geometry.global_mean(x[(slice(None), *region)])

    run_ranks(world, body)
    assert all(torch.equal(got[r], one) for r in range(world)), (one, got)
    plain = StepGeometry(("PS",), area).global_mean(x)  # one rank's float32 sum
    torch.testing.assert_close(one, plain, rtol=1e-6, atol=0)
