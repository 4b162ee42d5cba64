# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""python -m screamcast.ingest on history files written as E3SM writes them (EAM: CDF5,
``(time, lev, ncol)``, ``PS``; EAMxx: netCDF-4, ``(time, ncol, lev)``, ``horiz_winds``), in
``noleap`` time across Feb 28 -> Mar 1 of 2020: values against an independent computation,
statistics, layers, resume after SIGKILL, a real Dask LocalCluster, bad input."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr

from screamcast.data import packing, stacked
from screamcast.data.calendar import DECODER
from screamcast.data.stacked import unstack
from screamcast.data.stats import compute_stats
from screamcast.data.store import StoreError, open_store
from screamcast.grid import PhysicsGrid
from screamcast.ingest import IngestError, IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history

ORDER = PhysicsGrid(4, 2).column_index()  # ne4pg2 columns -> flat (face, y, x)


def run(sources, output, **kw):
    kw.setdefault("workers", 0)
    kw.setdefault("block", 3)
    return ingest(IngestOptions([str(s) for s in sources], str(output), progress=False, **kw))


@pytest.fixture(scope="module")
def eam(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eam")
    return write_history(folder, "eam", files=3, netcdf_format="NETCDF3_64BIT_DATA")


@pytest.fixture(scope="module")
def eamxx(tmp_path_factory):
    return write_history(tmp_path_factory.mktemp("eamxx"), "eamxx", files=3)


def opened(path):
    """An ingested store as xarray sees it, its stack (the default layout) unstacked."""
    return unstack(xr.open_zarr(path, decode_times=DECODER, chunks=None))


def files_in_order(paths):
    """Reversed names must not matter: files are sorted by their times."""
    return list(reversed(paths))


def on_faces(columns):
    """``(..., ncol)`` in file order -> ``(..., 6, 8, 8)``, written out independently."""
    out = np.full(columns.shape[:-1] + (6 * 64,), np.nan)
    for c, cell in enumerate(ORDER):
        out[..., cell] = columns[..., c]
    return out.reshape(columns.shape[:-1] + (6, 8, 8))


def test_eam_cdf5_files_become_a_cube_store(eam, tmp_path):
    assert eam[0].read_bytes()[:4] == b"CDF\x05"  # CDF5, as EAM writes
    summary = run(files_in_order(eam), tmp_path / "s.zarr", dtype="float32")
    assert summary["blocks"] == 4  # 12 times in blocks of 3
    ds = open_store(tmp_path / "s.zarr", None, ["T", "PS", "U"], n=8)
    assert ds.attrs["grid"] == "ne4pg2" and ds["time"].values[0].calendar == "noleap"
    assert ds["T"].dims == ("time", "lev", "face", "y", "x") and ds.sizes["lev"] == 8
    src = xr.open_mfdataset(
        [str(p) for p in eam], decode_times=DECODER, combine="by_coords", data_vars="minimal"
    )
    np.testing.assert_array_equal(ds["T"].values, on_faces(src["T"].values))
    np.testing.assert_array_equal(ds["PS"].values, on_faces(src["PS"].values))
    np.testing.assert_array_equal(ds["lev"].values, src["lev"].values)
    assert list(ds["time"].values) == list(src["time"].values)  # noleap: Mar 1 after Feb 28
    # the statistics written with the store equal a separate pass over it, per level
    channels = ["T[0]", "T[7]", "PS", "U[3]"]
    want = compute_stats(ds, channels)
    have = ds.attrs["normalisation"]
    for key in ("mean", "std", "diff_std"):
        for c in channels:
            assert have[key][c] == pytest.approx(getattr(want, key)[c], rel=1e-9), (key, c)
    assert not (tmp_path / "s.zarr" / ".ingest").exists()  # the block markers are gone


def test_the_default_stack_is_float16_within_its_stated_error(eam, tmp_path):
    """Packed per channel about the first block: |stored - file| <= 2**-11 |file - offset|
    (+ float16's smallest step near the offset, 2**-25 scale, and float32 rounding);
    non-negative fields keep their zeros and sign, the statistics describe the stored values,
    the store holds half the bytes or less, and it reads as float32."""
    run(eam, tmp_path / "f32.zarr", dtype="float32")
    run(eam, tmp_path / "f16.zarr")
    exact, packed = opened(tmp_path / "f32.zarr"), opened(tmp_path / "f16.zarr")
    group = zarr.open_group(tmp_path / "f16.zarr", mode="r")
    codec = packing.of(group["fields"])
    assert codec is not None and group["fields"].dtype == np.float32
    names = stacked.channel_names(group.attrs["stacked"]["fields"])
    offsets = dict(zip(names, codec.offset, strict=True))
    scales = dict(zip(names, codec.scale, strict=True))
    assert offsets["PRECT"] == 0.0 and offsets["Q[7]"] == 0.0 and offsets["PS"] > 9e4
    worst = {}
    for name in ("T", "U", "V", "Q", "PS", "PRECT"):
        x, y = exact[name].values, packed[name].values  # (t, [lev,] 6, 8, 8)
        assert y.dtype == np.float32 and np.isfinite(y).all()
        per = x.reshape(x.shape[0], -1, *x.shape[-3:])
        which = [name] if per.shape[1] == 1 else [f"{name}[{k}]" for k in range(per.shape[1])]
        off = np.array([offsets[n] for n in which]).reshape(1, -1, 1, 1, 1)
        step = np.array([scales[n] for n in which]).reshape(1, -1, 1, 1, 1) * 2.0**-25
        bound = np.maximum(2.0**-11 * np.abs(per - off), step) + 1e-6 * np.abs(per)
        err = np.abs(y.reshape(per.shape) - per)
        assert (err <= bound).all(), name
        worst[name] = float(err.max())
    assert 0 < worst["PS"] < 0.5 and 0 < worst["T"] < 0.05  # Pa, K
    for name in ("Q", "PRECT"):
        x, y = exact[name].values, packed[name].values
        assert (y >= 0).all() and ((y == 0) == (x == 0)).all()
    ds = open_store(tmp_path / "f16.zarr", None, ["T", "PS"], n=8)
    want, have = compute_stats(ds, ["T[0]", "PS"]), ds.attrs["normalisation"]
    for c in ("T[0]", "PS"):
        assert have["std"][c] == pytest.approx(want.std[c], rel=1e-9), c
    size = {
        k: sum(f.stat().st_size for f in (tmp_path / k / "fields").rglob("*") if f.is_file())
        for k in ("f32.zarr", "f16.zarr")
    }
    assert size["f16.zarr"] < 0.6 * size["f32.zarr"], size  # half, then zstd


def test_eamxx_layers_conserve_the_column_and_winds_split(eamxx, tmp_path):
    run(eamxx, tmp_path / "s.zarr", layers="0,2,5,8", dtype="float32")
    ds = opened(tmp_path / "s.zarr")
    assert set(ds.data_vars) == {"T_mid", "qv", "u", "v", "ps"} and ds.sizes["layer"] == 3
    src = xr.open_mfdataset(
        [str(p) for p in eamxx], decode_times=DECODER, combine="by_coords", data_vars="minimal"
    )
    first = xr.open_dataset(eamxx[0])  # the hybrid coefficients, once
    p0, hyai, hybi = float(first["P0"]), first["hyai"].values, first["hybi"].values
    ps = src["ps"].values.astype(np.float64)  # (t, ncol)
    p = hyai[None, :, None] * p0 + hybi[None, :, None] * ps[:, None]  # (t, 9, ncol)
    dp = np.diff(p, axis=1)  # (t, 8, ncol)
    for name, values in (("T_mid", src["T_mid"].values), ("u", src["horiz_winds"].values[:, :, 0])):
        x = values.transpose(0, 2, 1).astype(np.float64)  # (t, lev, ncol)
        layers = np.stack(
            [
                (x[:, a:b] * dp[:, a:b]).sum(1) / dp[:, a:b].sum(1)
                for a, b in ((0, 2), (2, 5), (5, 8))
            ],
            axis=1,
        )
        np.testing.assert_allclose(ds[name].values, on_faces(layers), rtol=1e-6)
        # the column integral: sum over layers of X dp equals the sum over levels
        thick = np.stack([dp[:, a:b].sum(1) for a, b in ((0, 2), (2, 5), (5, 8))], axis=1)
        stored = ds[name].values.astype(np.float64)
        col_layers = (stored * on_faces(thick)).sum(1)
        col_levels = on_faces((x * dp).sum(1))
        np.testing.assert_allclose(col_layers, col_levels, rtol=2e-7)
    np.testing.assert_array_equal(ds["layer"].attrs["interfaces"], [0, 2, 5, 8])


def test_a_killed_ingestion_resumes_to_the_same_store(eam, tmp_path):
    whole = tmp_path / "whole.zarr"
    run(eam, whole, block=1)
    cmd = [
        sys.executable,
        "-m",
        "screamcast.ingest",
        *map(str, eam),
        "--output",
        str(tmp_path / "k.zarr"),
        "--workers",
        "0",
        "--block",
        "1",
        "--no-progress",
    ]
    env = dict(os.environ, SCREAMCAST_INGEST_SLOW="0.3")  # a pause after each block
    proc = subprocess.Popen(cmd, env=env, cwd=Path(__file__).resolve().parents[2])
    markers = tmp_path / "k.zarr" / ".ingest"
    deadline = time.time() + 60
    while time.time() < deadline and len(list(markers.glob("*.json"))) < 3:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list(markers.glob("*.json")))
    assert 3 <= done < 12
    with pytest.raises(StoreError, match="still being written"):
        open_store(tmp_path / "k.zarr", None, ["T"], n=8)
    resumed = subprocess.run(
        cmd, cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.split(": ", 1)[1])
    # only the unfinished blocks are redone
    assert (summary["blocks"], summary["resumed_after"]) == (12 - done, done)
    a = opened(whole)
    b = opened(tmp_path / "k.zarr")
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values)
    assert a.attrs["normalisation"] == b.attrs["normalisation"]
    assert run(eam, tmp_path / "k.zarr", block=1)["state"] == "complete"  # nothing left
    with warnings.catch_warnings():  # the resumed store is consolidated and labelled too
        warnings.simplefilter("error")
        labelled = xr.open_zarr(tmp_path / "k.zarr")
    assert list(labelled["channel"].values) == list(xr.open_zarr(whole)["channel"].values)


