# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from screamcast.grid import PhysicsGrid
from screamcast.sources import synthetic as syn

A = 6.37122e6  # Earth radius (../shared/reference/analytic-flows.md)


def test_store_vorticity_is_the_curl_of_the_stored_winds_formula(tiny_store):
    """The store's vorticity against a finite-difference curl of the Rossby-Haurwitz winds
    (and their divergence against zero) at its own cell centres and times: the three fields
    are checked against each other, not against the function that wrote them."""
    ds = xr.open_zarr(tiny_store, chunks=None)
    p, t0 = syn.FlowParameters(seed=0), ds.time.values[0]
    rng = np.random.default_rng(1)
    h = 1e-5  # radians
    for _ in range(20):
        t, f, y, x = (int(rng.integers(s)) for s in (ds.sizes["time"], 6, 16, 16))
        seconds = float((ds.time.values[t] - t0) / np.timedelta64(1, "s"))
        phi, lam = np.radians(float(ds.lat[f, y, x])), np.radians(float(ds.lon[f, y, x]))

        def wind(dphi=0.0, dlam=0.0, s=seconds, phi=phi, lam=lam):
            u, v, _ = syn.rossby_haurwitz(p, s, phi + dphi, lam + dlam)
            return u, v

        (u_e, v_e), (u_w, v_w) = wind(dlam=h), wind(dlam=-h)
        (u_n, v_n), (u_s, v_s) = wind(dphi=h), wind(dphi=-h)
        c_n, c_s = np.cos(phi + h), np.cos(phi - h)
        curl = ((v_e - v_w) / (2 * h) - (u_n * c_n - u_s * c_s) / (2 * h)) / (A * np.cos(phi))
        div = ((u_e - u_w) / (2 * h) + (v_n * c_n - v_s * c_s) / (2 * h)) / (A * np.cos(phi))
        stored = float(ds.vorticity.values[t, f, y, x])
        assert abs(curl - stored) <= 1e-4 * 1.6e-4, (t, f, y, x, curl, stored)
        assert abs(div) <= 1e-9, div  # non-divergent
        u, v = wind()
        assert abs(float(ds.u.values[t, f, y, x]) - u) <= 1e-4 * 100  # float32 storage
        assert abs(float(ds.v.values[t, f, y, x]) - v) <= 1e-4 * 100


def test_temperature_follows_the_lagged_insolation(tiny_store):
    """288 K - 40 K sin^2(lat) + 6 K cos Z three hours earlier, with cos Z from the reference's
    formula written out here (declination, hour angle), not screamcast.data.forcing."""
    ds = xr.open_zarr(tiny_store, chunks=None)
    lat, lon = np.radians(ds.lat.values), np.radians(ds.lon.values)
    for t in (0, 5, 11):
        when = ds.time.values[t] - np.timedelta64(3, "h")
        day = (when - when.astype("datetime64[Y]")) / np.timedelta64(1, "D")  # days since Jan 1
        hours = (when - when.astype("datetime64[D]")) / np.timedelta64(1, "h")
        delta = np.radians(23.44) * np.sin(2 * np.pi * (np.floor(day) + 1 - 81) / 365)
        hour_angle = 2 * np.pi * hours / 24 + lon - np.pi
        cos_z = np.sin(lat) * np.sin(delta) + np.cos(lat) * np.cos(delta) * np.cos(hour_angle)
        expected = 288.0 - 40.0 * np.sin(lat) ** 2 + 6.0 * cos_z
        np.testing.assert_allclose(ds.temperature.values[t], expected, atol=0.05)


def test_rossby_haurwitz_pattern_moves_at_its_phase_speed(tiny_store):
    ds = xr.open_zarr(tiny_store, chunks=None)
    lam = np.radians(ds.lon.values).ravel()
    s = np.sin(np.radians(ds.lat.values)).ravel()
    w = np.sqrt(PhysicsGrid.for_face_size(16).area.ravel())
    basis = np.stack([np.sin(4 * lam), np.cos(4 * lam)], axis=1) * w[:, None]

    def phase(t):  # v sin(lat) ~ -sin(R lam - theta): fit a sin + b cos, theta = atan2(b, -a)
        (a, b), *_ = np.linalg.lstsq(basis, ds.v.values[t].ravel() * s * w, rcond=None)
        return np.arctan2(b, -a)

    hours = float((ds.time.values[8] - ds.time.values[0]) / np.timedelta64(1, "h"))
    nu = np.angle(np.exp(1j * (phase(8) - phase(0)))) / (4 * hours * 3600)
    expected = syn.FlowParameters().nu
    assert nu == pytest.approx(expected, rel=2e-3), f"measured {nu:.5e}, analytic {expected:.5e}"


