# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import time

import numpy as np
import pytest
import torch
import xarray as xr
import zarr

from screamcast.data import dataset as dsmod
from screamcast.data import in_memory as memmod
from screamcast.data.dataset import CropDataset
from screamcast.data.remote import BOTO_ATTEMPTS, StoreError
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator

PROG, DIAG, STATIC = ["u", "v", "tracer"], ["precip"], ["orography"]


def assert_same_batch(a, b, msg: str = "") -> None:
    """Every field of two samples (or batches) equal, bit for bit."""
    for key, got, want in zip(a._fields, a, b, strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0, msg=f"{msg} {key}")


@pytest.fixture(scope="module")
def layout():
    return TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)


def make(store, layout, **kw):
    args = dict(crop=12, steps=2, samples=40, seed=3) | kw
    return CropDataset(str(store), layout, PROG, DIAG, STATIC, **args)


def test_crops_are_windows_of_the_rollouts_extended_faces(tiny_store, layout):
    """Crops reaching across edges carry the same KNN halo as HaloOperator (the rollout)."""
    data = make(tiny_store, layout)
    truth = xr.open_zarr(tiny_store, chunks=None)[PROG + DIAG].to_array().values  # (V, T, 6, n, n)
    op = HaloOperator(layout)
    across = 0
    for i in range(len(data)):
        item, (t, f, oy, ox) = data[i], data.draw(i)
        across += oy < 4 or ox < 4 or oy + 12 > 20 or ox + 12 > 20
        fields = truth[:, t : t + 3]  # (V, 3, 6, n, n)
        ext = op.extend(torch.from_numpy(fields).double().permute(1, 0, 2, 3, 4))
        window = ext[..., f, oy : oy + 12, ox : ox + 12].float()  # (3, V, S, S)
        torch.testing.assert_close(item.state, window[0, :3], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(item.target, window[1:], rtol=1e-5, atol=1e-5)
    assert across > 20, "too few crops reached across a face edge"
    assert item.forcing.shape == (3, 1, 12, 12) and item.static.shape == (5, 12, 12)
    assert 0 <= float(item.forcing.min()) and float(item.forcing.max()) <= 1


def test_deterministic_per_seed_and_epoch(tiny_store, layout):
    a, b = make(tiny_store, layout), make(tiny_store, layout)
    first = [a.draw(i) for i in (5, 700, 5, 255, 256)]  # across blocks of draws, out of order
    assert first == [b.draw(i) for i in (5, 700, 5, 255, 256)] and first[0] == first[2]
    assert len(set(first)) == 4
    b.set_epoch(1)
    assert a.draw(5) != b.draw(5)
    fixed = make(tiny_store, layout, fixed=True)
    before = fixed.draw(5)
    fixed.set_epoch(7)
    assert fixed.draw(5) == before


def test_time_range_holds_out_a_period(tiny_store, layout):
    valid = make(tiny_store, layout, time_range=(12, 17), fixed=True, samples=30)
    assert all(12 <= valid.draw(i)[0] <= 14 for i in range(30))
    with pytest.raises(ValueError, match="too short for 2-step samples"):
        make(tiny_store, layout, time_range=(15, 17))


def test_dataloader_workers_and_distributed_sampler(tiny_store, layout):
    data = make(tiny_store, layout, samples=8)
    serial = [b.state for b in torch.utils.data.DataLoader(data, batch_size=4)]
    loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=2)
    parallel = [b.state for b in loader]
    for x, y in zip(serial, parallel, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)
    parts = [
        list(torch.utils.data.DistributedSampler(data, num_replicas=2, rank=r, shuffle=False))
        for r in (0, 1)
    ]
    assert sorted(parts[0] + parts[1]) == list(range(8))


