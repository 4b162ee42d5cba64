# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import errno

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from screamcast.data import remote
from screamcast.data import store as st
from screamcast.grid import CubedSphereGrid, PhysicsGrid

VARS = ["u", "v", "tracer"]


def test_open_local_store(tiny_store):
    ds = st.open_store(tiny_store, variables=VARS, static_variables=["orography"], n=16)
    assert ds.u.dims == ("time", "face", "y", "x") and ds.sizes["time"] == 17
    assert st.time_step(ds) == np.timedelta64(3, "h")


def write(path, n=4, times=None, **override):
    """A small native store; ``override`` replaces or adds variables."""
    times = pd.date_range("2020-01-01", periods=4, freq="h") if times is None else times
    g = PhysicsGrid.for_face_size(n)
    data = np.zeros((len(times), 6, n, n), np.float32)
    ds = xr.Dataset(
        {"u": (("time", "face", "y", "x"), data), "orog": (("face", "y", "x"), data[0])},
        coords={
            "time": times,
            "lat": (("face", "y", "x"), g.lat),
            "lon": (("face", "y", "x"), g.lon),
        },
    )
    if not override.pop("coords", True):
        ds = ds.drop_vars(["lat", "lon"])
    for name, value in override.items():
        ds[name] = value
    ds.to_zarr(path, mode="w-")
    return path


def hours(*h):
    return pd.DatetimeIndex([np.datetime64("2020-01-01T00") + np.timedelta64(x, "h") for x in h])


def empty(p):
    xr.Dataset().to_zarr(p / "e.zarr")
    return p / "e.zarr"


ZERO_LAT = (("face", "y", "x"), np.zeros((6, 4, 4)))
BAD = [
    (lambda p: p / "nothing.zarr", {}, "nothing.zarr does not exist"),
    (lambda p: write(p / "a.zarr"), {"variables": ["u", "q"]}, "no variable 'q' .*it has: orog, u"),
    (lambda p: write(p / "a.zarr"), {"variables": ["orog"]}, "'orog' has dims .* expected"),
    (lambda p: write(p / "a.zarr"), {"variables": ["u"], "n": 8}, "face size is 4, but .* n=8"),
    (
        lambda p: write(p / "a.zarr", times=hours(0, 2, 1, 3)),
        {"variables": ["u"]},
        "time is not increasing at index 2",
    ),
    (
        lambda p: write(p / "a.zarr", times=hours(0, 1, 3, 4)),
        {"variables": ["u"]},
        r"irregular time step: 120 min between index 1 \(.*\) and 2 \(.*\), expected a constant 60",
    ),
    (empty, {}, "e.zarr is empty"),
    (
        lambda p: write(p / "a.zarr", lat=ZERO_LAT),
        {"variables": ["u"]},
        r"lies .* degrees \(.* cell widths\) from that cell of ne2pg2 .*another grid",
    ),
    (  # a store of the equiangular cube screamcast wrote before (issue 14)
        lambda p: write(
            p / "a.zarr",
            lat=faces(lambda g: g.lat, CubedSphereGrid(4)),
            lon=faces(lambda g: g.lon, CubedSphereGrid(4)),
        ),
        {"variables": ["u"]},
        r"0\.0\d+ cell widths\) from that cell of ne2pg2 .* the equiangular cubed sphere n=4",
    ),
    # checked by lat alone, these passed and ran with errors 3-5x larger (issue 20)
    (
        lambda p: write(p / "a.zarr", lon=faces(lambda g: g.lon[[0, 2, 1, 3, 4, 5]])),
        {"variables": ["u"]},
        r"cell at \(face, y, x\) = \(1, \d, \d\) lies 8\d\.\d degrees",
    ),
    (
        lambda p: write(
            p / "a.zarr",
            lat=faces(lambda g: g.lat[..., ::-1]),
            lon=faces(lambda g: g.lon[..., ::-1]),
        ),
        {"variables": ["u"]},
        "another grid, face order or orientation",
    ),
    (
        lambda p: write(p / "a.zarr", coords=False),
        {"variables": ["u"]},
        r"has no 'lat' and 'lon' coordinates .* configured grid \(assume_grid\)",
    ),
]


def faces(pick, grid=None):
    return (("face", "y", "x"), pick(grid or PhysicsGrid(2, 2)))


def test_a_store_without_coordinates_is_taken_on_the_users_word(tmp_path):
    path = write(tmp_path / "a.zarr", coords=False)
    ds = st.open_store(path, variables=["u"], n=4, assume_grid=True)
    assert ds.u.shape == (4, 6, 4, 4)


@pytest.mark.parametrize("make, kwargs, message", BAD)
def test_bad_stores_are_refused_with_a_clear_message(tmp_path, make, kwargs, message):
    with pytest.raises(st.StoreError, match=message):
        st.open_store(make(tmp_path), **kwargs)


