# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest
import xarray as xr

from screamcast.grid import PhysicsGrid
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.sources import synthetic as syn

A = 6.37122e6  # Earth radius (../shared/reference/analytic-flows.md)


@pytest.mark.parametrize("seed", [0, 3])
def test_tracer_solves_its_advection_equation(seed):
    """dq/dt + u/(a cos lat) dq/dlon + v/a dq/dlat = (orography / 2500 m - q) / tau at 200
    random points (so every quarter of the globe, none of them a grid point), with the
    derivatives by centred differences of the tracer function and the wind from
    ``rossby_haurwitz``: the integral along back-trajectories is checked against the equation
    it claims to solve, not against itself. The advection term is large (the equation without it
    misses by far), and the residual is the 1 h RK4/Simpson discretisation's (2.7% here; 0.2% at
    a quarter hour, measured)."""
    p = syn.FlowParameters(seed=seed)
    rng = np.random.default_rng(0)
    lat, lon = rng.uniform(-70, 70, 200), rng.uniform(0, 360, 200)
    t, dt, d = 2 * 86400.0, 60.0, 1e-4  # s, s, radians

    def q(t, dlat=0.0, dlon=0.0):
        return syn.tracer(p, t, latlon_to_xyz(lat + np.degrees(dlat), lon + np.degrees(dlon)))

    dq_dt = (q(t + dt) - q(t - dt)) / (2 * dt)
    dq_dlon = (q(t, dlon=d) - q(t, dlon=-d)) / (2 * d)
    dq_dlat = (q(t, dlat=d) - q(t, dlat=-d)) / (2 * d)
    u, v, _ = syn.rossby_haurwitz(p, t, np.radians(lat), np.radians(lon))
    advection = u / (A * np.cos(np.radians(lat))) * dq_dlon + v / A * dq_dlat
    source = syn.static_fields(lat, lon)["orography"] / 2500.0
    relaxation = (source - q(t)) / (p.tracer_lifetime_hours * 3600.0)
    residual = np.abs(dq_dt + advection - relaxation).max()
    assert residual < 0.05 * np.abs(relaxation).max(), (residual, np.abs(relaxation).max())
    assert np.abs(dq_dt - relaxation).max() > 10 * residual  # advection matters


def test_store_tracer_is_the_wave_tracer_and_holds_the_source_mean(tiny_store):
    """The store's tracer is the tracer function at its cells (float32), the same whether the
    whole grid is evaluated at once (a quarter of it integrated, the rest turned from it) or one
    face alone; its global mean stays at the source's mean (a non-divergent wind moves it, the
    relaxation holds the mean at the source's), to the quadrature of an n=16 grid."""
    ds = xr.open_zarr(tiny_store, chunks=None)
    grid = PhysicsGrid.for_face_size(16)
    p = syn.FlowParameters(seed=0)
    seconds = (ds.time.values - ds.time.values[0]) / np.timedelta64(1, "s")
    whole = syn.tracer(p, seconds[[0, 8, 16]], grid.xyz)  # (3, 6, 16, 16)
    np.testing.assert_allclose(ds.tracer.values[[0, 8, 16]], whole, atol=1e-6)
    one_face = syn.tracer(p, seconds[8], grid.xyz[2])
    np.testing.assert_allclose(one_face, whole[1, 2], rtol=1e-12, atol=1e-14)
    source = float((ds.orography.values / 2500.0 * grid.area).sum() / grid.area.sum())
    means = (ds.tracer.values * grid.area).sum((1, 2, 3)) / grid.area.sum()  # (time,)
    assert np.abs(means / source - 1).max() < 0.01, (means, source)
    assert ds.tracer.values.std() > 0.1 and ds.tracer.values.min() >= 0


def test_seed_moves_the_wave_crests():
    """``seed`` sets the wave's starting longitude: seed 0 keeps Williamson's phase, others
    shift the whole flow by ``lon0`` within one wavelength."""
    lat, lon = np.radians(np.linspace(-60, 60, 7)), np.radians(np.linspace(0, 300, 7))
    p0, p5 = syn.FlowParameters(seed=0), syn.FlowParameters(seed=5)
    assert p0.lon0 == 0.0 and 0 < p5.lon0 < 2 * np.pi / p5.R
    shifted = syn.rossby_haurwitz(p5, 3600.0, lat, lon + p5.lon0)
    np.testing.assert_allclose(shifted, syn.rossby_haurwitz(p0, 3600.0, lat, lon), atol=1e-9)
    assert len({syn.FlowParameters(seed=s).lon0 for s in range(6)}) == 6


def test_emission_is_the_orography_and_changes_sign_of_its_odd_part_under_a_quarter_turn():
    """The source is ``static_fields``' orography / 2500 m (computed there with trigonometry,
    here without), and at points turned a quarter about the pole it is ``emission(x, -1)``: what
    lets the tracer integrate a quarter of the grid and turn the rest."""
    from screamcast.sources import wave_tracer as wt

    grid = PhysicsGrid.for_face_size(16)
    orography = syn.static_fields(grid.lat, grid.lon)["orography"]
    np.testing.assert_allclose(wt.emission(grid.xyz), orography / 2500.0, atol=1e-12)
    turned = latlon_to_xyz(grid.lat, grid.lon + 90.0)
    np.testing.assert_allclose(wt.emission(turned), wt.emission(grid.xyz, -1.0), atol=1e-12)
    assert np.abs(wt.emission(turned) - wt.emission(grid.xyz)).max() > 0.5  # not symmetric
