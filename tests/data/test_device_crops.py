# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import cftime
import numpy as np
import pytest
import torch
import zarr
from zarr.core.sync import sync

from screamcast.data import packing, stacked
from screamcast.data.calendar import encode
from screamcast.data.dataset import CropDataset
from screamcast.data.device_crops import DeviceBatches
from screamcast.data.region_sampler import RegionPlan
from screamcast.data.remote import StoreError
from screamcast.grid import PhysicsGrid, TileLayout

N, CROP, HALO = 16, 12, 4
PROG, DIAG, STATIC = ["T[0]", "T[1]", "T[2]", "ps"], ["pr"], ["oro"]


@pytest.fixture(scope="module")
def layout():
    return TileLayout(PhysicsGrid.for_face_size(N), tile=8, halo=HALO)


def write_packed(root, times: int = 8, exact: bool = True, unwritten: int = 0):
    """A packed stack as the ingestion writes it: T on 3 levels and pr float16, ps (channel 3)
    float32 as two words, shards of a face split in 2 x 2 inner chunks; a packed static.
    ``unwritten``: the last times left unwritten (an ingestion stopped part way)."""
    group = zarr.open_group(root, mode="w", zarr_format=3)
    dates = [cftime.DatetimeNoLeap(2020, 1, 1, 3 * h) for h in range(times)]
    counts, units, calendar = encode(np.array(dates))
    t = group.create_array("time", shape=(times,), dtype="int64", dimension_names=["time"])
    t[:] = counts
    t.attrs.update({"units": units, "calendar": calendar})
    rng = np.random.default_rng(1)
    spec = stacked.stack_spec([("T", 3, "lev", {}), ("ps", 1, None, {}), ("pr", 1, None, {})])
    x = rng.standard_normal((times, 5, 6, N, N)).astype(np.float32) * 3 + 250
    x[:, 3] = 1e5 + 800 * rng.standard_normal((times, 6, N, N))  # needs float32 (1 Pa)
    offsets, scales = packing.choose(x[:1], axis=1)
    codec = packing.codec(offsets, scales, axis=1, exact=[3] if exact else [])
    written = times - unwritten
    stacked.create_stack(group, spec, times, N, N // 2, N, codec)[:written] = x[:written]
    oro = rng.standard_normal((1, 6, N, N)).astype(np.float32) * 100
    s_codec = packing.codec(*packing.choose(oro, axis=0), axis=0)
    static = stacked.create_stack(group, stacked.stack_spec([("oro", 1, None, {})]), None, N,
                                  N // 2, N, s_codec)  # fmt: skip
    static[:] = oro
    return root


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    return write_packed(tmp_path_factory.mktemp("stores") / "packed.zarr")


def crops(store, layout, per_region=3, window=2, **kw):
    span = layout.padded - CROP + 1
    plan = RegionPlan.balanced(span, CROP, 5, per_region, window)
    args = dict(crop=CROP, steps=2, samples=60, seed=4, regions=plan) | kw
    return CropDataset(str(store), layout, PROG, DIAG, STATIC, **args)


def cpu_batches(data, start, stop, batch):
    """What the DataLoader over ``data`` with StepBatches gives rank 0 of 1."""
    for step in range(start, stop):
        samples = data.__getitems__([step * batch + j for j in range(batch)])
        yield type(samples[0])(*(torch.stack(f) for f in zip(*samples, strict=True)))


def assert_close_batches(got, want):
    """Every field equal to float32 rounding (the ring's float64 sums added in another
    order); the bookkeeping exactly."""
    for key, a, b in zip(want._fields, got, want, strict=True):
        tol = 0 if key in ("time", "face", "origin", "state") else 2e-6
        torch.testing.assert_close(a, b, rtol=tol, atol=tol * 1e3, msg=key)


@pytest.mark.parametrize("start", [0, 3])
def test_device_batches_are_the_cpu_batches(packed, layout, start):
    """The same crops in the same order as the CPU path, from a packed stack with a float32
    channel; a batch (4) that does not divide a window (6 crops) and a resumed start."""
    cpu, dev = crops(packed, layout), crops(packed, layout)
    got = list(DeviceBatches(dev, 0, (start, 9), 4, "cpu"))
    want = list(cpu_batches(cpu, start, 9, 4))
    assert len(got) == len(want) == 9 - start
    for g, w in zip(got, want, strict=True):
        assert_close_batches(g, w)
    edges = torch.cat([b.origin for b in got])
    assert (edges < HALO).any(), "no crop reached into the halo ring"


@pytest.mark.parametrize("rank, start", [(0, 1), (1, 0), (1, 2)])
def test_each_rank_gets_its_cpu_batches(packed, layout, rank, start):
    """Two ranks (global batch 8, 4 a rank) on a store without statics: rank ``rank``'s
    batches are the CPU path's under StepBatches, from any start."""
    world, per_rank = 2, 4
    make = lambda: CropDataset(  # noqa: E731
        str(packed), layout, PROG, DIAG, [], crop=CROP, steps=2, samples=60, seed=4,
        regions=crops(packed, layout).regions,
    )  # fmt: skip
    cpu, dev = make(), make()
    for data in (cpu, dev):
        data.shard = (per_rank * world, world)
    got = list(DeviceBatches(dev, rank, (start, 6), per_rank, "cpu"))
    for step, g in zip(range(start, 6), got, strict=True):
        G = per_rank * world
        samples = cpu.__getitems__([step * G + i for i in range(rank, G, world)])
        assert_close_batches(g, type(g)(*(torch.stack(f) for f in zip(*samples, strict=True))))


def test_unpacked_stores_and_workers(tiny_store, layout):
    """A per-variable float32 store (no words to unpack) cut on the device, windows read by
    two workers: the CPU path's batches."""
    names = dict(prognostic=["u", "v", "tracer"], diagnostic=["precip"], static=["orography"])
    make = lambda: CropDataset(  # noqa: E731
        str(tiny_store), layout, **names, crop=CROP, steps=1, samples=40, seed=2,
        regions=RegionPlan.balanced(layout.padded - CROP + 1, CROP, 4, 4, 2),
    )  # fmt: skip
    got = list(DeviceBatches(make(), 0, (0, 5), 3, "cpu", num_workers=2))
    for g, w in zip(got, cpu_batches(make(), 0, 5, 3), strict=True):
        assert_close_batches(g, w)


def test_raw_words_unpack_to_the_stores_values(packed):
    """The words read past the packing and unpacked by torch are zarr's values bit for bit,
    the float32 channel's too."""
    from screamcast.data.arrays import channel_arrays, read_units
    from screamcast.data.stacked import channel_names

    group = zarr.open_group(packed, mode="r")
    names = channel_names(group.attrs["stacked"]["fields"])
    [(_, unit)] = read_units(channel_arrays(group, names, str(packed)), names, whole_shards=True)
    sel = (slice(2, 4), 1, slice(3, 11), slice(0, 16))
    words = torch.from_numpy(sync(unit.getitem(sel, raw=True)))
    assert words.dtype == torch.float16 and words.shape[0] == 6  # 5 channels, ps's high word
    values = unit.decoder.decode(words, 0).numpy()
    np.testing.assert_array_equal(values, group["fields"][2:4, :, 1, 3:11].transpose(1, 0, 2, 3))


def test_unwritten_chunks_unpack_to_nan_in_float32_channels_too(tmp_path):
    """A chunk never written holds the fill word in both halves of ps's float32: NaN, as zarr
    reads it (joined, the two words would be the finite 4.27e37)."""
    from screamcast.data.arrays import channel_arrays, read_units

    store = write_packed(tmp_path / "part.zarr", unwritten=2)
    group = zarr.open_group(store, mode="r")
    [(_, unit)] = read_units(channel_arrays(group, ["ps"], str(store)), ["ps"])
    sel = (slice(5, 8), 2, slice(0, 8), slice(0, 8))
    values = unit.decoder.decode(torch.from_numpy(sync(unit.getitem(sel, raw=True))), 0)
    want = group["fields"][5:8, 3, 2, :8, :8]
    assert np.isnan(want[1:]).all() and np.isfinite(want[0]).all()
    np.testing.assert_array_equal(values[0].numpy(), want)


def test_a_non_finite_region_is_refused_naming_the_variable(tmp_path, layout):
    store = write_packed(tmp_path / "holed.zarr", exact=False)
    fields = zarr.open_group(store, mode="r+")["fields"]
    fields[5, 4] = float("nan")  # pr at time 5, every face
    data = crops(store, layout, per_region=8, window=6, time_range=(4, 7), steps=1)
    message = r"non-finite value in 'pr' at time index 5 .*, face \d, extended-face pixel"
    with pytest.raises(StoreError, match=message):
        list(DeviceBatches(data, 0, (0, 12), 4, "cpu"))