def test_a_crop_reads_only_the_chunks_it_needs(tiny_store, layout, monkeypatch):
    stores = []

    def logging_store(url, options=None, retries=3, client="s3fs"):
        stores.append(zarr.storage.LoggingStore(zarr.storage.LocalStore(url, read_only=True)))
        return stores[-1]

    monkeypatch.setattr(dsmod, "zarr_store", logging_store)
    data = make(tiny_store, layout, crop=6, steps=1)
    data._open()  # metadata reads are not what is counted
    stores[-1].counter.clear()
    data.read(3, face=2, oy=5, ox=5)  # face pixels 1..6: inside chunk (0, 0) of face 2
    # 5 variables; 4 time-dependent ones at 2 times, the static one once: 9 chunks of 8x8
    assert stores[-1].counter["get"] == 9, dict(stores[-1].counter)
    stores[-1].counter.clear()
    data.read(3, face=2, oy=0, ox=0)  # reaches into two neighbour faces: a strip of each
    assert 9 < stores[-1].counter["get"] <= 9 * 4, dict(stores[-1].counter)


@pytest.mark.parametrize("in_memory", [False, True])
def test_non_finite_values_are_reported_with_their_place(tmp_path, layout, in_memory):
    """Lazily when a crop touching the pixel is read; in memory when the range is loaded."""
    from screamcast.sources.synthetic import write_store

    path = write_store(tmp_path / "nan.zarr", 16, days=0.5, step_hours=3, chunk=8)
    arr = zarr.open_array(path / "tracer", mode="r+")
    arr[2, 1, 3, 4] = np.nan
    data = make(path, layout, steps=1, in_memory=in_memory)
    with pytest.raises(
        StoreError,
        match="non-finite value in 'tracer' at time index 2 .*face 1, .*face pixel \\(y=3, x=4\\)",
    ):
        data.read(2, face=1, oy=0, ox=0)
    # in memory only the dataset's time range is loaded (and checked)
    later = make(path, layout, steps=1, in_memory=True, time_range=(3, 5))
    assert later[0].state.isfinite().all()


def test_a_stacked_store_gives_the_samples_of_the_per_variable_one(
    tiny_store, layout, tmp_path, monkeypatch
):
    """The demo store is written stacked (one ``fields`` array, statics in ``static_fields``):
    lazily, in whole-shard regions and in memory, its samples are the per-variable store's,
    bit for bit, and a lazy crop reads one shard per face and time, not one chunk per
    variable."""
    from screamcast.data.region_sampler import RegionPlan
    from screamcast.sources.synthetic import write_store
    from tests.conftest import TINY

    stacked = write_store(tmp_path / "stacked.zarr", **TINY, layout="stacked")
    assert "fields" in zarr.open_group(stacked, mode="r") and not (stacked / "u").exists()
    plan = RegionPlan.balanced(span=20 - 12 + 1, crop=12, stride=9, per_region=4, window=2)
    for kw in ({}, {"in_memory": True}, {"regions": plan}):
        a, b = make(tiny_store, layout, **kw), make(stacked, layout, **kw)
        for i in (0, 7, 30):
            x, y = a[i], b[i]
            assert_same_batch(x, y, f"{kw}")
    gets = {}
    for path in (tiny_store, stacked):
        store = zarr.storage.LoggingStore(zarr.storage.LocalStore(path, read_only=True))
        monkeypatch.setattr(dsmod, "zarr_store", lambda *a, **k: store)  # noqa: B023
        data = make(path, layout, crop=6, steps=1)
        data._open()  # metadata reads are not what is counted
        store.counter.clear()
        data.read(3, face=2, oy=5, ox=5)  # inside one 8 x 8 chunk of face 2
        gets[path] = store.counter["get"]
    # 4 time-dependent variables at 2 times and 1 static: 9 chunks; stacked, per time and for
    # the statics one shard's index and the one inner chunk holding every channel: 6 reads
    assert gets == {tiny_store: 9, stacked: 6}, gets


