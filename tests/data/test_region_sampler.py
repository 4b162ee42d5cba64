# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Crops drawn a region at a time: uniform over times, faces and positions, mixed across
regions in a batch, equal to independently read crops, and fewer bytes read."""

import numpy as np
import pytest
from scipy.stats import chisquare

from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import ReadCounter
from screamcast.data.region_sampler import RegionPlan
from screamcast.grid import PhysicsGrid, TileLayout

PROG, DIAG, STATIC = ["u", "v", "tracer"], ["precip"], ["orography"]


def draws(plan: RegionPlan, windows: int, times: int = 5) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([plan.draw(rng, 0, times) for _ in range(windows)])  # (N, 6)


def naive(plan: RegionPlan, windows: int) -> np.ndarray:
    """The obvious version: a region of ``size`` pixels at a uniform position, its crops
    uniform inside it. Origins near the face's edges are drawn less often."""
    rng = np.random.default_rng(0)
    n = windows * plan.window * plan.per_region
    r = rng.integers(0, plan.span - plan.stride + 1, (n // plan.per_region, 2))
    off = rng.integers(0, plan.stride, (n // plan.per_region, plan.per_region, 2))
    return (r[:, None] + off).reshape(-1, 2)


def test_origins_stay_uniform_over_positions_faces_and_times():
    plan = RegionPlan.balanced(span=33, crop=32, stride=16, per_region=4, window=16)
    assert (plan.stride, plan.size) == (11, 42)  # 33 origins in 3 equal blocks, no sliver
    assert list(plan.counts) == [11, 11, 11] and plan.amplification() == pytest.approx(0.43, 0.01)
    rows = draws(plan, windows=400)  # 25,600 crops in 6,400 groups of 4
    for column, bins in ((0, 5), (1, 6), (2, 33), (3, 33)):  # time, face, oy, ox
        # a group's 4 crops share its time, face and block: counted once per group (counts /
        # 4), the test allows for the clustering
        counts = np.bincount(rows[:, column], minlength=bins) / plan.per_region
        assert chisquare(counts).pvalue > 1e-3, (column, counts)
    # the origins touching a face edge (0 or 32: their crop reaches the halo's outer row) and
    # the four corners get their share: 2/33 and 4/33^2 of the crops
    edge = np.isin(rows[:, 2], (0, 32)).mean()
    corner = (np.isin(rows[:, 2], (0, 32)) & np.isin(rows[:, 3], (0, 32))).mean()
    assert edge == pytest.approx(2 / 33, rel=0.1) and corner == pytest.approx(4 / 33**2, rel=0.3)
    # the same test catches the obvious sampler, whose edges are starved
    bad = np.bincount(naive(plan, 400)[:, 0], minlength=33) / plan.per_region
    assert chisquare(bad).pvalue < 1e-12 and bad[0] < 0.3 * bad[16]


def test_a_batch_mixes_regions_and_times():
    plan = RegionPlan.balanced(span=33, crop=32, stride=16, per_region=4, window=16)
    rows = draws(plan, windows=50)
    batches = rows[: len(rows) // 8 * 8].reshape(-1, 8, 6)  # consecutive batches of 8
    regions = [len({tuple(r[[0, 1, 4, 5]]) for r in b}) for b in batches]
    # 8 crops from 64 shuffled together in groups of 4: ~6.7 regions per batch expected
    assert np.mean(regions) > 6.0 and min(regions) >= 3
    unshuffled = rows.reshape(-1, 4, 6)  # what grouping alone would give: 2 regions a batch
    assert all(len({tuple(r[[0, 1, 4, 5]]) for r in g}) >= 1 for g in unshuffled)


def test_region_crops_equal_independent_crops_and_read_less(tiny_store):
    layout = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)  # padded 24
    plan = RegionPlan.balanced(span=24 - 12 + 1, crop=12, stride=7, per_region=4, window=8)
    counters = []

    def dataset(regions):
        def wrap(store):
            counters.append(ReadCounter(store))
            return counters[-1]

        kw = dict(crop=12, steps=1, samples=64, seed=3, store_wrapper=wrap, regions=regions)
        return CropDataset(str(tiny_store), layout, PROG, DIAG, STATIC, **kw)

    grouped, plain = dataset(plan), dataset(None)
    grouped[0], plain[0]  # opens the arrays (metadata)
    counted = [c.reset() for c in counters]
    fetched = {"grouped": 0, "plain": 0}
    for i in range(1, 64):
        t, face, oy, ox = grouped.draw(i)
        a, b = grouped[i], plain.read_many([(t, face, oy, ox)])[0]
        for key in ("state", "target", "static"):
            got = getattr(a, key).numpy()
            got = got[: len(STATIC)] if key == "static" else got
            assert np.array_equal(got, _stack(b, key, PROG, DIAG, STATIC)), (i, key)
        fetched["grouped"] += counters[0].reset().bytes
        fetched["plain"] += counters[1].reset().bytes
    assert counted[0].metadata_requests > 0
    assert fetched["grouped"] < 0.6 * fetched["plain"], fetched


def _stack(crop: dict, key: str, prog, diag, static) -> np.ndarray:
    """A sample's tensor from :meth:`CropDataset.read_many`'s per-variable crops."""
    if key == "state":
        return np.stack([crop[v][0] for v in prog])
    if key == "target":
        return np.stack([crop[v][1:] for v in prog + diag], axis=1)
    return np.stack([crop[v] for v in static])


def test_under_ddp_each_region_is_drawn_by_one_rank(tiny_store):
    """StepBatches gives rank r the indices step * G + r + j * world: with regions, each rank's
    crops come in whole groups of its own (no region is fetched by two ranks for one group)."""
    from collections import Counter

    from screamcast.train.loop import StepBatches

    layout = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    plan = RegionPlan.balanced(span=13, crop=12, stride=7, per_region=4, window=8)
    G, world, steps = 8, 2, 16  # 4 crops per rank and step: 2 windows of 8 regions each

    def regions_of(shard: tuple, rank: int) -> Counter:
        data = CropDataset(str(tiny_store), layout, PROG, DIAG, STATIC, crop=12, regions=plan)
        data.shard = shard
        s = plan.stride
        keys = Counter()
        for batch in StepBatches(0, steps, G, rank, world):
            for i in batch:
                t, f, oy, ox = data.draw(i)
                keys[(t, f, oy - oy % s, ox - ox % s)] += 1
        return keys

    for rank in range(world):
        owned = regions_of((G, world), rank)
        assert sum(owned.values()) == steps * G // world
        assert all(c % plan.per_region == 0 for c in owned.values()), owned  # whole groups
    # without the sharding, a group's crops land on both ranks: both would fetch its region
    split = regions_of((1, 1), 0)
    assert any(c % plan.per_region for c in split.values())
