# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Real SCREAM data, end to end: a store in E3SM's exact layout (columns in global-id order on
ne8pg2, ``noleap`` times crossing Feb 28 -> Mar 1 of a leap year, a 3-D field with the level
last and one with the level first, 2-D fields) is opened, trained on with the pytest
experiment, resumed, rolled out with nudging toward a coarser reference, and the output's
values, grid, levels, calendar and attrs are checked."""

import cftime
import numpy as np
import pytest
import xarray as xr

from screamcast import checkpoint_format as fmt
from screamcast.data.calendar import DECODER
from screamcast.data.store import StoreError, open_store
from screamcast.grid import PhysicsGrid
from screamcast.sources import synthetic_e3sm as e3sm
from screamcast.train.loop import train
from tests.rollout.test_run_nudged import args, cli
from tests.train.test_loop import config

PROG = ["u", "v", "T_mid", "Q"]
CHANNELS = ["u", "v", "T_mid[0]", "T_mid[1]", "T_mid[2]", "Q[0]", "Q[1]", "Q[2]"]


@pytest.fixture(scope="module")
def column_store(tmp_path_factory):
    return e3sm.write_column_store(tmp_path_factory.mktemp("e3sm") / "h0.zarr", ne=8, days=3)


@pytest.fixture(scope="module")
def coarse_reference(tmp_path_factory, column_store):
    """ne4pg2, 6-hourly: the area-weighted block means of the truth on whole elements."""
    fine = open_store(column_store, None, ["T_mid"], n=16)
    grid = PhysicsGrid(8, 2)
    a = grid.area.reshape(6, 8, 2, 8, 2)
    values = fine["T_mid"].values[::2].reshape(-1, 3, 6, 8, 2, 8, 2)
    coarse = (values * a).sum((4, 6)) / a.sum((2, 4))  # (time, lev, 6, 8, 8)
    g = PhysicsGrid(4, 2)
    ds = xr.Dataset(
        {"T_mid": (("time", "lev", "face", "y", "x"), coarse.astype(np.float32), {"units": "K"})},
        coords={
            "time": fine.time.values[::2],
            "lev": fine.lev,
            "lat": (("face", "y", "x"), g.lat),
            "lon": (("face", "y", "x"), g.lon),
        },
        attrs={"grid": "ne4pg2"},
    )
    path = tmp_path_factory.mktemp("e3sm") / "ref.zarr"
    ds.to_zarr(path, consolidated=False, encoding={"time": {"units": "hours since 2020-02-27"}})
    return path


def test_the_column_store_opens_on_its_grid_and_calendar(column_store):
    raw = xr.open_zarr(column_store, decode_times=DECODER, chunks=None)
    assert raw["T_mid"].dims == ("time", "ncol", "lev") and raw["Q"].dims == ("time", "lev", "ncol")
    ds = open_store(column_store, None, PROG, ["orography"], n=16)
    assert ds.attrs["grid"] == "ne8pg2" and ds["time"].values[0].calendar == "noleap"
    # regular across Feb 28 -> Mar 1 of 2020 (a leap year in the Gregorian calendar)
    t = ds["time"].values
    i = int(np.flatnonzero(t == cftime.datetime(2020, 3, 1, calendar="noleap"))[0])
    assert t[i] - t[i - 1] == t[1] - t[0]
    # column c of the file is cell (face, y, x) = order[c]; the levels are channels
    order = PhysicsGrid(8, 2).column_index()
    f, y, x = np.unravel_index(order[50], (6, 16, 16))
    assert ds["T_mid[1]"].values[5, f, y, x] == raw["T_mid"].values[5, 50, 1]
    assert ds["Q[2]"].values[5, f, y, x] == raw["Q"].values[5, 2, 50]
    assert ds["u"].values[5, f, y, x] == raw["u"].values[5, 50]
    assert ds["T_mid[1]"].attrs["level"] == 500.0


def test_bad_3d_requests_are_refused_clearly(column_store, tmp_path):
    with pytest.raises(StoreError, match=r"levels \[3\] of 'T_mid' are not among its 3 levels"):
        open_store(column_store, None, ["T_mid"], n=16, levels={"T_mid": [3]})
    two = xr.open_zarr(column_store, chunks=None).isel(time=slice(0, 2))
    two["W"] = two["T_mid"].expand_dims(dim2=2, axis=2)  # (time, ncol, dim2, lev)
    two.to_zarr(tmp_path / "two.zarr", consolidated=False)
    with pytest.raises(StoreError, match=r"'W' has dims .* more than one dim .*dim2, lev"):
        open_store(tmp_path / "two.zarr", None, ["W"], n=16)


def test_train_resume_and_nudged_rollout(column_store, coarse_reference, tmp_path, capsys):
    over = [
        "experiment=pytest",
        f"data.url={column_store}",
        f"data.prognostic=[{','.join(PROG)}]",
        "data.diagnostic=[precip]",
        "data.static=[orography]",
        "data.train_range=[0,-8]",
        "data.valid_range=[-8,0]",
        f"run_dir={tmp_path / 'run'}",
    ]
    run = train(config(*over, "steps=4"))
    desc = fmt.load(run / "latest.pth")["description"]
    assert desc["variables"]["prognostic"] == CHANNELS
    assert desc["grid"]["name"] == "ne8pg2" and desc["calendar"] == "noleap"
    assert set(desc["stats"]["mean"]) >= {"T_mid[0]", "T_mid[2]", "Q[1]"}  # per level
    assert desc["stats"]["mean"]["T_mid[0]"] < desc["stats"]["mean"]["T_mid[2]"] - 40
    train(config(*over, "steps=6"))  # resumes from step 4
    raw = fmt.load(run / "latest.pth")
    assert raw["step"] == 6

    out = tmp_path / "out.zarr"
    extra = ["--reference", str(coarse_reference), "--nudge-vars", "T_mid[1:]"]
    extra += ["--start", "2020-02-28T12:00", "--nudge-tau-hours", "3"]
    assert cli.main(args(run / "latest.pth", column_store, out, *extra, steps=6)) == 0
    ds = xr.open_zarr(out, consolidated=False, decode_times=DECODER, chunks=None)
    assert ds.attrs["grid"] == "ne8pg2" and ds.attrs["calendar"] == "noleap"
    assert ds.attrs["nudge_vars"] == "T_mid[1],T_mid[2]"
    assert "block mean over 2x2" in ds.attrs["nudge_projection"]
    assert ds["T_mid"].dims == ("time", "lev", "face", "y", "x")
    np.testing.assert_array_equal(ds["lev"].values, e3sm.LEVELS)
    assert ds["Q"].dims == ("time", "lev", "face", "y", "x") and ds["u"].ndim == 4
    want = [cftime.datetime(2020, 2, 28, h, calendar="noleap") for h in (12, 15, 18, 21)]
    want += [cftime.datetime(2020, 3, 1, h, calendar="noleap") for h in (0, 3, 6)]
    assert list(ds["time"].values) == want
    assert ds["time"].encoding["calendar"] == "noleap"
    np.testing.assert_allclose(ds["area"].values.sum(), 4 * np.pi, rtol=1e-12)
    # step 0 is the initial condition, mapped from the columns exactly
    ic = open_store(column_store, None, PROG, n=16)
    start = int(np.flatnonzero(ic["time"].values == want[0])[0])
    np.testing.assert_array_equal(ds["T_mid"].values[0], ic["T_mid"].values[start])
    np.testing.assert_array_equal(ds["Q"].values[0], ic["Q"].values[start])
    # the nudged levels end closer to the truth's large scales than a free run's
    free = tmp_path / "free.zarr"
    assert cli.main(args(run / "latest.pth", column_store, free, *extra[4:], steps=6)) == 0
    free_ds = xr.open_zarr(free, consolidated=False, decode_times=DECODER, chunks=None)
    a = PhysicsGrid(8, 2).area.reshape(6, 8, 2, 8, 2)

    def large_scale_error(field, level):
        err = field["T_mid"].values[-1, level] - ic["T_mid"].values[start + 6, level]
        block = (err.reshape(6, 8, 2, 8, 2) * a).sum((2, 4)) / a.sum((2, 4))
        return float(np.sqrt((block**2).mean()))

    for level in (1, 2):
        assert large_scale_error(ds, level) < 0.8 * large_scale_error(free_ds, level)
    # a reference on other levels is refused before any step, naming the channel and levels
    other = xr.open_zarr(coarse_reference, decode_times=DECODER, chunks=None).load()
    other = other.assign_coords(lev=other.lev * 1.01)
    for v in other.variables.values():
        v.encoding.clear()
    other.to_zarr(tmp_path / "other_levels.zarr", consolidated=False)
    bad = [*extra[4:], "--reference", str(tmp_path / "other_levels.zarr"), "--nudge-vars", "T_mid"]
    assert cli.main(args(run / "latest.pth", column_store, tmp_path / "x.zarr", *bad)) == 2
    err = capsys.readouterr().err
    assert "'T_mid[0]' is at lev = 252.5, but the model's data has it at lev = 250" in err
    assert not (tmp_path / "x.zarr").exists()


def test_a_checkpoint_is_refused_on_a_store_of_another_grid(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """ne8pg2 and ne16pg1 both have faces of 16 cells: only the grid's name tells them apart."""
    ds = xr.open_zarr(tiny_store, decode_times=DECODER, chunks=None).load()
    other = PhysicsGrid(16, 1)
    ds = ds.assign_coords(lat=(("face", "y", "x"), other.lat), lon=(("face", "y", "x"), other.lon))
    ds.attrs["grid"] = "ne16pg1"
    for v in ds.variables.values():
        v.encoding.clear()
    ds.to_zarr(tmp_path / "pg1.zarr", consolidated=False)
    code = cli.main(args(tiny_checkpoint, tmp_path / "pg1.zarr", tmp_path / "o.zarr", steps=1))
    assert code == 2 and not (tmp_path / "o.zarr").exists()
    assert "trained on grid ne8pg2, but the initial condition" in capsys.readouterr().err