def test_a_dask_local_cluster_writes_the_same_store(eam, tmp_path):
    run(eam, tmp_path / "a.zarr")
    run(eam, tmp_path / "b.zarr", workers=2)  # a real distributed.LocalCluster, 2 processes
    a = opened(tmp_path / "a.zarr")
    b = opened(tmp_path / "b.zarr")
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values)
    assert a.attrs["normalisation"] == b.attrs["normalisation"]


def test_gaps_overlaps_and_bad_files_are_named(eam, eamxx, tmp_path):
    with pytest.raises(IngestError, match=r"h0.2020-03-01-00.nc: times jump from .* a gap"):
        run([eam[0], eam[2]], tmp_path / "g.zarr")
    run([eam[0], eam[2]], tmp_path / "g.zarr", allow_gaps=True)
    g = opened(tmp_path / "g.zarr")
    assert g.sizes["time"] == 12 and np.isnan(g["T"].values[4:8]).all()
    assert len(g.attrs["missing_times"]) == 4
    copy = tmp_path / "copy.nc"
    shutil.copy(eam[1], copy)
    twice = r"(copy.nc|h0.2020-02-28-00.nc): time 2020-02-28 00:00:00 repeats a time of .*"
    with pytest.raises(IngestError, match=twice):
        run([*eam, copy], tmp_path / "o.zarr")
    with pytest.raises(IngestError, match=r"has no variable 'T'; .*h0.* has it"):
        run([eam[0], eamxx[1]], tmp_path / "m.zarr", variables=["T"])
    with pytest.raises(IngestError, match="--layers needs hyai"):
        xr.open_dataset(eam[0]).drop_vars("hyai").to_netcdf(tmp_path / "nohyai.nc")
        run([tmp_path / "nohyai.nc"], tmp_path / "l.zarr", layers="4")
    (tmp_path / "junk.nc").write_bytes(b"not a netcdf file")
    with pytest.raises(IngestError, match=r"junk.nc cannot be read"):
        run([eam[0], tmp_path / "junk.nc"], tmp_path / "j.zarr")
    other = write_history(tmp_path / "ne3", "eam", files=1, ne=3)
    with pytest.raises(IngestError, match="is on another grid than"):
        run([*eam, *other], tmp_path / "x.zarr")


