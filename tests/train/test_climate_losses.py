# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The climate losses' numbers: a 4pi-normalised harmonic of any order m has power 1 at its
degree (the cosine and the sine of m > 0 as m = 0), and the spectral loss is relative to the
truth's power, not the prediction's."""

import numpy as np
import pytest
import torch

from screamcast.grid import PhysicsGrid
from screamcast.train.climate_losses import SpectralPower, spectral_loss


@pytest.fixture(scope="module")
def sphere():
    grid = PhysicsGrid(16, 2)
    return grid, SpectralPower(grid, 6), np.deg2rad(grid.lat), np.deg2rad(grid.lon)


def test_harmonics_of_nonzero_order_have_unit_power_at_their_degree(sphere):
    """sqrt(3) cos(lat) cos(lon) and sin(lon) (Y_11's real and imaginary parts, 4pi-
    normalised), sqrt(15)/2 cos^2(lat) sin(2 lon) (Y_22's): power 1 at l = 1, 2 and nothing
    elsewhere; a field of their sum has power equal to its mean square (Parseval)."""
    grid, power, lat, lon = sphere
    y11c = np.sqrt(3) * np.cos(lat) * np.cos(lon)
    y11s = np.sqrt(3) * np.cos(lat) * np.sin(lon)
    y22s = np.sqrt(15) / 2 * np.cos(lat) ** 2 * np.sin(2 * lon)
    for y, degree in ((y11c, 1), (y11s, 1), (y22s, 2)):
        p = power(torch.as_tensor(y, dtype=torch.float32)).numpy()  # l = 1 .. 6
        assert p[degree - 1] == pytest.approx(1.0, abs=2e-3), (degree, p)
        assert np.delete(p, degree - 1).max() < 1e-4
    both = y11c + 2 * y22s
    p = power(torch.as_tensor(both, dtype=torch.float32)).numpy()
    assert p[:2] == pytest.approx([1.0, 4.0], abs=1e-2)
    mean_square = float((both**2 * grid.area).sum() / grid.area.sum())
    assert p.sum() == pytest.approx(mean_square, rel=1e-2)


def test_the_spectral_error_is_relative_to_the_truths_power(sphere):
    """A prediction of twice the truth has 4 times its power at every degree: an error of
    |4 - 1| / 1 = 3 (relative to the truth), and half the truth 0.75 (|0.25 - 1| / 1); the
    truth itself 0. Over std 2 the same (scale-free)."""
    grid, power, _, _ = sphere
    g = torch.Generator().manual_seed(0)
    truth = torch.randn(2, 3, *grid.lat.shape, generator=g)  # (B, V, 6, n, n)
    for std in (torch.ones(1, 3, 1, 1), torch.full((1, 3, 1, 1), 2.0)):
        assert float(spectral_loss(power, 2 * truth, truth, std)) == pytest.approx(3.0, rel=1e-4)
        assert float(spectral_loss(power, truth / 2, truth, std)) == pytest.approx(0.75, rel=1e-4)
        assert float(spectral_loss(power, truth, truth, std)) == 0.0
