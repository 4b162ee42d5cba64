# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""float16 packing of a stack: offsets chosen per channel, the error bound, reads that equal
the stated round trip bit for bit (crops, regions, xarray), and values out of range refused."""

import asyncio

import numpy as np
import pytest
import xarray as xr
import zarr

from screamcast.data import packing, stacked
from screamcast.data.arrays import channel_arrays, read_units

SPEC = stacked.stack_spec([("T", 2, "lev", {}), ("ps", 1, None, {}), ("q", 1, None, {})])
NAMES = ["T[0]", "T[1]", "ps", "q"]


def fields(seed=0, times=3, n=8):
    rng = np.random.default_rng(seed)
    q = np.abs(1e-3 * rng.standard_normal((times, 6, n, n)))
    q[:, 0, :2] = 0.0  # a dry corner
    return {
        "T": 250 + 20 * rng.standard_normal((times, 2, 6, n, n)),
        "ps": 1e5 + 900 * rng.standard_normal((times, 6, n, n)),
        "q": q,
    }


def as_stack(f):
    return np.concatenate([f["T"], f["ps"][:, None], f["q"][:, None]], axis=1)  # (t, 4, 6, n, n)


@pytest.fixture
def packed(tmp_path):
    f = fields()
    group = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    codec = packing.codec(*packing.choose(as_stack(f)[:2], axis=1), axis=1)
    stacked.create_stack(group, SPEC, times=3, n=8, chunk=4, shard=8, packing=codec)
    stacked.write_stack(group, f, 0)
    return tmp_path / "s.zarr", group, f


def test_offsets_are_the_mean_or_zero_for_fields_that_reach_zero():
    offsets, scales = packing.choose(as_stack(fields())[:2], axis=1)
    assert offsets[3] == 0.0 and 240 < offsets[0] < 260 and abs(offsets[2] - 1e5) < 100
    assert all(s > 0 for s in scales)


def test_a_channel_constant_in_the_first_block_is_decided_by_a_later_one():
    """Zero precipitation in the first block must not leave later drizzle to float16's
    subnormals: the channel is packed from the first block where it varies, or, zero
    throughout, for values up to 3.9e-3 at full relative precision."""
    first = np.zeros((2, 3, 4))  # (t, C, points): channel 0 zero, 1 constant 5, 2 varies
    first[:, 1], first[:, 2] = 5.0, [[1.0, 2.0, 3.0, 4.0]] * 2
    later = first.copy()
    later[:, 0] = [[0.0, 1e-7, 3e-6, 2e-5]] * 2
    constant: list[int] = []
    offsets, scales = packing.choose(iter([first, later]), axis=1, constant=constant)
    assert offsets[0] == 0.0 and scales[0] == pytest.approx(2e-5 * 1024 / 65504)
    assert constant == [1] and offsets[1] == 5.0 and scales[1] == pytest.approx(5 * 1024 / 65504)
    assert offsets[2] == 2.5 and scales[2] == pytest.approx(1.5 * 1024 / 65504)
    offsets, scales = packing.choose(first, axis=1, constant=constant)
    assert offsets[0] == 0.0 and scales[0] == packing.ZERO_SCALE and constant == [1, 0, 1]
    drizzle = np.array([0.0, 1e-9, 1e-7, 3e-6, 3.9e-3], np.float32).reshape(1, 5)
    codec = packing.codec([0.0], [packing.ZERO_SCALE], axis=0)
    back = packing.round_trip(codec, drizzle[None], slice(0, 1))[0]  # (1, 5)
    assert np.all(np.abs(back - drizzle) <= 2.0**-11 * drizzle + 1e-30)
    # constant 5 in one block, then 6: both values count
    offsets, scales = packing.choose(iter([np.full((1, 1, 2), 5.0), np.full((1, 1, 2), 6.0)]), 1)
    assert offsets == [6.0] and scales[0] == pytest.approx(1 * 1024 / 65504)


def test_reads_equal_the_round_trip_within_the_bound(packed):
    path, group, f = packed
    x = as_stack(f).astype(np.float32)
    got = group["fields"][:]
    assert got.dtype == np.float32
    codec = packing.of(group["fields"])
    np.testing.assert_array_equal(got, packing.round_trip(codec, x, slice(0, 4)))
    stored = stacked.as_stored(group, {k: v.astype(np.float32) for k, v in f.items()})
    np.testing.assert_array_equal(stored["T"], got[:, :2])
    off = np.array(codec.offset).reshape(1, -1, 1, 1, 1)
    step = np.array(codec.scale).reshape(1, -1, 1, 1, 1) * 2.0**-25
    bound = np.maximum(2.0**-11 * np.abs(x - off), step) + 1e-6 * np.abs(x)
    assert (np.abs(got - x) <= bound).all()
    err = np.abs(got - x).max(axis=(0, 2, 3, 4))
    assert err[2] < 1.5 and err[0] < 0.05 and err[3] < 1e-6  # Pa, K, kg/kg
    assert (got[:, 3] >= 0).all() and (got[:, 3, 0, :2] == 0).all()  # zeros stay zero
    ds = stacked.unstack(xr.open_zarr(path, chunks=None, consolidated=False))
    np.testing.assert_array_equal(ds["ps"].values, got[:, 2])
    arrays = channel_arrays(group, NAMES, str(path))
    ((names, unit),) = read_units(arrays, NAMES, whole_shards=True)
    box = asyncio.run(unit.getitem((1, 2, slice(1, 7), slice(0, 5))))  # (channels, 6, 5)
    np.testing.assert_array_equal(box, got[1, :, 2, 1:7, 0:5])


def test_values_beyond_the_range_are_refused_before_anything_is_written(packed):
    path, group, f = packed
    before = group["fields"][:]
    f["T"][2, 1, 3, 0, 0] = 1e9
    with pytest.raises(packing.PackingError, match=r"channel T\[1\].*--dtype float32"):
        stacked.write_stack(group, f, 0)
    np.testing.assert_array_equal(group["fields"][:], before)


def test_a_plain_float32_stack_has_no_packing(tmp_path):
    group = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    stacked.create_stack(group, SPEC, times=1, n=8, chunk=4, shard=8)
    assert packing.of(group["fields"]) is None
    f = {k: v[:1] for k, v in fields().items()}
    assert stacked.as_stored(group, f) is f


def test_an_exact_channel_is_stored_as_float32_beside_float16_ones(tmp_path):
    """ps kept float32 (its 32 bits as two float16 words): read back bit for bit, NaN (a
    missing time) included, through zarr and through xarray; the float16 channels within
    2**-11 of their offsets' distance; the metadata says which channel is which dtype."""
    f = fields()
    f["ps"][1, 2, 3, 4] = np.nan
    x = as_stack(f).astype(np.float32)  # (t, 4, 6, n, n)
    group = zarr.open_group(tmp_path / "m.zarr", mode="w", zarr_format=3)
    offsets, scales = packing.choose(x[:2], axis=1)
    codec = packing.codec(offsets, scales, axis=1, exact=[2])
    stacked.create_stack(group, SPEC, times=3, n=8, chunk=4, shard=8, packing=codec)
    stacked.write_stack(group, f, t0=0)
    array = zarr.open_group(tmp_path / "m.zarr", mode="r")["fields"]
    assert packing.of(array).dtypes() == ["float16", "float16", "float32", "float16"]
    back = array[:]
    assert np.array_equal(back[:, 2], x[:, 2], equal_nan=True)
    assert np.isnan(back[1, 2, 2, 3, 4])
    err = np.abs(back[:, :2] - x[:, :2]).max()
    assert 0 < err <= 2.0**-11 * np.abs(x[:, :2] - 250).max() * 1.01
    ps = stacked.unstack(xr.open_zarr(tmp_path / "m.zarr", chunks=None))["ps"].values
    assert np.array_equal(ps, x[:, 2], equal_nan=True)
    assert np.array_equal(packing.round_trip(codec, x, slice(0, 4))[:, 2], x[:, 2], True)
    with pytest.raises(packing.PackingError, match="channel T\\[0\\]"):
        packing.check_range(codec, x * np.array([1e6, 1, 1, 1]).reshape(1, 4, 1, 1, 1), NAMES)
    packing.check_range(codec, x * np.array([1, 1, 1e30, 1]).reshape(1, 4, 1, 1, 1), NAMES)