def test_existing_stores_and_inputs_are_never_overwritten(eam, tmp_path):
    run(eam[:1], tmp_path / "s.zarr")
    with pytest.raises(
        IngestError, match=r"is a store of another ingestion \(files: 0 of its inputs not given now"
    ):
        run(eam, tmp_path / "s.zarr")
    run(eam, tmp_path / "s.zarr", overwrite=True)
    assert xr.open_zarr(tmp_path / "s.zarr", chunks=None).sizes["time"] == 12
    inside = tmp_path / "runs"
    inside.mkdir()
    shutil.copy(eam[0], inside / "a.nc")
    (inside / "zarr.json").write_text("{}")  # a folder that looks like another store
    with pytest.raises(IngestError, match="holds the input"):
        run([inside / "a.nc"], inside, overwrite=True)
    assert (inside / "a.nc").exists()


@pytest.mark.s3
def test_files_on_s3_become_a_store_on_s3(eamxx, s3, tmp_path):
    """Through moto's S3 server: sources by glob, the output and its markers on S3 too."""
    import s3fs

    fs = s3fs.S3FileSystem(**s3["options"])
    for p in eamxx:
        fs.put(str(p), f"data/hist/{p.name}")
    opts = s3["options"]
    run(["s3://data/hist/*.nc"], "s3://data/ingested.zarr", storage_options=opts, layers="2")
    remote = open_store("s3://data/ingested.zarr", opts, ["T_mid", "u"], n=8)
    run(eamxx, tmp_path / "local.zarr", layers="2")
    local = open_store(tmp_path / "local.zarr", None, ["T_mid", "u"], n=8)
    for v in ("T_mid[0]", "T_mid[1]", "u[1]"):
        np.testing.assert_array_equal(remote[v].values, local[v].values)
    assert remote.attrs["normalisation"] == local.attrs["normalisation"]
    assert not fs.exists("data/ingested.zarr/.ingest")


