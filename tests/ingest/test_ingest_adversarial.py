# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""python -m screamcast.ingest against hostile or unlucky input: outputs spelt to hit the
inputs, folders that are not stores, concurrent runs, truncated files of both netCDF formats,
files that disagree (units, levels, vertical coefficients, calendars), files that grow after
ingestion, fill values, EAM's float-day times, a full disk, an unreachable scheduler."""

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.cli.ingest import main
from screamcast.data.calendar import DECODER
from screamcast.data.stacked import unstack
from screamcast.ingest import IngestError, IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history

ROOT = Path(__file__).resolve().parents[2]


def run(sources, output, **kw):
    kw.setdefault("workers", 0)
    kw.setdefault("block", 3)
    return ingest(IngestOptions([str(s) for s in sources], str(output), progress=False, **kw))


@pytest.fixture
def eam(tmp_path):
    """Three EAM files of 4 six-hourly times each (netCDF-4: quick to rewrite)."""
    return write_history(tmp_path / "hist", "eam", files=3)


def opened(path):
    return unstack(xr.open_zarr(path, decode_times=DECODER, chunks=None))


def rewrite(path, change):
    """Rewrite one history file with ``change(ds) -> ds`` applied."""
    with xr.open_dataset(path, decode_times=DECODER) as ds:
        new = change(ds.load())
    fmt = "NETCDF3_64BIT_DATA" if Path(path).read_bytes()[:4] == b"CDF\x05" else "NETCDF4"
    os.remove(path)
    new.to_netcdf(path, format=fmt, engine="netcdf4")