def test_a_store_without_exact_channels_keeps_its_metadata():
    codec = packing.codec([0.0, 1.0], [1.0, 2.0], axis=1)
    assert "exact" not in codec.to_dict()["configuration"]
    assert packing.ChannelPacking.from_dict(codec.to_dict()) == codec
    mixed = packing.codec([0.0, 1.0], [1.0, 2.0], axis=1, exact=[1])
    assert packing.ChannelPacking.from_dict(mixed.to_dict()).exact == (1,)
    with pytest.raises(ValueError, match="exact channels"):
        packing.codec([0.0], [1.0], axis=1, exact=[3])


def test_an_exact_channel_one_past_the_last_is_refused():
    """Of C = 4 channels the last (3) may be exact, and comes back bit for bit through the
    codec's own encode and decode; 4, one past the end, is refused, whether given in code or
    read from a store's metadata (it would name a high word's slot, not a channel)."""
    x = as_stack(fields()).astype(np.float32)[:1]  # (1, 4, 6, n, n)
    offsets, scales = packing.choose(x, axis=1)
    last = packing.codec(offsets, scales, axis=1, exact=[3])
    stored = last.encode_chunk(x)
    assert stored.shape[1] == 5 and stored.dtype == np.float16
    assert np.array_equal(last.decode_chunk(stored)[:, 3], x[:, 3])
    with pytest.raises(ValueError, match=r"exact channels \[4\] not distinct in \[0, C\)"):
        packing.codec(offsets, scales, axis=1, exact=[4])
    metadata = last.to_dict()
    metadata["configuration"]["exact"] = [4]
    with pytest.raises(ValueError, match=r"exact channels \[4\]"):
        packing.ChannelPacking.from_dict(metadata)