def test_the_ingested_store_trains_and_rolls_out(eam, tmp_path):
    from screamcast.checkpoint_format import load
    from screamcast.train.loop import train
    from tests.rollout.test_run_nudged import args, cli
    from tests.train.test_loop import config, on_ne4pg2

    store = tmp_path / "s.zarr"
    run(eam, store, layers="4")
    over = on_ne4pg2(
        store,
        "[T,U,V,PS]",
        "[PRECT]",
        "data.train_range=[0,-4]",
        "data.valid_range=[-4,0]",
        "data.stats_from_store=true",
        "data.in_memory=false",  # crops from regions, whole shards, through the shard cache
        "data.region_stride=3",
        f"data.cache_dir={tmp_path / 'cache'}",
        "data.cache_gb=0.01",
        "steps=3",
        f"run_dir={tmp_path / 'run'}",
    )
    run_dir = train(config(*over))
    assert 0 < sum(f.stat().st_size for f in (tmp_path / "cache").iterdir()) <= 0.01 * 2**30
    desc = load(run_dir / "latest.pth")["description"]
    assert desc["variables"]["prognostic"][:5] == ["T[0]", "T[1]", "T[2]", "T[3]", "U[0]"]
    stored = xr.open_zarr(store, chunks=None).attrs["normalisation"]
    assert desc["stats"]["mean"]["T[2]"] == stored["mean"]["T[2]"]  # no statistics pass
    out = tmp_path / "out.zarr"
    assert cli.main(args(run_dir / "latest.pth", store, out, steps=2)) == 0
    ds = opened(out)
    assert ds["T"].dims == ("time", "layer", "face", "y", "x") and ds.attrs["grid"] == "ne4pg2"
    assert np.isfinite(ds["T"].values).all() and ds.attrs["calendar"] == "noleap"


def test_zarr_history_is_read_like_netcdf(eamxx, tmp_path):
    """EAMxx can write zarr too: the same files as zarr stores give the same store."""
    zarrs = []
    for p in eamxx:
        z = tmp_path / f"{p.stem}.zarr"
        xr.open_dataset(p, decode_times=DECODER).to_zarr(z, consolidated=False)
        zarrs.append(z)
    run(zarrs, tmp_path / "from_zarr.zarr")
    run(eamxx, tmp_path / "from_nc.zarr")
    a = opened(tmp_path / "from_zarr.zarr")
    b = opened(tmp_path / "from_nc.zarr")
    for v in ("T_mid", "u", "v", "ps"):
        np.testing.assert_array_equal(a[v].values, b[v].values)