def cli(*args) -> tuple[int, str]:
    """The command line in this process: its exit code and what it wrote to stderr."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main([*map(str, args), "--workers", "0", "--no-progress"])
    return rc, err.getvalue()


# -- data loss ---------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["file", "relative", "dotdot", "symlink"])
def test_an_output_spelt_as_the_inputs_folder_never_deletes_them(
    eam, tmp_path, spelling, monkeypatch
):
    folder = eam[0].parent
    monkeypatch.chdir(tmp_path)  # restored after: later tests run from the repository
    if spelling == "symlink":
        (tmp_path / "link").symlink_to(folder)
    output = {
        "file": f"file://{folder}",
        "relative": os.path.relpath(folder),
        "dotdot": f"{folder}/../{folder.name}",
        "symlink": "link",
    }[spelling]
    for sources in ([str(p) for p in eam], [f"{folder}/*.nc"], [f"file://{eam[0]}"]):
        rc, err = cli(*sources, "--output", output, "--overwrite")
        assert rc == 2 and "holds the input" in err, err
        assert all(p.exists() for p in eam)


def test_overwrite_never_deletes_a_folder_the_ingestion_did_not_write(eam, tmp_path):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("\\chapter{Four years}")
    rc, err = cli(*eam, "--output", thesis, "--overwrite")
    assert rc == 2 and "was not written by screamcast.ingest" in err
    assert "never replaced, even with --overwrite" in err
    assert (thesis / "thesis.tex").read_text() == "\\chapter{Four years}"
    zarr_like = tmp_path / "other.zarr"  # a zarr store someone else wrote
    xr.Dataset({"a": ("x", np.arange(3))}).to_zarr(zarr_like)
    with pytest.raises(IngestError, match="was not written by screamcast.ingest"):
        run(eam, zarr_like, overwrite=True)
    assert xr.open_zarr(zarr_like)["a"].values.tolist() == [0, 1, 2]


def _slow_run(sources, output, *extra, slow="0.4"):
    cmd = [sys.executable, "-m", "screamcast.ingest", *map(str, sources), "--output", str(output)]
    cmd += ["--workers", "0", "--block", "1", "--no-progress", *extra]
    env = dict(os.environ, SCREAMCAST_INGEST_SLOW=slow)
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def _wait_for_markers(folder: Path, count: int) -> None:
    deadline = time.time() + 60
    while time.time() < deadline and len(list(folder.glob(".ingest/*.json"))) < count:
        time.sleep(0.05)


def test_a_replacement_keeps_the_old_store_until_it_is_complete_and_runs_are_locked(eam, tmp_path):
    out = tmp_path / "s.zarr"
    run(eam[:2], out)  # the old store: 8 times
    staging = tmp_path / ".s.zarr.screamcast-ingest-new"
    proc = _slow_run(eam, out, "--overwrite")
    _wait_for_markers(staging, 2)
    # a second run while the first holds the output: refused, the running one untouched
    with pytest.raises(IngestError, match="in use by another process"):
        run(eam, out, overwrite=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert opened(out).sizes["time"] == 8  # the old store, whole, still there
    summary = run(eam, out, overwrite=True, block=1)  # resumes the replacement
    assert summary["state"] == "replaced" and summary["resumed_after"] >= 2
    assert opened(out).sizes["time"] == 12 and not staging.exists()
    assert not (tmp_path / ".s.zarr.lock").exists()


# -- silent wrong results ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["NETCDF3_64BIT_DATA", "NETCDF4"])
def test_a_truncated_history_file_is_refused_naming_it(tmp_path, fmt):
    files = write_history(tmp_path / "h", "eam", files=2, netcdf_format=fmt)
    whole = files[1].read_bytes()
    files[1].write_bytes(whole[: int(0.8 * len(whole))])  # its data cut, the header intact
    with pytest.raises(IngestError, match=r"h0\.2020-02-28-00\.nc (is truncated|cannot be read)"):
        run(files, tmp_path / "s.zarr")
    assert not (tmp_path / "s.zarr").exists()


def test_the_header_arithmetic_matches_real_classic_files(tmp_path):
    """The expected size from the header equals the size of files netCDF wrote (CDF1, CDF2,
    CDF5; one and several record variables, fixed-size ones)."""
    from screamcast.ingest.netcdf3 import expected_size

    for fmt in ("NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"):
        for names in (["a"], ["a", "b"]):
            ds = xr.Dataset(
                {n: (("time", "x"), np.ones((5, 3), "i1")) for n in names}
                | {"fixed": ("y", np.arange(7.0))},
                coords={"time": np.arange(5.0)},
            )
            path = tmp_path / f"{fmt}{len(names)}.nc"
            ds.to_netcdf(path, format=fmt, unlimited_dims=["time"], engine="netcdf4")
            assert expected_size(path.read_bytes()) == path.stat().st_size, (fmt, names)


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda ds: ds.assign(T=ds["T"].assign_attrs(units="degC")), "'T' is in units 'degC'"),
        (lambda ds: ds.assign_coords(lev=ds["lev"] + 1.0), "its 'lev' values"),
        (lambda ds: ds.assign(hyai=ds["hyai"] * 1.01), "vertical coefficient 'hyai'"),
        (lambda ds: ds.isel(lev=slice(0, 6), ilev=slice(0, 7)), "has 6 'lev' levels, not 8"),
    ],
    ids=["units", "lev-values", "hyai", "level-count"],
)
def test_every_file_is_compared_with_the_run(eam, tmp_path, change, words):
    for p in eam:  # every file in K
        rewrite(p, lambda ds: ds.assign(T=ds["T"].assign_attrs(units="K")))
    rewrite(eam[2], change)
    with pytest.raises(IngestError, match=rf"h0\.2020-03-01-00\.nc differs from .*{words}"):
        run(eam, tmp_path / "s.zarr")
    assert not (tmp_path / "s.zarr").exists()  # refused before the store was made


def _append_times(path, count=2):
    """Two more six-hourly times at the end of a history file, as a model still writing it."""

    def grow(ds):
        extra = ds.isel(time=slice(-count, None))
        step = ds["time"].values[1] - ds["time"].values[0]
        extra = extra.assign_coords(time=extra["time"].values + count * step)
        return xr.concat([ds, extra], "time", data_vars="minimal", coords="minimal")

    rewrite(path, grow)


def test_a_file_that_grew_after_ingestion_is_found(eam, tmp_path):
    out = tmp_path / "s.zarr"
    run(eam, out)
    _append_times(eam[2])
    with pytest.raises(IngestError, match=r"h0\.2020-03-01-00\.nc \(bytes .*times 4 -> 6"):
        run(eam, out)
    assert opened(out).sizes["time"] == 12  # left as it was
    assert run(eam, out, overwrite=True)["state"] == "replaced"
    assert opened(out).sizes["time"] == 14


def test_a_file_that_grew_during_a_killed_ingestion_is_found(eam, tmp_path, monkeypatch):
    from screamcast.ingest import execution

    out, real = tmp_path / "s.zarr", execution.process
    calls = []

    def dies_after_one(plan, a, b):
        if calls:
            raise KeyboardInterrupt
        calls.append(a)
        return real(plan, a, b)

    monkeypatch.setattr(execution, "process", dies_after_one)
    with pytest.raises(KeyboardInterrupt):
        run(eam, out)
    monkeypatch.setattr(execution, "process", real)
    _append_times(eam[2])
    with pytest.raises(IngestError, match="inputs changed since this store was planned"):
        run(eam, out)
    summary = run(eam, out, overwrite=True)  # an unfinished store holds nothing to keep
    assert summary["blocks"] == 5 and opened(out).sizes["time"] == 14


def test_a_file_off_the_step_is_named_and_gaps_never_change_the_step(eam, tmp_path):
    def shift(ds):
        return ds.assign_coords(
            time=[t + (ds["time"].values[1] - t) / 2 for t in ds["time"].values]
        )

    rewrite(eam[1], shift)  # 3 h off the 6 h step
    for gaps in (False, True):
        with pytest.raises(
            IngestError,
            match=r"h0\.2020-02-28-00\.nc: time 2020-02-28 03:00:00 is off the run's 6 h step",
        ):
            run(eam, tmp_path / "s.zarr", allow_gaps=gaps)


def test_fill_values_are_reported_with_their_times(eam, tmp_path):
    rewrite(eam[1], lambda ds: ds.assign(T=ds["T"].where(ds["time"] != ds["time"][2])))
    summary = run(eam, tmp_path / "s.zarr")
    assert summary["non_finite"] == {"T": {"values": 8 * 384, "times": ["2020-02-28 12:00:00"]}}
    assert opened(tmp_path / "s.zarr").attrs["non_finite"] == summary["non_finite"]


def test_float_day_times_round_to_the_second(tmp_path):
    files = write_history(tmp_path / "h", "eam", files=2, step_hours=1.0)
    for p in files:
        with xr.open_dataset(p, decode_times=DECODER) as ds:
            ds = ds.load()
        os.remove(p)
        enc = {
            "time": {"units": "days since 0001-01-01 00:00:00", "calendar": "noleap", "dtype": "f8"}
        }
        ds.to_netcdf(p, encoding=enc, engine="netcdf4")
    with xr.open_dataset(files[1], decode_times=DECODER) as ds:
        assert any(t.microsecond for t in ds["time"].values)  # what EAM's float days decode to
    run(files, tmp_path / "s.zarr")
    times = opened(tmp_path / "s.zarr")["time"].values
    assert [t.hour for t in times] == list(range(8)) and not any(t.microsecond for t in times)


# -- clear errors instead of tracebacks ---------------------------------------------------


def test_option_and_file_mistakes_are_named(eam, tmp_path):
    out = tmp_path / "s.zarr"
    bad = [
        ({"levels": [0, 9]}, r"--levels 0,9: 'T' has 8 'lev' levels \(indices 0 to 7\)"),
        ({"levels": [2, 2]}, r"--levels 2,2: level indices must be >= 0 and increase strictly"),
        ({"levels": [1], "layers": "4"}, "--levels and --layers exclude each other"),
        ({"variables": ["FOO"]}, r"no input file has a variable 'FOO' \(the fields .*: T, U"),
        ({"variables": ["hyai"]}, r"'hyai' is not a field on the physics grid \(dims \('ilev',\)"),
    ]
    for options, words in bad:
        with pytest.raises(IngestError, match=words):
            run(eam, out, **options)
    rewrite(eam[1], lambda ds: ds.drop_vars("PS"))
    with pytest.raises(
        IngestError, match=r"h0\.2020-02-28-00\.nc has no variable 'PS' \(needed for --layers\)"
    ):
        run(eam, out, layers="4", variables=["T"])
    assert not out.exists()


def test_files_in_two_calendars_are_named(eam, tmp_path):
    def gregorian(ds):
        import cftime

        t = ds["time"].values
        return ds.assign_coords(
            time=[cftime.datetime(*x.timetuple()[:6], calendar="standard") for x in t]
        )

    rewrite(eam[1], gregorian)
    with pytest.raises(
        IngestError,
        match=r"h0\.2020-02-28-00\.nc \(standard\): on another calendar than the run's "
        r"other 2 files \(noleap\)",
    ):
        run(eam, tmp_path / "s.zarr")


def test_a_full_disk_is_a_message_and_the_run_resumes_to_the_same_store(eam, tmp_path, monkeypatch):
    from screamcast.ingest import blocks

    run(eam, tmp_path / "whole.zarr")
    real, calls = blocks._write, []

    def full_after_two(plan, fields, t0, t1):
        calls.append(t0)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(plan, fields, t0, t1)

    monkeypatch.setattr(blocks, "_write", full_after_two)
    rc, err = cli(*eam, "--output", tmp_path / "s.zarr", "--block", "3")
    assert rc == 3 and "no space left on the device" in err and "run the same command again" in err
    monkeypatch.setattr(blocks, "_write", real)
    rc, _ = cli(*eam, "--output", tmp_path / "s.zarr", "--block", "3")
    assert rc == 0
    a, b = opened(tmp_path / "whole.zarr"), opened(tmp_path / "s.zarr")
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values)
    assert a.attrs["normalisation"] == b.attrs["normalisation"]


def test_an_unreachable_scheduler_leaves_nothing_behind(eam, tmp_path):
    with pytest.raises(
        IngestError, match=r"--scheduler tcp://127.0.0.1:9: no Dask scheduler answers"
    ):
        run(eam, tmp_path / "s.zarr", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "s.zarr").exists()


def test_a_store_killed_while_being_created_is_recreated(eam, tmp_path, monkeypatch):
    from screamcast.data import stacked

    real = stacked.create_stack

    def dies(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(stacked, "create_stack", dies)
    with pytest.raises(KeyboardInterrupt):
        run(eam, tmp_path / "s.zarr")
    monkeypatch.setattr(stacked, "create_stack", real)
    assert run(eam, tmp_path / "s.zarr")["blocks"] == 4
    assert opened(tmp_path / "s.zarr").sizes["time"] == 12


def test_an_output_beside_its_inputs_is_no_input_of_the_next_run(eam):
    folder = eam[0].parent
    glob = [f"{folder}/*"]
    assert run(glob, folder / "out.zarr")["blocks"] == 4
    assert run(glob, folder / "out.zarr")["state"] == "complete"


@pytest.mark.parametrize(
    "option, value",
    [
        ("variables", ["T", "PS"]),
        ("layers", "4"),
        ("levels", [0, 3]),
        ("block", 2),
        ("chunk", 4),
        ("layout", "variables"),
        ("shard", 4),
    ],
)
def test_every_option_that_shapes_the_store_is_in_its_fingerprint(eam, tmp_path, option, value):
    out = tmp_path / "s.zarr"
    run(eam, out)
    with pytest.raises(IngestError, match=rf"a store of another ingestion \({option}: the store's"):
        run(eam, out, **{option: value})
    assert run(eam, out, overwrite=True, **{option: value})["state"] == "replaced"
    assert run(eam, out, **{option: value})["state"] == "complete"


def test_training_names_the_times_the_ingestion_recorded_as_missing(eam, tmp_path):
    from screamcast.data.store import StoreError
    from screamcast.train.loop import train
    from tests.train.test_loop import config, on_ne4pg2

    store = tmp_path / "g.zarr"
    run([eam[0], eam[2]], store, allow_gaps=True)
    over = on_ne4pg2(
        store, "[PS]", "[]", "data.stats_from_store=true", "steps=1", f"run_dir={tmp_path / 'run'}"
    )
    with pytest.raises(
        StoreError,
        match=r"non-finite value in 'PS' at time index 4 .*the "
        r"ingestion recorded 2020-02-28 00:00:00 as missing from the history",
    ):
        train(config(*over))


@pytest.mark.s3
def test_on_s3_an_ingested_store_is_replaced_and_nothing_else_is(eam, s3):
    """Through moto's S3 server: --overwrite rebuilds an ingested store beside it and copies it
    in; a prefix the ingestion did not write and a prefix holding the inputs are refused."""
    import s3fs

    opts = s3["options"]
    fs = s3fs.S3FileSystem(**opts)
    for p in eam:
        fs.put(str(p), f"data/in/{p.name}")
    run(["s3://data/in/*.nc"], "s3://data/out.zarr", storage_options=opts)
    summary = run(
        ["s3://data/in/*.nc"], "s3://data/out.zarr", storage_options=opts, overwrite=True, block=2
    )
    assert summary["state"] == "replaced"
    assert xr.open_zarr(fs.get_mapper("data/out.zarr")).attrs["ingest_options"].count('"block": 2')
    assert not fs.exists("data/out.zarr.screamcast-ingest-new")
    fs.pipe("data/notes/thesis.tex", b"four years")
    with pytest.raises(IngestError, match="was not written by screamcast.ingest"):
        run(["s3://data/in/*.nc"], "s3://data/notes", storage_options=opts, overwrite=True)
    with pytest.raises(IngestError, match="holds the input"):
        run(["s3://data/in/*.nc"], "s3://data//in/", storage_options=opts, overwrite=True)
    assert fs.cat("data/notes/thesis.tex") == b"four years" and len(fs.ls("data/in")) == 3


def test_an_output_in_a_new_folder_is_written(eam, tmp_path):
    """The lock beside the output needs its folder: made, as zarr makes the store's own."""
    assert run(eam, tmp_path / "new" / "deeper" / "s.zarr")["blocks"] == 4
