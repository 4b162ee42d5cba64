# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest
import xarray as xr

from screamcast.data.forcing import (
    SOLAR_CONSTANT,
    extended_position_features,
    forcing_fields,
    forcing_names,
    insolation,
    position_features,
    position_names,
    solar_terms,
    trig_channels,
)
from screamcast.data.stats import Stats, compute_stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.metric import METRIC_CHANNELS


def test_insolation_at_known_points():
    noon = np.datetime64("2020-03-21T12:00")  # doy 81: declination 0
    s = insolation(noon, np.array([0.0, 0.0, 89.0]), np.array([0.0, 180.0, 0.0]))[0]
    assert s[0] == pytest.approx(SOLAR_CONSTANT, rel=1e-6)
    assert s[1] == 0.0 and s[2] < 0.02 * SOLAR_CONSTANT


def test_global_mean_insolation_is_a_quarter_of_s0():
    g = PhysicsGrid.for_face_size(24)
    times = np.datetime64("2020-03-21") + np.arange(24) * np.timedelta64(1, "h")
    mean = (insolation(times, g.lat, g.lon) * g.area).sum((1, 2, 3)) / g.area.sum()
    assert mean.mean() == pytest.approx(SOLAR_CONSTANT / 4, rel=0.01)


def test_position_features():
    f = position_features(np.array([30.0]), np.array([90.0]))
    np.testing.assert_allclose(f[:, 0], [0.5, np.sqrt(3) / 2, 1.0, 0.0], atol=1e-7)


@pytest.mark.parametrize("metric", [False, True])
def test_the_position_channels_found_by_name_hold_the_trigonometry(metric):
    """Among 2 static variables and the position features, ``trig_channels`` finds sin, cos
    of latitude and longitude of each pixel (with the metric's 4 channels before them)."""
    geo = ExtendedFaceGeometry(TileLayout(PhysicsGrid.for_face_size(8), 4, 2))
    features = extended_position_features(geo, metric)  # (K, 6, P, P)
    assert len(features) == len(position_names(metric)) == 4 + METRIC_CHANNELS * metric
    static = np.concatenate([np.zeros((2, *features.shape[1:]), np.float32), features])
    trig = static[trig_channels(2, metric)]  # (4, 6, P, P)
    np.testing.assert_allclose(trig, position_features(geo.lat, geo.lon), rtol=0, atol=0)


def test_the_forcing_channels_by_name():
    """Insolation alone, with the solar time, or none without a sun; in numpy as in torch."""
    assert forcing_names(False) == ("insolation",)
    assert forcing_names(True) == ("insolation", "cos_hour_angle", "sin_hour_angle")
    assert forcing_names(True, insolation=False) == ()
    lat, lon = np.array([0.0, 0.0, 60.0]), np.array([0.0, 180.0, 90.0])
    noon = np.array([np.datetime64("2020-03-21T12:00")])
    trig = position_features(lat, lon).astype(np.float64)  # (4, 3)
    sun, cos_h, sin_h = forcing_fields(forcing_names(True), solar_terms(noon), trig)
    np.testing.assert_allclose(sun * SOLAR_CONSTANT, insolation(noon, lat, lon)[0], atol=1e-3)
    np.testing.assert_allclose(cos_h[:2], [1.0, -1.0], atol=1e-3)  # noon, midnight
    torch = pytest.importorskip("torch")
    terms = [torch.as_tensor(t) for t in solar_terms(noon)]
    got = forcing_fields(forcing_names(True), terms, torch.as_tensor(trig).unbind(0))
    for a, b in zip(got, (sun, cos_h, sin_h), strict=True):
        assert np.array_equal(a.numpy(), b)


