# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The local shard cache: a second epoch over the same regions reads nothing from the store,
gives the same crops, and the cache directory never holds more than its bound."""

import numpy as np
import pytest
import zarr

from screamcast.data import stacked
from screamcast.data.calendar import encode
from screamcast.data.dataset import CropDataset
from screamcast.data.read_counter import ReadCounter
from screamcast.data.region_sampler import RegionPlan
from screamcast.data.shard_cache import ShardCache
from screamcast.grid import PhysicsGrid, TileLayout


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    import cftime

    root = tmp_path_factory.mktemp("cache") / "s.zarr"
    group = zarr.open_group(root, mode="w", zarr_format=3)
    counts, units, calendar = encode(
        np.array([cftime.DatetimeNoLeap(2020, 1, 1, h) for h in range(4)])
    )
    t = group.create_array("time", shape=(4,), dtype="int64", dimension_names=["time"])
    t[:] = counts
    t.attrs.update({"units": units, "calendar": calendar})
    spec = stacked.stack_spec([("T", 2, "lev", {}), ("ps", 1, None, {})])
    array = stacked.create_stack(group, spec, 4, 16, 8, 16)  # a shard per face and time
    array[:] = np.random.default_rng(0).standard_normal(array.shape, np.float32)
    return root


def crops(store, wrap, epoch=0):
    layout = TileLayout(PhysicsGrid.for_face_size(16), 8, 4)
    regions = RegionPlan.balanced(layout.padded - 16 + 1, 16, 9, 4, 2)
    data = CropDataset(
        str(store),
        layout,
        ["T[0]", "T[1]", "ps"],
        crop=16,
        samples=16,
        store_wrapper=wrap,
        regions=regions,
    )
    data.set_epoch(epoch)
    return [b.state.numpy() for b in data.__getitems__(list(range(16)))]


def test_a_second_epoch_comes_from_the_cache(store, tmp_path):
    counters = []

    def wrap(s):
        counters.append(ReadCounter(s))
        return ShardCache(counters[-1], tmp_path / "cache", max_bytes=2**30)

    plain = crops(store, None)
    first = crops(store, wrap)
    fetched = counters[-1].reset()
    again = crops(store, wrap)
    assert fetched.requests > 0 and counters[-1].reset().requests == 0  # all from the cache
    for a, b, c in zip(plain, first, again, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    shard = 3 * 16 * 16 * 4  # float32 channels x face, compressed a little
    assert 0 < ShardCache(None, tmp_path / "cache", 1).size() <= fetched.bytes
    assert fetched.bytes <= 12 * 2 * shard  # whole shards, each read once


def test_the_cache_stays_within_its_bound(store, tmp_path):
    bound = 3 * 3500  # about three shards
    counters = []

    def wrap(s):
        counters.append(ReadCounter(s))
        return ShardCache(counters[-1], tmp_path / "small", max_bytes=bound)

    for epoch in range(3):
        crops(store, wrap, epoch)
        cache = ShardCache(None, tmp_path / "small", bound)
        assert 0 < cache.size() <= bound
    assert not list((tmp_path / "small").glob("*.tmp"))
    with pytest.raises(ValueError, match="max_bytes must be positive, got 0"):
        ShardCache(None, tmp_path / "x", 0)


def test_the_least_recently_used_object_is_evicted(tmp_path):
    """Three objects, room for two: after A, B, then A again, C evicts B (the least recently
    used), not A (the least recently stored)."""
    import asyncio
    import time

    from zarr.core.buffer import default_buffer_prototype

    proto = default_buffer_prototype()
    memory = zarr.storage.MemoryStore()
    for key in ("a/c/0", "b/c/0", "c/c/0"):
        asyncio.run(memory.set(key, proto.buffer.from_bytes(bytes(1000))))
    cache = ShardCache(memory, tmp_path / "lru", max_bytes=2500)

    def read(key):
        asyncio.run(cache.get(key, proto))
        time.sleep(0.02)  # distinct modification times

    for key in ("a/c/0", "b/c/0", "a/c/0", "c/c/0"):
        read(key)
    assert cache._path("a/c/0").exists() and cache._path("c/c/0").exists()
    assert not cache._path("b/c/0").exists()
