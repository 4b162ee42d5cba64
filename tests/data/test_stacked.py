# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stacked layout: shard sizes, where each channel lies, and the store unstacked for xarray."""

import numpy as np
import pytest
import xarray as xr
import zarr

from screamcast.data import stacked
from screamcast.data.arrays import ReadUnit, channel_arrays, read_units
from screamcast.data.remote import StoreError


def test_shard_sides_follow_zarrs_rule_and_the_face():
    assert stacked.shard_side(256, 128, 512) == (128, 256)  # a shard per face
    assert stacked.shard_side(2048, 128, 512) == (128, 512)  # 16 shards per face
    assert stacked.shard_side(48, 128, 512) == (48, 48)  # small faces: one chunk
    assert stacked.shard_side(60, 32, 100) == (32, 64)  # a multiple of the chunk, >= the face
    assert stacked.shard_side(256, 64, 100) == (64, 64)


SPEC = stacked.stack_spec([("T", 3, "lev", {"units": "K"}), ("ps", 1, None, {"units": "Pa"})])


@pytest.fixture
def store(tmp_path):
    group = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    array = stacked.create_stack(group, SPEC, times=2, n=6, chunk=4, shard=8)
    values = np.arange(array.size, dtype=np.float32).reshape(array.shape)
    array[:] = values
    lev = group.create_array("lev", shape=(3,), dtype="float64", dimension_names=["lev"])
    lev[:] = [100.0, 500.0, 900.0]
    return tmp_path / "s.zarr", values


def test_the_stack_unstacks_into_the_stores_variables(store):
    path, values = store
    assert SPEC == [["T", 0, 3, "lev", {"units": "K"}], ["ps", 3, 4, None, {"units": "Pa"}]]
    assert stacked.channel_names(SPEC) == ["T[0]", "T[1]", "T[2]", "ps"]
    group = zarr.open_group(path, mode="r")
    assert group["fields"].shards == (1, 4, 1, 8, 8) and group["fields"].chunks == (1, 4, 1, 4, 4)
    ds = stacked.unstack(xr.open_zarr(path, chunks=None, consolidated=False))
    assert set(ds.data_vars) == {"T", "ps"} and "stacked" not in ds.attrs
    assert ds["T"].dims == ("time", "lev", "face", "y", "x") and ds["T"].attrs == {"units": "K"}
    assert ds["ps"].dims == ("time", "face", "y", "x")
    np.testing.assert_array_equal(ds["T"].values, values[:, :3])
    np.testing.assert_array_equal(ds["ps"].values, values[:, 3])
    np.testing.assert_array_equal(ds["lev"].values, [100.0, 500.0, 900.0])
    plain = xr.Dataset({"u": (("time",), [1.0])})
    assert stacked.unstack(plain) is plain  # not stacked: as it is


def test_the_channel_axes_are_labelled_and_unstacked_away(store):
    """Plain xarray sees the channels by name with their units (the static stack's too); the
    unstacked dataset has neither label, and its variables keep their own units."""
    path, values = store
    group = zarr.open_group(path, mode="r+")
    static = [("height", 1, None, {"units": "m"}), ("mask", 1, None, {})]
    stacked.create_stack(group, stacked.stack_spec(static), None, n=6, chunk=4, shard=8)
    raw = xr.open_zarr(path, chunks=None, consolidated=False)
    assert list(raw["channel"].values) == ["T[0]", "T[1]", "T[2]", "ps"]
    assert list(raw["fields"]["channel_units"].values) == ["K", "K", "K", "Pa"]
    assert list(raw["static_channel"].values) == ["height", "mask"]
    assert list(raw["static_channel_units"].values) == ["m", ""]
    np.testing.assert_array_equal(raw["fields"].sel(channel="ps").values, values[:, 3])
    ds = stacked.unstack(raw)
    assert not {"channel", "channel_units", "static_channel", "static_channel_units"} & set(
        ds.variables
    )
    assert ds["height"].dims == ("face", "y", "x") and ds["height"].attrs == {"units": "m"}
    assert ds["ps"].attrs == {"units": "Pa"}


def test_channels_are_found_in_the_stack_and_read_together(store):
    path, values = store
    spec = {"fields": SPEC}
    assert stacked.stack_index(spec, "T", 2) == ("fields", 2)
    assert stacked.stack_index(spec, "ps", None) == ("fields", 3)
    assert (
        stacked.stack_index(spec, "T", 3) is None and stacked.stack_index(spec, "q", None) is None
    )
    group = zarr.open_group(path, mode="r")
    arrays = channel_arrays(group, ["ps", "T[2]", "T[0]"], str(path))
    units = read_units(arrays, ["ps", "T[2]", "T[0]"], whole_shards=True)
    assert len(units) == 1 and units[0][0] == ["ps", "T[2]", "T[0]"]  # one read for all
    sel = (slice(0, 2), 5, slice(1, 3), slice(2, 6))
    import asyncio

    got = asyncio.run(units[0][1].getitem(sel))  # (channels, time, y, x)
    want = values[0:2, [3, 2, 0], 5, 1:3, 2:6].transpose(1, 0, 2, 3)
    np.testing.assert_array_equal(got, want)
    part = ReadUnit([arrays["T[2]"]], whole_shards=False)
    np.testing.assert_array_equal(asyncio.run(part.getitem(sel))[0], values[0:2, 2, 5, 1:3, 2:6])
    with pytest.raises(StoreError, match=r"s.zarr has no channel 'q' \(it has: T\[0\], T\[1\]"):
        channel_arrays(group, ["q"], str(path))


def test_every_variable_of_a_time_decodes_the_stack_once(store, monkeypatch):
    """The unstacked variables share a one-block cache: all of them at one time cost the
    requests of one of them (each stack chunk holds every channel), with the right values."""
    from screamcast.data import store as store_module
    from screamcast.data.read_counter import ReadCounter

    path, values = store
    counters = []
    real = store_module.zarr_store

    def counted(*args, **kw):
        counters.append(ReadCounter(real(*args, **kw)))
        return counters[-1]

    monkeypatch.setattr(store_module, "zarr_store", counted)
    ds = stacked.unstack(xr.open_zarr(counted(str(path)), chunks=None, consolidated=False))
    counters[-1].reset()
    one = ds["ps"].isel(time=1).values
    alone = counters[-1].reset().requests
    got = ds[["T", "ps"]].isel(time=0).to_array().values  # (variable, lev, face, y, x)
    assert 0 < counters[-1].reset().requests == alone  # one face shard each, once
    np.testing.assert_array_equal(one, values[1, 3])
    np.testing.assert_array_equal(got[0], values[0, 0:3])  # T (lev, face, y, x)
    np.testing.assert_array_equal(got[1], np.broadcast_to(values[0, 3], (3, 6, 6, 6)))  # ps
    np.testing.assert_array_equal(ds["T"].isel(lev=2, y=slice(1, 4)).values, values[:, 2, :, 1:4])