def test_stats_match_a_direct_computation_and_round_trip(tiny_store, tmp_path):
    ds = xr.open_zarr(tiny_store, chunks=None)
    stats = compute_stats(ds, ["u", "tracer"], ["orography"], block=5)
    w = PhysicsGrid.for_face_size(16).area
    u = ds.u.values.astype(np.float64)
    mean = (u * w).sum() / (w.sum() * u.shape[0])
    std = np.sqrt((((u - mean) ** 2) * w).sum() / (w.sum() * u.shape[0]))
    d = np.diff(u, axis=0)
    dmean = (d * w).sum() / (w.sum() * d.shape[0])
    dstd = np.sqrt((((d - dmean) ** 2) * w).sum() / (w.sum() * d.shape[0]))
    assert stats.mean["u"] == pytest.approx(mean, rel=1e-9)
    assert stats.std["u"] == pytest.approx(std, rel=1e-9)
    assert stats.diff_std["u"] == pytest.approx(dstd, rel=1e-9)
    assert stats.diff_std["u"] < stats.std["u"]  # residual prediction has the smaller scale
    other = compute_stats(ds, ["u"], block=100)
    assert other.diff_std["u"] == pytest.approx(stats.diff_std["u"], rel=1e-9)
    stats.save(tmp_path / "stats.json")
    assert Stats.load(tmp_path / "stats.json") == stats


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_one_non_finite_value_is_refused_by_the_statistics(tiny_store, bad):
    """One NaN (or inf) at one pixel made a variable's mean NaN, and the first step's
    gradients non-finite, unnamed; it is refused naming variable, time and pixel."""
    from screamcast.data.remote import StoreError

    ds = xr.open_zarr(tiny_store, chunks=None).load()
    ds["tracer"][10, 2, 3, 4] = bad
    when = str(ds["time"].values[10])[:10]
    message = rf"store s.zarr: non-finite value in 'tracer' at time index 10 \({when}.*face 2, "
    with pytest.raises(StoreError, match=message + r"face pixel \(y=3, x=4\)"):
        compute_stats(ds, ["u", "tracer"], ["orography"], block=4, url="s.zarr")
    ds["orography"][1, 5, 6] = bad
    with pytest.raises(StoreError, match=r"'orography', face 1, face pixel \(y=5, x=6\)"):
        compute_stats(ds, ["u"], ["orography"])
    compute_stats(ds, ["u"], time_range=(0, 10))  # a range without it is fine


def test_the_local_solar_time_is_the_hour_angle_of_the_zenith_formula():
    from screamcast.data.forcing import (
        cos_zenith_from_terms,
        hour_angle_from_terms,
        position_trig,
        solar_terms,
    )

    times = np.array(["2020-03-20T12:00", "2020-06-21T18:00"], dtype="datetime64[ns]")
    lat, lon = np.array([0.0, 45.0, -30.0]), np.array([0.0, 90.0, -90.0])
    terms = [t[:, None] for t in solar_terms(times)]  # (2, 1) each
    sin_lat, cos_lat, sin_lon, cos_lon = position_trig(lat, lon)
    cos_h, sin_h = hour_angle_from_terms(terms, sin_lon, cos_lon)  # (2, 3) each
    np.testing.assert_allclose(cos_h**2 + sin_h**2, 1.0, atol=1e-12)
    # 12 UTC at lon 0 is local noon; 18 UTC at lon 90 E is local midnight, at 90 W noon
    assert cos_h[0, 0] == pytest.approx(1.0) and cos_h[1, 1] == pytest.approx(-1.0)
    assert cos_h[1, 2] == pytest.approx(1.0)
    # 12 UTC at 90 E: 18 h local, sin h > 0 in the afternoon
    assert sin_h[0, 1] == pytest.approx(1.0)
    # the unclipped zenith cosine is sin(lat) sin(decl) + cos(lat) cos(decl) cos(h)
    sin_d, cos_d = terms[0], terms[1]
    cz = cos_zenith_from_terms(terms, sin_lat, cos_lat, sin_lon, cos_lon)
    np.testing.assert_allclose(cz, sin_lat * sin_d + cos_lat * cos_d * cos_h, atol=1e-12)