def test_the_stacked_layout_reads_as_the_per_variable_one(eam, tmp_path):
    """The default layout (every channel in one sharded array) against one array per variable:
    the same dataset through open_store, and the same training crops, lazily and from regions,
    with a fraction of the requests (counted by ReadCounter)."""
    import zarr

    from screamcast.data.dataset import CropDataset
    from screamcast.data.read_counter import ReadCounter
    from screamcast.data.region_sampler import RegionPlan
    from screamcast.grid import TileLayout

    some = ["T", "U", "PS", "PRECT"]  # fewer variables: the per-variable layout is slow to write
    run(eam, tmp_path / "stacked.zarr", chunk=4, shard=8, variables=some, dtype="float32")
    run(eam, tmp_path / "variables.zarr", layout="variables", chunk=8, variables=some)
    fields = zarr.open_group(tmp_path / "stacked.zarr", mode="r")["fields"]
    assert fields.shape == (12, 18, 6, 8, 8)  # T, U on 8 levels + PS, PRECT
    assert fields.shards == (1, 18, 1, 8, 8) and fields.chunks == (1, 18, 1, 4, 4)
    a = open_store(tmp_path / "stacked.zarr", None, ["T", "PS", "U"], n=8)
    b = open_store(tmp_path / "variables.zarr", None, ["T", "PS", "U"], n=8)
    assert "fields" not in a and a["T"].dims == b["T"].dims
    for v in ("T", "PS", "U", "T[3]", "PRECT"):
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v)
        assert a[v].attrs == b[v].attrs, v
    np.testing.assert_array_equal(a["lev"].values, b["lev"].values)
    assert a.attrs["normalisation"] == b.attrs["normalisation"]

    layout = TileLayout(PhysicsGrid(4, 2), 4, 2)  # extended faces of 12, crops of 6
    channels = ["T[0]", "T[7]", "PS", "U[2]", "U[5]"]
    for regions in (None, RegionPlan.balanced(layout.padded - 6 + 1, 6, 7, 4, 4)):
        crops, requests = {}, {}
        for name in ("stacked", "variables"):
            counter = []

            def wrap(store, counter=counter):
                counter.append(ReadCounter(store))
                return counter[-1]

            data = CropDataset(
                str(tmp_path / f"{name}.zarr"),
                layout,
                channels,
                ["PRECT"],
                crop=6,
                samples=32,
                store_wrapper=wrap,
                regions=regions,
            )
            crops[name] = data.__getitems__(list(range(32)))
            requests[name] = counter[0].reset().requests / 32
        for x, y in zip(crops["stacked"], crops["variables"], strict=True):
            for key, a, b in zip(x._fields, x, y, strict=True):
                np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=key)
        if regions is not None:  # whole shards, all channels at once: ~1/5 of the requests
            assert requests["stacked"] < 0.3 * requests["variables"], requests


def test_bad_layout_options_are_refused(eam, tmp_path):
    with pytest.raises(IngestError, match="--layout must be 'stacked' or 'variables'"):
        run(eam, tmp_path / "x.zarr", layout="stack")
    with pytest.raises(IngestError, match="--shard must be a positive number, got 0"):
        run(eam, tmp_path / "x.zarr", shard=0)
    assert not (tmp_path / "x.zarr").exists()


def test_a_channel_float16_cannot_hold_is_stored_float32_alone(eam, tmp_path, caplog):
    """PS over topography (10% of columns at 50-60 kPa): float16 about its mean errs ~10 Pa,
    over its 1 Pa budget. By default PS alone is stored float32 (exact), saying why, and every
    other channel stays float16; with ``--dtype float16`` given, the ingestion is refused
    naming PS; the summary lists each channel's dtype and worst error (issues 42, 56)."""
    mountains = []
    for k, path in enumerate(eam):
        ds = xr.open_dataset(path).load()
        ps = ds["PS"].values.copy()  # (time, ncol)
        ps[:, ::10] = np.random.default_rng(k).uniform(50e3, 60e3, ps[:, ::10].shape)
        ds["PS"] = (ds["PS"].dims, ps, ds["PS"].attrs)
        mountains.append(tmp_path / Path(path).name)
        ds.to_netcdf(mountains[-1])
    with pytest.raises(packing.PackingError, match=r"PS: max\(\|error\|\) .*budget 1;"):
        run(mountains, tmp_path / "asked16.zarr", dtype="float16")
    assert not (tmp_path / "asked16.zarr" / "fields").exists()
    caplog.set_level("INFO")
    summary = run(mountains, tmp_path / "auto.zarr")
    assert "float32 for PS (PS: max(|error|)" in caplog.text
    group = zarr.open_group(tmp_path / "auto.zarr", mode="r")
    assert packing.of(group["fields"]).dtypes().count("float32") == 1
    assert summary["precision"]["PS"] == {"dtype": "float32", "worst_error": 0.0}
    assert {v["dtype"] for k, v in summary["precision"].items() if k != "PS"} == {"float16"}
    exact = xr.open_dataset(mountains[0])["PS"].values.astype(np.float32)  # (t, ncol)
    back = opened(tmp_path / "auto.zarr")["PS"].values[: len(exact)]  # (t, 6, n, n)
    flat = back.reshape(len(exact), -1)  # (t, 6 n n), columns at ORDER
    assert (flat[:, ORDER] == exact).all()  # float32: exact
    f16 = run(eam, tmp_path / "f16.zarr")["precision"]  # without mountains: float16
    assert f16["PS"]["dtype"] == "float16" and 0 < f16["PS"]["worst_error"] < 0.5
    assert all(0 <= v["worst_error"] for v in f16.values()) and "T[0]" in f16
    lenient = run(mountains, tmp_path / "lenient.zarr", budget={"PS": 40.0})["precision"]
    assert lenient["PS"]["dtype"] == "float16" and 1 < lenient["PS"]["worst_error"] < 20