def test_fields_are_physical(tiny_store):
    ds = xr.open_zarr(tiny_store, chunks=None)
    assert float(np.abs(ds.u).max()) < 110 and float(ds.temperature.min()) > 200
    p = ds.precip.values
    assert p.min() >= 0 and 0.02 < (p > 0).mean() < 0.3, (p > 0).mean()
    assert (
        ds.precip.attrs["units"] == "kg m-2 s-1" and ds.u.attrs["standard_name"] == "eastward_wind"
    )
    assert ds.orography.dims == ("face", "y", "x") and float(ds.orography.min()) >= 0


def test_coarse_reference_is_the_block_mean_of_the_truth(tmp_path, tiny_store):
    ref = syn.write_store(tmp_path / "ref.zarr", 4, days=2, step_hours=6, coarsen=4)
    fine = xr.open_zarr(tiny_store, chunks=None)
    coarse = xr.open_zarr(ref, chunks=None)
    assert coarse.sizes["time"] == 9 and coarse.attrs["grid"] == "ne2pg2"
    a = fine.area.values.reshape(6, 4, 4, 4, 4)  # ne8pg2 cells in blocks of whole elements
    values = fine.temperature.sel(time=coarse.time).values.reshape(9, 6, 4, 4, 4, 4)
    block = (values * a).sum((3, 5)) / a.sum((2, 4))  # area-weighted
    np.testing.assert_allclose(coarse.temperature.values, block, rtol=1e-6)
    assert np.abs(values.mean((3, 5)) - block).max() > 1e-3  # not the plain mean


def test_refuses_to_overwrite_and_writes_zarr_v2(tmp_path):
    path = syn.write_store(tmp_path / "v2.zarr", 8, days=0.25, step_hours=3, zarr_format=2)
    assert (path / ".zgroup").exists()
    with pytest.raises(FileExistsError, match="already exists"):
        syn.write_store(path, 8, days=0.25)


def test_cli(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "screamcast.cli.demo_data", "--help"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "--reference" in out.stdout and "--days" in out.stdout
    cmd = [
        sys.executable,
        "-m",
        "screamcast.cli.demo_data",
        str(tmp_path / "a.zarr"),
        "--n",
        "8",
        "--days",
        "0.5",
        "--step-hours",
        "6",
        "--reference",
        str(tmp_path / "r.zarr"),
        "--reference-coarsen",
        "2",
        "--latlon-reference",
        str(tmp_path / "ll.zarr"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert xr.open_zarr(tmp_path / "r.zarr", chunks=None).sizes["y"] == 4
    raw = xr.open_zarr(tmp_path / "a.zarr", chunks=None)  # stacked by default, as ingested
    assert raw["fields"].dims == ("time", "channel", "face", "y", "x") and "u" not in raw
    assert dict(xr.open_zarr(tmp_path / "ll.zarr", chunks=None).sizes) == {
        "time": 3,
        "lat": 36,
        "lon": 72,
    }


def test_a_store_written_in_several_blocks_keeps_its_attrs(tmp_path):
    """Each append replaced the store's attrs with the block's (none): the demo store (14 days
    in blocks of 24 times) had lost its title, grid and seed."""
    import zarr

    path = syn.write_store(tmp_path / "b.zarr", 8, days=0.5, step_hours=3, block=2)
    attrs = dict(zarr.open_group(path).attrs)
    assert attrs["grid"] == "ne4pg2" and attrs["seed"] == 0
    assert xr.open_zarr(path, chunks=None).sizes["time"] == 5


def test_the_stacked_layout_holds_the_same_store(tmp_path):
    """Written in several blocks of times, stacked: through ``open_store`` the per-variable
    store, values, coordinates and attrs alike; bad layouts are refused by name."""
    from screamcast.data.store import open_store

    kw = dict(n=8, days=0.5, step_hours=3, block=2)
    a = syn.write_store(tmp_path / "a.zarr", **kw)
    b = syn.write_store(tmp_path / "b.zarr", **kw, layout="stacked")
    A, B = open_store(a).load(), open_store(b).load()
    del A.attrs["screamcast_url"], B.attrs["screamcast_url"]
    xr.testing.assert_identical(A, B)
    assert B.sizes["time"] == 5 and B.attrs["grid"] == "ne4pg2"
    with pytest.raises(ValueError, match="layout must be 'variables' or 'stacked', got 'stack'"):
        syn.write_store(tmp_path / "c.zarr", 8, days=0.25, layout="stack")
    with pytest.raises(ValueError, match="stacked layout needs zarr v3"):
        syn.write_store(tmp_path / "c.zarr", 8, days=0.25, layout="stacked", zarr_format=2)
    assert not (tmp_path / "c.zarr").exists()
