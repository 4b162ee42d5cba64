# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-evaluate --climate``: a rollout whose jet is 2 m/s stronger and whose
temperature is 0.5 K warmer than the truth's reports exactly that, with its figures."""

import numpy as np
import pytest
import xarray as xr

from screamcast.cli.evaluate import main
from screamcast.grid import PhysicsGrid


def store(path, times: int, jet: float, warm: float, seed: int) -> str:
    """U, V, T on 2 layers: a jet at 45 degrees of ``jet`` m/s, eddies, T falling poleward."""
    grid = PhysicsGrid.for_face_size(16)
    lat = grid.lat  # (6, n, n), degrees
    rng = np.random.default_rng(seed)
    shape = (times, 2, 6, 16, 16)
    u = jet * np.exp(-(((np.abs(lat) - 45) / 10) ** 2)) + rng.normal(0, 3, shape)
    v = rng.normal(0, 3, shape)
    t = 290 - 40 * np.sin(np.deg2rad(lat)) ** 2 + warm + rng.normal(0, 1, shape)
    t[:, 1] -= 30  # the upper layer colder
    dims = ("time", "lev", "face", "y", "x")
    ds = xr.Dataset(
        {k: (dims, a.astype(np.float32)) for k, a in (("U", u), ("V", v), ("T", t))},
        coords={
            "time": np.arange(times) * np.timedelta64(6, "h") + np.datetime64("2001-01-01"),
            "lat": (("face", "y", "x"), lat),
            "area": (("face", "y", "x"), grid.area),
        },
        attrs={"grid": grid.name},
    )
    ds.to_zarr(path, consolidated=False)
    return str(path)


def test_a_warm_fast_rollout_reports_its_biases(tmp_path):
    truth = store(tmp_path / "truth.zarr", 12, jet=30.0, warm=0.0, seed=0)
    out = store(tmp_path / "out.zarr", 8, jet=32.0, warm=0.5, seed=1)
    report = tmp_path / "r"
    assert main([out, "--truth", truth, "--climate", "--report", str(report)]) == 0
    text = (report / "climate.md").read_text()
    for figure in ("climate_zonal", "climate_eke", "climate_ke_spectrum", "climate_global_t"):
        assert (report / f"{figure}.png").stat().st_size > 10_000
    jets = [line for line in text.splitlines() if "jet" in line]
    speeds = [[float(w) for w in line.split("|")[2:4] for w in [w.split()[0]]] for line in jets]
    for rollout, truth_speed in speeds:
        assert rollout - truth_speed == pytest.approx(2.0, abs=0.6)
    t_bias = next(line for line in text.splitlines() if "T bias" in line)
    assert float(t_bias.split("|")[2]) == pytest.approx(0.5, abs=0.1)
    g = next(line for line in text.splitlines() if "global-mean T, mean" in line).split("|")
    assert float(g[2]) - float(g[3]) == pytest.approx(0.5, abs=0.05)


def test_a_store_without_the_winds_is_refused(tmp_path, capsys):
    truth = store(tmp_path / "truth.zarr", 4, 30.0, 0.0, 0)
    assert main([truth, "--truth", truth, "--climate", "--climate-names", "u,v,T"]) == 2
    assert "needs the winds and temperature u, v, T (missing: u, v)" in capsys.readouterr().err


def test_a_stopped_rollouts_spectrum_is_its_last_written_time(tmp_path):
    """A rollout its guard stopped leaves NaN in the times it never wrote: the spectrum is
    that of its last finite time (it took the store's last time: all NaN, an empty curve)."""
    from screamcast.evaluation.climate_report import climate_report
    from screamcast.evaluation.spectra import CubeSpectrum

    truth = store(tmp_path / "truth.zarr", 12, 30.0, 0.0, 0)
    out = xr.open_zarr(store(tmp_path / "out.zarr", 8, 32.0, 0.5, 1)).load()
    for name in ("U", "V", "T"):
        out[name][5:] = np.nan  # steps 5.. never written
    out.to_zarr(tmp_path / "stopped.zarr", consolidated=False)
    got = climate_report(str(tmp_path / "stopped.zarr"), truth, tmp_path / "r")["ke_spectrum"]
    spec = CubeSpectrum(PhysicsGrid.for_face_size(16))
    at = out.isel(time=4)
    expected = 0.5 * (spec(at["U"].values[0]) + spec(at["V"].values[0]))
    assert got["time"] == "2001-01-02 00:00:00"  # time 4: a day after the start
    np.testing.assert_allclose(got["rollout"], expected, rtol=1e-6)
    assert np.isfinite(got["rollout"]).all() and expected[1:].sum() > 1.0