def test_a_batch_is_its_samples(tiny_store, layout):
    """``__getitems__`` (what the DataLoader calls) == the samples one by one, bit for bit,
    lazily and in memory; in memory the extended faces of the time range only are held."""
    for in_memory in (False, True):
        data = make(tiny_store, layout, in_memory=in_memory, time_range=(4, 15))
        batch = data.__getitems__([7, 3, 7, 30])
        for i, item in zip([7, 3, 7, 30], batch, strict=True):
            single = data[i]
            assert_same_batch(item, single)
    assert data._arrays[("u", "v", "tracer", "precip")].shape == (4, 11, 6, 24, 24)
    for t in (3, 13):  # 13 + 2 steps would reach past the range's end
        with pytest.raises(IndexError, match=f"time index {t} is outside .* loaded range 4:15"):
            data.read(t, face=0, oy=0, ox=0)
    assert data.read(12, face=0, oy=0, ox=0)["u"].shape == (3, 12, 12)


@pytest.mark.s3
def test_s3_samples_equal_local_samples(s3, small_store):
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2)
    kw = dict(crop=6, steps=1, samples=4, seed=1)
    local = CropDataset(str(small_store), layout, PROG, DIAG, STATIC, **kw)
    remote = CropDataset(s3["url"], layout, PROG, DIAG, STATIC, storage_options=s3["options"], **kw)
    for a, b in zip([local[i] for i in range(4)], remote.__getitems__(range(4)), strict=True):
        assert_same_batch(a, b)


@pytest.mark.s3
def test_obstore_samples_equal_local_samples(s3, small_store):
    """data.s3_client=obstore: the same crops, bit for bit, through obstore's S3 client; a
    misspelt client is refused, naming the choices."""
    pytest.importorskip("obstore")
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2)
    kw = dict(crop=6, steps=2, samples=8, seed=3)
    local = CropDataset(str(small_store), layout, PROG, DIAG, STATIC, **kw)
    remote = small_s3_crops(layout, s3["options"], s3_client="obstore", **kw)
    for a, b in zip(local.__getitems__(range(8)), remote.__getitems__(range(8)), strict=True):
        assert_same_batch(a, b)
    assert type(remote._open()[PROG[0]].array.store).__name__ == "ObjectStore"
    bad = small_s3_crops(layout, s3["options"], s3_client="boto", **kw)
    with pytest.raises(StoreError, match="S3 client must be 's3fs' or 'obstore', got 'boto'"):
        bad[0]


@pytest.mark.s3
def test_obstore_throttling_is_retried_then_reported(flaky_s3, small_store):
    """The same 503 SlowDown proxy through obstore: its own retries (BOTO_ATTEMPTS tries per
    request), then the dataset's per-sample ones; past both, the error names the read."""
    pytest.importorskip("obstore")
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2)
    kw = dict(crop=6, steps=1, samples=2, seed=1, backoff=0.01, s3_client="obstore")
    local = CropDataset(str(small_store), layout, PROG, DIAG, STATIC, crop=6, samples=2, seed=1)
    proxy, options = flaky_s3("/u/c/0/0/", failures=BOTO_ATTEMPTS + 2)  # 2 sample reads
    a, b = local[1], small_s3_crops(layout, options, **kw)[1]
    assert_same_batch(a, b)
    assert proxy.refused == BOTO_ATTEMPTS + 2

    proxy, options = flaky_s3("/tracer/c/", failures=None)  # tracer never answers
    remote = small_s3_crops(layout, options, **kw | dict(retries=1))
    with pytest.raises(Exception, match="Service Unavailable|SlowDown") as err:
        remote[0]
    notes = "\n".join(err.value.__notes__)
    assert "reading 'tracer'[" in notes and "still failing after 1 retries" in notes
    assert proxy.refused >= 2 * 2


def small_s3_crops(layout, options, **kw) -> CropDataset:
    return CropDataset(
        "s3://data/small.zarr", layout, PROG, DIAG, STATIC, storage_options=options, **kw
    )