def test_column_store_maps_onto_the_grid(tmp_path, tiny_store):
    native = xr.open_zarr(tiny_store, chunks=None).isel(time=slice(0, 3))
    perm = PhysicsGrid(8, 2).column_index()  # E3SM's column order
    cols = xr.Dataset(
        {"u": (("time", "ncol"), native.u.values.reshape(3, -1)[:, perm])},
        coords={
            "time": native.time.values,
            "lat": ("ncol", native.lat.values.ravel()[perm]),
            "lon": ("ncol", native.lon.values.ravel()[perm]),
        },
    )
    cols.to_zarr(tmp_path / "cols.zarr")
    ds = st.open_store(tmp_path / "cols.zarr", variables=["u"], n=16)
    np.testing.assert_array_equal(ds.u.values, native.u.values)
    st.convert_ncol_store(str(tmp_path / "cols.zarr"), tmp_path / "native.zarr", block=2)
    converted = st.open_store(tmp_path / "native.zarr", variables=["u"], n=16)
    np.testing.assert_array_equal(converted.u.values, native.u.values)
    with pytest.raises(ValueError, match="face size is 16, but the configured grid has n=12"):
        st.open_store(tmp_path / "cols.zarr", variables=["u"], n=12)
    shuffled = cols.isel(ncol=np.random.default_rng(0).permutation(cols.sizes["ncol"]))
    shuffled.to_zarr(tmp_path / "shuffled.zarr")
    with pytest.raises(ValueError, match=r"shuffled.zarr: column \d+ .* where E3SM's column"):
        st.open_store(tmp_path / "shuffled.zarr", variables=["u"], n=16)


def test_retries_transient_errors_only():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("reset by peer")
        return "ok"

    assert remote.with_retries(flaky, "x", retries=3, backoff=0.01) == "ok" and len(calls) == 3
    calls.clear()

    def broken():
        calls.append(1)
        raise KeyError("not transient")

    with pytest.raises(KeyError):
        remote.with_retries(broken, "x", retries=3, backoff=0.01)
    assert len(calls) == 1

    def down():
        raise ConnectionError("refused")

    with pytest.raises(ConnectionError) as err:
        remote.with_retries(down, "s3://b/k", retries=2, backoff=0.01)
    assert "s3://b/k: still failing after 2 retries" in err.value.__notes__[0]
    # what s3fs raises once its own retries are spent: 503 SlowDown -> EBUSY, 500 -> EREMOTEIO
    assert remote._transient(OSError(errno.EBUSY, "Please reduce your request rate."))
    assert remote._transient(OSError(121, "We encountered an internal error. Please try again."))
    assert not remote._transient(FileNotFoundError(errno.ENOENT, "s3://b/k/zarr.json"))
    assert not remote._transient(PermissionError(errno.EACCES, "Forbidden"))


# ----------------------------------------------------------------------------- S3
@pytest.mark.s3
def test_s3_store_reads_the_same_values_as_disk(s3, small_store):
    remote = st.open_store(s3["url"], s3["options"], variables=VARS, n=8)
    local = st.open_store(small_store, variables=VARS, n=8)
    for var in VARS:
        np.testing.assert_array_equal(remote[var].values, local[var].values)


@pytest.mark.s3
@pytest.mark.parametrize(
    "url, change, message",
    [
        ("s3://nope/tiny.zarr", {}, "bucket 'nope' does not exist at http://127.0.0.1"),
        ("s3://data/other.zarr", {}, "store s3://data/other.zarr does not exist"),
        (
            "s3://data/tiny.zarr",
            {"secret": "wrong"},
            "access denied by http://127.0.0.1.*key/secret",
        ),
        ("s3://data/tiny.zarr", {"key": "AKIAUNKNOWN"}, "access denied"),
    ],
)
def test_s3_errors_are_clear(s3, url, change, message):
    with pytest.raises(st.StoreError, match=message):
        st.open_store(url, s3["options"] | change, retries=0)


@pytest.mark.s3
def test_s3_endpoint_that_does_not_answer(s3, refusing_port):
    """Refused connections are retried (botocore's attempts, then ours), then named. Two
    botocore attempts here, not the four of production, whose backoff takes seconds."""
    options = s3["options"] | {"endpoint_url": f"http://127.0.0.1:{refusing_port}"}
    options["config_kwargs"] = {"retries": {"mode": "standard", "max_attempts": 2}}
    with pytest.raises(st.StoreError, match="endpoint http://127.0.0.1:\\d+ does not answer"):
        st.open_store(s3["url"], options, retries=1)


def test_a_port_with_403_in_it_is_not_an_access_denied():
    """CI's refused endpoint was on port 40361: "403" in the URL read as HTTP 403."""
    from screamcast.data.remote import s3_message

    options = {"endpoint_url": "http://127.0.0.1:40361"}
    refused = ConnectionError('Could not connect to the endpoint URL: "http://127.0.0.1:40361/d"')
    assert "does not answer" in s3_message("s3://d/x.zarr", options, refused)
    forbidden = OSError("An error occurred (403) when calling the HeadObject operation: Forbidden")
    assert "access denied" in s3_message("s3://d/x.zarr", options, forbidden)
    status = OSError("[Errno 13] 403 Client Error for url http://127.0.0.1:9000/d")
    assert "access denied" in s3_message("s3://d/x.zarr", options, status)