def test_a_realistic_surface_pressure_never_stops_a_default_ingestion(eam, tmp_path):
    """Issue 56's run: PS about 1000 hPa with 8 hPa of spread, no topography, the last file's
    departures 3x the first's (a later block outside the first block's range). The default
    ingestion completes; PS is float32 and read back exactly, T stays float16 within 0.1 K."""
    rng = np.random.default_rng(5)
    files = []
    for k, path in enumerate(eam):
        ds = xr.open_dataset(path).load()
        shape = ds["PS"].shape
        ps = 1e5 + 800.0 * (3.0 if k == len(eam) - 1 else 1.0) * rng.standard_normal(shape)
        ds["PS"] = (ds["PS"].dims, ps.astype(np.float32), ds["PS"].attrs)
        files.append(tmp_path / Path(path).name)
        ds.to_netcdf(files[-1])
    summary = run(files, tmp_path / "o.zarr")
    precision = summary["precision"]
    assert precision["PS"] == {"dtype": "float32", "worst_error": 0.0}
    assert precision["T[0]"]["dtype"] == "float16" and precision["T[0]"]["worst_error"] < 0.1
    last = xr.open_dataset(files[-1])["PS"].values.astype(np.float32)  # (t, ncol)
    back = opened(tmp_path / "o.zarr")["PS"].values[-len(last) :].reshape(len(last), -1)
    assert (back[:, ORDER] == last).all()


def test_budget_flag_is_parsed_and_refused_when_malformed(capsys):
    from screamcast.cli.ingest import budget_of, main

    assert budget_of("PS=3,T=0.05") == {"PS": 3.0, "T": 0.05} and budget_of("") == {}
    for bad in ("PS", "PS=x", "PS=-1", "=3"):
        assert main(["h.nc", "--output", "o.zarr", "--budget", bad]) == 2
        assert f"--budget: '{bad}'" in capsys.readouterr().err


def test_a_signed_channel_with_exact_zeros_is_stored_float32():
    """A field packed about its mean (1.5) whose first block holds exact zeros: float16 would
    not give the zeros back, so the channel is float32 (the stretched probes alone missed it)."""
    from screamcast.data import packing as pk
    from screamcast.data import precision
    from screamcast.ingest.store import float32_channels

    rng = np.random.default_rng(0)
    x = (1.5 + rng.standard_normal((2, 1, 6, 4, 4))).astype(np.float32)
    x[0, 0, 0, 0, :3] = 0.0
    offsets, scales = pk.choose(x, axis=1)
    codec = pk.codec(offsets, scales, axis=1)
    budgets = precision.budgets(["TEND"], x, axis=1)
    assert offsets[0] != 0.0 and budgets[0].zeros
    assert 0 in float32_channels(codec, [x], budgets, ["TEND"])


def test_extremes_are_left_out_when_a_resumed_blocks_marker_lacks_them():
    """A block recorded before the extremes were kept ([w, s1, s2]) and one after: no min/max
    (the guard falls back to sigma) rather than the newer blocks' narrower range."""
    from screamcast.ingest.run import combine

    old = {"moments": {"PS": {"level": [1.0, 1e5, 1e10], "change": [0.0, 0.0, 0.0]}}}
    new = {"moments": {"PS": {"level": [1.0, 1e5, 1e10, 9e4, 1.1e5], "change": [0.0, 0, 0]}}}
    assert "PS" not in combine([old, new]).min
    assert combine([new, new]).min["PS"] == 9e4 and combine([new]).max["PS"] == 1.1e5
