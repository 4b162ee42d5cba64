# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from screamcast.data import synthetic as syn
from screamcast.grid import CubedSphereGrid


def test_store_matches_the_analytic_formulas_at_random_points(tiny_store):
    ds = xr.open_zarr(tiny_store)
    p = syn.FlowParameters(seed=0)
    t0 = ds.time.values[0]
    rng = np.random.default_rng(1)
    for _ in range(20):
        t, f, y, x = (int(rng.integers(s)) for s in (ds.sizes["time"], 6, 16, 16))
        truth = syn.evaluate(
            p, ds.time.values[t], t0, ds.lat.values[f, y, x], ds.lon.values[f, y, x]
        )
        for var, value in truth.items():
            scale = float(np.abs(ds[var].isel(time=t)).max()) or 1.0
            got = float(ds[var].values[t, f, y, x])
            assert abs(got - float(value)) <= 1e-5 * scale, (var, t, f, y, x, got, float(value))


def test_rossby_haurwitz_pattern_moves_at_its_phase_speed(tiny_store):
    ds = xr.open_zarr(tiny_store)
    lam = np.radians(ds.lon.values).ravel()
    s = np.sin(np.radians(ds.lat.values)).ravel()
    w = np.sqrt(CubedSphereGrid(16).area.ravel())
    basis = np.stack([np.sin(4 * lam), np.cos(4 * lam)], axis=1) * w[:, None]

    def phase(t):  # v sin(lat) ~ -sin(R lam - theta): fit a sin + b cos, theta = atan2(b, -a)
        (a, b), *_ = np.linalg.lstsq(basis, ds.v.values[t].ravel() * s * w, rcond=None)
        return np.arctan2(b, -a)

    hours = float((ds.time.values[8] - ds.time.values[0]) / np.timedelta64(1, "h"))
    nu = np.angle(np.exp(1j * (phase(8) - phase(0)))) / (4 * hours * 3600)
    expected = syn.FlowParameters().nu
    assert nu == pytest.approx(expected, rel=2e-3), f"measured {nu:.5e}, analytic {expected:.5e}"


def test_fields_are_physical(tiny_store):
    ds = xr.open_zarr(tiny_store)
    assert float(np.abs(ds.u).max()) < 110 and float(ds.temperature.min()) > 200
    p = ds.precip.values
    assert p.min() >= 0 and 0.02 < (p > 0).mean() < 0.3, (p > 0).mean()
    assert (
        ds.precip.attrs["units"] == "kg m-2 s-1" and ds.u.attrs["standard_name"] == "eastward_wind"
    )
    assert ds.orography.dims == ("face", "y", "x") and float(ds.orography.min()) >= 0


def test_coarse_reference_is_the_block_mean_of_the_truth(tmp_path, tiny_store):
    ref = syn.write_store(tmp_path / "ref.zarr", 4, days=2, step_hours=6, coarsen=4)
    fine = xr.open_zarr(tiny_store)
    coarse = xr.open_zarr(ref)
    assert coarse.sizes["time"] == 9
    block = fine.temperature.sel(time=coarse.time).values.reshape(9, 6, 4, 4, 4, 4).mean((3, 5))
    np.testing.assert_allclose(coarse.temperature.values, block, rtol=1e-6)


def test_refuses_to_overwrite_and_writes_zarr_v2(tmp_path):
    path = syn.write_store(tmp_path / "v2.zarr", 8, days=0.25, step_hours=3, zarr_format=2)
    assert (path / ".zgroup").exists()
    with pytest.raises(FileExistsError, match="already exists"):
        syn.write_store(path, 8, days=0.25)


def test_cli(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "screamcast.data.synthetic", "--help"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "--reference" in out.stdout and "--days" in out.stdout
    cmd = [sys.executable, "-m", "screamcast.data.synthetic", str(tmp_path / "a.zarr"), "--n", "8",
           "--days", "0.5", "--step-hours", "6", "--reference", str(tmp_path / "r.zarr"),
           "--reference-coarsen", "2", "--latlon-reference", str(tmp_path / "ll.zarr")]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert xr.open_zarr(tmp_path / "r.zarr").sizes["y"] == 4
    assert dict(xr.open_zarr(tmp_path / "ll.zarr").sizes) == {"time": 3, "lat": 36, "lon": 72}