@pytest.mark.s3
def test_s3_throttling_is_retried_then_reported(flaky_s3, small_store):
    """503 SlowDown on real HTTP between s3fs and the server: botocore retries each request
    (2 tries here, to keep the test short), then the dataset reads the sample again (7
    refusals need 4 sample reads); past that, the error names the variable, the region, the
    store and the crop."""
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2)
    kw = dict(crop=6, steps=1, samples=2, seed=1, backoff=0.01)
    local = CropDataset(str(small_store), layout, PROG, DIAG, STATIC, **kw)
    assert local.draw(1) == (0, 0, 5, 6)  # a crop that reaches into 2 neighbour faces
    two_tries = {"config_kwargs": {"retries": {"mode": "standard", "max_attempts": 2}}}
    # one chunk of u (time 0, face 0): 7 refusals, then data. One chunk, so that no sibling's
    # failure cancels its reads: each sample read gives it exactly botocore's 2 tries
    proxy, options = flaky_s3("/u/c/0/0/", failures=7)
    options |= two_tries
    remote = CropDataset(
        "s3://data/small.zarr", layout, PROG, DIAG, STATIC, storage_options=options, **kw
    )
    a, b = local[1], remote[1]
    assert_same_batch(a, b)
    assert proxy.refused == 7

    proxy, options = flaky_s3("/tracer/c/", failures=None)  # tracer never answers
    options |= two_tries
    remote = small_s3_crops(layout, options, **kw | dict(retries=1))
    with pytest.raises(OSError, match="reduce your request rate") as err:
        remote[0]
    notes = "\n".join(err.value.__notes__)
    assert "reading 'tracer'[" in notes and "of store s3://data/small.zarr" in notes
    assert "crop (time" in notes and "still failing after 1 retries" in notes
    assert proxy.refused >= 2 * 2  # 2 sample reads of 2 tries each, at least


def test_an_in_memory_load_that_cannot_fit_is_refused(tiny_store, layout, monkeypatch):
    free = memmod.memory_available()
    assert free is not None and 2**26 < free < 2**45  # this machine's, read from /proc
    data = make(tiny_store, layout, in_memory=True, time_range=(0, 10))
    need = 4 * 6 * 24 * 24 * (4 * 10 + 1)  # float32, 4 time-dependent variables, 1 static
    monkeypatch.setattr(memmod, "memory_available", lambda: need - 1)
    with pytest.raises(StoreError, match=r"in_memory needs .* 4 variables x 10 times \+ 1 static"):
        data[0]
    monkeypatch.setattr(memmod, "memory_available", lambda: need)
    assert data[0].state.shape == (3, 12, 12)


def test_in_memory_samples_equal_lazy_samples(tiny_store, layout):
    lazy, cached = make(tiny_store, layout), make(tiny_store, layout, in_memory=True)
    for i in range(5):
        a, b = lazy[i], cached[i]
        assert_same_batch(a, b)


@pytest.mark.s3
def test_a_silent_endpoint_fails_a_read_in_bounded_time(flaky_s3, small_store, caplog):
    """A frozen endpoint (connections accepted, nothing answered) stalled training ~10 minutes
    with no output (s3fs's 5 tries x botocore's attempts x 60 s read timeouts). Every read is
    now bounded: botocore attempts x read_timeout, then the sample-level retries stop once
    give_up_after has passed. With a 1 s read timeout here: seconds, and the error and the
    retry warnings name what was being read."""
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2)
    proxy, options = flaky_s3("/u/c/", failures=None, freeze=True)
    # two botocore attempts (production: four, with seconds of backoff between them)
    retry = {"mode": "standard", "max_attempts": 2}
    options |= {"config_kwargs": {"read_timeout": 1, "connect_timeout": 1, "retries": retry}}
    remote = small_s3_crops(
        layout, options, crop=6, steps=1, samples=2, seed=1, backoff=0.01, retries=1
    )
    t0 = time.monotonic()
    with caplog.at_level("WARNING"), pytest.raises(Exception) as err:
        remote[0]
    elapsed = time.monotonic() - t0
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert "reading 'u'[" in notes and "still failing after 1 retries" in notes, notes
    assert "timeout" in f"{type(err.value).__name__} {err.value}".lower()
    assert any("retry 1 of 1" in r.message for r in caplog.records)
    # 2 sample reads x 2 botocore attempts x 1 s, plus backoff: well under a minute
    assert 4 <= elapsed < 30, elapsed
    assert proxy.refused >= 2 * 2
