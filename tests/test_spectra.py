# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Spectra on fields with a known spectrum: one degree, white noise; the regridding's loss."""

import numpy as np
import pytest

from screamcast.grid import CubedSphereGrid
from screamcast.spectra import (
    CubeSpectrum,
    default_lmax,
    degree_field,
    dh_latlon,
    latlon_spectrum,
    regrid_transfer,
)

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
