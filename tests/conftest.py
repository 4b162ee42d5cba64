# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Session fixtures: a tiny analytic store, and a real S3 endpoint (moto's server) on loopback."""

import json
import os
import socket
import warnings

import pytest

# moto reads this when imported: the first 4 requests (IAM user, key, policy, bucket) run
# without credentials, every later one must be signed with the user's key, so wrong
# credentials are refused for real.
os.environ.setdefault("INITIAL_NO_AUTH_ACTION_COUNT", "4")
# Under pytest-xdist (ci/test.sh: one worker per core) each worker, and every process its tests
# start, computes on one thread: torch's default pool of one thread per core in each worker
# would put twice as many busy threads as cores on the machine.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

TINY = dict(n=16, days=2.0, step_hours=3.0, chunk=8)


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory):
    """n=16, 2 days every 3 h (17 times), chunks of 8x8 (4 per face)."""
    from screamcast.sources.synthetic import write_store

    return write_store(tmp_path_factory.mktemp("stores") / "tiny.zarr", **TINY)


@pytest.fixture(scope="session")
def holed_stores(tiny_store, tmp_path_factory):
    """``(nan, empty)``: the tiny store with u NaN at every pixel of time 1 and at one pixel of
    time 5 (as fill values leave a store), and the tiny store with no times at all."""
    import shutil

    import xarray as xr
    import zarr

    tmp = tmp_path_factory.mktemp("holed")
    nan, empty = tmp / "nan.zarr", tmp / "empty.zarr"
    shutil.copytree(tiny_store, nan)
    u = zarr.open_group(nan, mode="r+")["u"]  # (time, face, y, x)
    u[1] = float("nan")
    u[5, 0, 0, 0] = float("nan")
    ds = xr.open_zarr(tiny_store, consolidated=False)
    ds.isel(time=slice(0, 0)).to_zarr(empty, consolidated=False)
    return nan, empty


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def refusing_port():
    """A loopback port that refuses connections for the whole test: bound, never listening.
    A port merely found free can be taken by another worker's moto server before the test
    connects (CI saw 'access denied' from one instead of 'does not answer')."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture(scope="session")
def small_store(tmp_path_factory):
    """n=8, 5 times, one chunk per face: small enough to upload to moto in a second or two."""
    from screamcast.sources.synthetic import write_store

    return write_store(tmp_path_factory.mktemp("stores") / "small.zarr", 8, days=0.5, step_hours=3)


@pytest.fixture(scope="session")
def s3(small_store):
    """A moto S3 server on a free loopback port; bucket 'data' holds ``small_store``."""
    import boto3
    import xarray as xr
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    anon = dict(endpoint_url=endpoint, region_name="us-east-1")
    anon |= dict(aws_access_key_id="setup", aws_secret_access_key="setup")
    iam = boto3.client("iam", **anon)
    iam.create_user(UserName="screamcast")
    key = iam.create_access_key(UserName="screamcast")["AccessKey"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
    }
    iam.put_user_policy(UserName="screamcast", PolicyName="all", PolicyDocument=json.dumps(policy))
    boto3.client("s3", **anon).create_bucket(Bucket="data")
    options = {
        "endpoint_url": endpoint,
        "key": key["AccessKeyId"],
        "secret": key["SecretAccessKey"],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xr.open_zarr(small_store, chunks=None).to_zarr(
            "s3://data/small.zarr", storage_options=options, mode="w-"
        )
    yield {"url": "s3://data/small.zarr", "options": options, "endpoint": endpoint}
    server.stop()


@pytest.fixture
def flaky_s3(s3):
    """``make(match, failures)``: storage options that reach the ``s3`` store through a proxy
    refusing matching GETs with 503 SlowDown (see tests/flaky_proxy.py)."""
    from tests.flaky_proxy import FlakyProxy

    proxies = []

    def make(match: str, failures: int | None, freeze: bool = False):
        upstream = int(s3["endpoint"].rsplit(":", 1)[1])
        proxies.append(FlakyProxy(upstream, match, failures, freeze))
        return proxies[-1], s3["options"] | {"endpoint_url": proxies[-1].endpoint}

    yield make
    for proxy in proxies:
        proxy.close()


@pytest.fixture(scope="session")
def tiny_reference(tmp_path_factory):
    """The tiny store's truth block-averaged to n=4, every 6 h: a coarse nudging reference."""
    from screamcast.sources.synthetic import write_store

    path = tmp_path_factory.mktemp("stores") / "tiny_ref.zarr"  # stacked, as the demo's is
    return write_store(path, 4, days=2.0, step_hours=6.0, coarsen=4, layout="stacked")


@pytest.fixture(scope="session")
def tiny_latlon_reference(tmp_path_factory):
    """The tiny store's truth on a 15 degree lat-lon grid every 6 h (coarser than its cube)."""
    from screamcast.sources.synthetic import write_latlon_reference

    path = tmp_path_factory.mktemp("stores") / "tiny_latlon_ref.zarr"
    return write_latlon_reference(path, nlat=12, days=2.0, step_hours=6.0)


@pytest.fixture(scope="session")
def tiny_checkpoint(tiny_store, tmp_path_factory):
    """A small model trained for 60 steps on the tiny store (beats persistence)."""
    from pathlib import Path

    from hydra import compose, initialize_config_dir

    from screamcast.config import register
    from screamcast.train.loop import train

    register()
    configs = Path(__file__).resolve().parents[1] / "configs"
    run = tmp_path_factory.mktemp("runs") / "tiny"
    with initialize_config_dir(str(configs), version_base="1.3"):
        cfg = compose(
            "train",
            overrides=[
                "experiment=pytest",
                f"data.url={tiny_store}",
                f"run_dir={run}",
                "steps=60",
                "optim.lr=2e-3",
                "valid_every=20",
                "model.width=16",
            ],
        )
    train(cfg)
    return run / "best.pth"
