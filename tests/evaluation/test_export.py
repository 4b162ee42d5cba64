# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-export``: a rollout output in E3SM's column order with CF metadata, time
means, a conservative lat-lon grid, and the refusals; read back with the package's reader."""

import numpy as np
import pytest
import xarray as xr

from screamcast.cli.export import main
from screamcast.cli.grid import main as grid_main
from screamcast.data.store import open_store
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid
from tests.evaluation.export_inputs import HYAM, LEVELS, ps, t_mid, write_output

GRID = PhysicsGrid(4, 2)


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """13 times of which 11 are complete (a rollout stopped early)."""
    path = tmp_path_factory.mktemp("export") / "rollout.zarr"
    write_output(path, GRID, steps=13, complete=11)
    return path


def test_native_files_hold_every_column_in_ncol_order(output, tmp_path):
    prefix = tmp_path / "run.scream.h"
    assert main([str(output), "--output", str(prefix), "--times-per-file", "4"]) == 0
    files = sorted(tmp_path.glob("run.scream.h.*.nc"))
    names = ["0001-01-30-00000", "0001-01-31-00000", "0001-02-01-00000"]
    assert [f.name for f in files] == [f"run.scream.h.{d}.nc" for d in names]
    ds = xr.concat([xr.open_dataset(f) for f in files], "time", data_vars="minimal")
    assert ds.sizes["time"] == 11  # the complete steps only
    assert ds.ps.dims == ("time", "ncol") and ds.T_mid.dims == ("time", "lev", "ncol")
    xyz = latlon_to_xyz(ds.lat.values, ds.lon.values)  # the file's own coordinates
    assert np.abs(xyz - GRID.xyz.reshape(-1, 3)[GRID.column_index()]).max() < 1e-14
    for k in range(11):
        np.testing.assert_allclose(ds.ps.values[k], ps(xyz, k), rtol=1e-7)
        np.testing.assert_allclose(ds.T_mid.values[k, 1], t_mid(xyz, k, 1), rtol=1e-7)
    np.testing.assert_allclose(ds.area.values.sum(), 4 * np.pi, rtol=1e-13)
    assert ds.attrs["Conventions"] == "CF-1.7" and ds.attrs["ne"] == 4 and ds.attrs["fv_nphys"] == 2
    assert ds.attrs["source_checkpoint"] == "demo.ckpt" and "complete_steps" not in str(ds.attrs)
    assert ds.ps.attrs == {
        "units": "Pa",  # the source's
        "long_name": "surface pressure",
        "standard_name": "surface_air_pressure",
        "cell_methods": "time: point",
    }
    assert ds.T_mid.attrs["units"] == "K" and ds.T_mid.attrs["standard_name"] == "air_temperature"
    assert ds.lev.values.tolist() == LEVELS.tolist() and ds.lev.attrs["units"] == "hPa"
    assert ds.hyam.values.tolist() == HYAM.tolist() and float(ds.P0) == 1e5
    raw = xr.open_dataset(files[0], decode_times=False)
    assert raw.time.attrs["calendar"] == "noleap" and raw.time.attrs["bounds"] == "time_bnds"
    assert raw.time.attrs["units"] == "days since 0001-01-30"
    assert raw.time.values.tolist() == [0, 0.25, 0.5, 0.75]
    assert raw.time_bnds.values.tolist() == [[t, t] for t in (0, 0.25, 0.5, 0.75)]


def test_the_package_reads_an_export_back_onto_its_grid(output, tmp_path):
    """A zarr export is a column store the package's own reader maps back, value for value."""
    assert main([str(output), "--output", str(tmp_path / "e.zarr"), "--format", "zarr"]) == 0
    back = open_store(tmp_path / "e.zarr", variables=["ps"])
    source = xr.open_zarr(output)
    assert back.attrs["grid"] == "ne4pg2" and back.sizes["time"] == 11
    np.testing.assert_array_equal(back.ps.values, source.ps.values[:11])


