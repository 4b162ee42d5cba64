# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Spectra on fields with a known spectrum: one degree, white noise; the regridding's loss."""

import numpy as np
import pytest

from screamcast.evaluation.spectra import (
    CubeSpectrum,
    default_lmax,
    degree_field,
    dh_latlon,
    latlon_spectrum,
    regrid_transfer,
)
from screamcast.grid import CubedSphereGrid

pysh = pytest.importorskip("pyshtools")  # in the dev extra: CI has it


def test_white_noise_coefficients_come_back_exactly_from_the_latlon_grid():
    """Per-coefficient white noise has power (2l + 1) sigma^2 at degree l; the expansion of its
    Driscoll-Healy grid returns it to rounding (the transform itself loses nothing)."""
    L = 24
    c = np.random.default_rng(0).standard_normal((2, L + 1, L + 1))
    c[1, :, 0] = 0.0
    c[:, np.triu_indices(L + 1, 1)[0], np.triu_indices(L + 1, 1)[1]] = 0.0  # m <= l only
    coeffs = pysh.SHCoeffs.from_array(c, normalization="4pi", csphase=1)
    grid = coeffs.expand(grid="DH2", extend=False).data  # (2L + 2, 4L + 4)
    lat, lon = dh_latlon(L)
    assert grid.shape == (lat.size, lon.size)
    np.testing.assert_allclose(latlon_spectrum(grid), coeffs.spectrum(unit="per_l"), rtol=1e-9)
    # and its expectation: 2l + 1 per degree (a check of the normalisation)
    ratio = coeffs.spectrum(unit="per_l")[1:] / (2 * np.arange(1, L + 1) + 1)
    assert 0.5 < np.median(ratio) < 1.5


@pytest.mark.parametrize("l", [3, 7])
def test_one_degree_on_the_cube_stays_at_its_degree(l):
    grid = CubedSphereGrid(16)
    spectrum = CubeSpectrum(grid)
    field, true = degree_field(grid, l, spectrum.lmax, seed=l)
    got = spectrum(field)
    assert got.argmax() == l and got[l] / got.sum() > 0.98  # < 2% leaks to other degrees
    # what the regridding keeps at this degree (n=16: 0.94 at l=5, 0.89 at l=7)
    assert 0.85 < got[l] / true[l] < 1.02


def test_the_regridding_loss_is_measured():
    """The transfer falls with the degree (documented in docs/rollout.md for n=48)."""
    grid = CubedSphereGrid(16)
    L = default_lmax(16)
    low, mid, high = regrid_transfer(grid, [2, L // 2, L - 1], L)
    assert 0.97 < low <= 1.01 and high < mid < low and high > 0.2


def test_the_latlon_grid_is_where_its_spectrum_assumes():
    """A field evaluated at dh_latlon's own points has exactly its coefficients' spectrum: a
    longitude spacing off by a fraction of a cell (1/79) shifts every sample and fails this."""
    L = 12
    lat, lon = dh_latlon(L)
    np.testing.assert_allclose(np.diff(lon), 360.0 / lon.size, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diff(lat), -180.0 / lat.size, rtol=0, atol=1e-12)
    c = np.zeros((2, L + 1, L + 1))
    c[0, 7, 5], c[1, 9, 8], c[0, 3, 0] = 1.0, 0.5, 0.25  # cos, sin and zonal terms
    coeffs = pysh.SHCoeffs.from_array(c, normalization="4pi", csphase=1)
    LAT, LON = np.meshgrid(lat, lon, indexing="ij")
    values = coeffs.expand(lat=LAT.ravel(), lon=LON.ravel()).reshape(LAT.shape)
    np.testing.assert_allclose(
        latlon_spectrum(values), coeffs.spectrum(unit="per_l"), rtol=1e-8, atol=1e-12
    )