def test_daily_and_monthly_means_have_the_periods_bounds(output, tmp_path):
    assert main([str(output), "--output", str(tmp_path / "d"), "--average", "daily"]) == 0
    (daily,) = tmp_path.glob("d.*.nc")
    raw = xr.open_dataset(daily, decode_times=False)
    # Jan 30: steps 0-3, Jan 31: 4-7, Feb 1: 8-10 (its 11th and 12th were never written)
    assert raw.time_bnds.values.tolist() == [[0, 1], [1, 2], [2, 3]]
    assert raw.time.values.tolist() == [1, 2, 3]  # the period's end, as EAM writes means
    xyz = latlon_to_xyz(raw.lat.values, raw.lon.values)
    for day, steps in enumerate([range(0, 4), range(4, 8), range(8, 11)]):
        want = np.mean([ps(xyz, k).astype(np.float32) for k in steps], axis=0)
        np.testing.assert_allclose(raw.ps.values[day], want, rtol=1e-7)
    assert raw.ps.attrs["cell_methods"] == "time: mean"
    assert raw.time_samples.values.tolist() == [4, 4, 3]  # Feb 1 is covered in part
    assert main([str(output), "--output", str(tmp_path / "m"), "--average", "monthly"]) == 0
    (monthly,) = tmp_path.glob("m.*.nc")
    assert monthly.name == "m.0001-01-01-00000.nc"
    raw = xr.open_dataset(monthly, decode_times=False)
    assert raw.time_bnds.values.tolist() == [[0, 31], [31, 59]]  # noleap: February has 28 days
    want = np.mean([ps(xyz, k).astype(np.float32) for k in range(8)], axis=0)
    np.testing.assert_allclose(raw.ps.values[0], want, rtol=1e-7)


def test_latlon_export_is_conservative(output, tmp_path):
    argv = [str(output), "--output", str(tmp_path / "ll"), "--latlon", "18x36", "--variables"]
    assert main([*argv, "ps"]) == 0
    (path,) = tmp_path.glob("ll.*.nc")
    ds = xr.open_dataset(path)
    assert list(ds.data_vars) == ["ps", "P0"] and ds.ps.dims == ("time", "lat", "lon")
    assert ds.lat.values[0] == -85 and ds.lon.values[0] == 5
    assert ds.lat_bnds.values[0].tolist() == [-90, -80]
    assert ds.ps.attrs["cell_methods"] == "time: point area: mean"
    np.testing.assert_allclose(ds.area.values.sum(), 4 * np.pi, rtol=1e-13)
    for k in (0, 10):
        source = (GRID.area * ps(GRID.xyz, k)).sum()
        latlon = (ds.area.values * ds.ps.values[k]).sum()
        assert abs(latlon / source - 1) < 1e-7  # the global integral is kept


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--variables", "ps,nope"], "has no variable 'nope' on its grid (it has: T_mid, ps)"),
        (["--latlon", "18by36"], "--latlon '18by36': expected NLATxNLON"),
        (["--times-per-file", "0"], "--times-per-file: 0 must be a positive integer"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(output, tmp_path, capsys, extra, message):
    assert main([str(output), "--output", str(tmp_path / "x"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_an_existing_output_is_never_overwritten_silently(output, tmp_path, capsys):
    prefix = str(tmp_path / "h")
    assert main([str(output), "--output", prefix, "--average", "daily"]) == 0
    (path,) = tmp_path.glob("h.*.nc")
    before = path.read_bytes()
    assert main([str(output), "--output", prefix, "--average", "daily"]) == 2
    assert "already exists: choose another --output or pass --overwrite" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert main([str(output), "--output", prefix, "--average", "daily", "--overwrite"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no partial file left
    assert grid_main(["scrip", "--grid", "ne4pg2", "--output", str(tmp_path / "g.nc")]) is None


def test_overwrite_replaces_only_an_earlier_export_never_the_source(tmp_path, capsys):
    """--overwrite on the rollout output itself, or on a folder that is not an export, is
    refused and leaves it as it was; an earlier export is replaced."""
    src = tmp_path / "rollout.zarr"
    write_output(src, GRID, steps=2)
    before = sorted(p.name for p in src.iterdir())
    assert main([str(src), "--format", "zarr", "--output", str(src), "--overwrite"]) == 2
    assert "is the source" in capsys.readouterr().err
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert main([str(src), "--format", "zarr", "--output", str(mine), "--overwrite"]) == 2
    assert "is not a screamcast export" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "mine" and sorted(
        p.name for p in src.iterdir()
    ) == before
    out = tmp_path / "out.zarr"
    assert main([str(src), "--format", "zarr", "--output", str(out)]) == 0
    assert main([str(src), "--format", "zarr", "--output", str(out), "--overwrite"]) == 0


def test_an_ingested_store_exports_to_netcdf(tmp_path):
    """Its boolean attrs (ingest_created) are written as integers: netCDF has no booleans
    (the export had stopped with a TypeError on every ingested store)."""
    from screamcast.ingest import IngestOptions, ingest
    from screamcast.sources.synthetic_e3sm import write_history

    files = write_history(tmp_path / "hist", "eamxx", files=2)
    store = tmp_path / "scream.zarr"
    ingest(IngestOptions([str(f) for f in files], str(store), workers=0, progress=False))
    assert main([str(store), "--output", str(tmp_path / "out" / "store")]) == 0
    (path,) = (tmp_path / "out").glob("store.*.nc")
    with xr.open_dataset(path) as ds:
        assert ds.attrs["source_ingest_created"] == 1 and ds["ps"].dims == ("time", "ncol")
