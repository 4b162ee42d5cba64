# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Losses that keep an unroll's climate, beside the per-step error (issue 57): a plain MSE
rewards smoothing, which drains the eddies step after step in a free run.

- **Spectral amplitude**: the power per total wavenumber ``l`` of each channel, the unroll's
  against the truth's, as a relative L1 over ``l = 1 .. lmax`` (the HS-SFNO's energy-per-
  wavenumber loss, made scale-free per degree so the weak small scales count too). The
  spherical-harmonic coefficients are a quadrature over the cube's cells (their areas as
  weights) against real harmonics at the cell centres: one fixed matrix, differentiable.
- **Time mean**: the unroll's time mean against the truth's, area-weighted L1 (the HS-SFNO's
  ``0.2 x k`` term): a drift every step shares is seen as a whole.

Both act on fields divided by each channel's standard deviation, so channels compare.
"""

from __future__ import annotations

import numpy as np
import torch


def harmonics_matrix(lat_deg: np.ndarray, lon_deg: np.ndarray, area: np.ndarray, lmax: int):
    """``(lmax + 1, 2 lmax + 1, cells)`` float64: ``area x Y_lm`` at the cells (real, 4pi-
    normalised harmonics; zero where ``|m| > l``), so ``matrix @ x`` is ``x``'s coefficients."""
    from scipy.special import sph_harm_y

    colat = np.deg2rad(90.0 - np.asarray(lat_deg, np.float64).ravel())
    lon = np.deg2rad(np.asarray(lon_deg, np.float64).ravel())
    w = np.asarray(area, np.float64).ravel()
    w = w * (4.0 * np.pi / w.sum())  # the cells' areas on the unit sphere
    out = np.zeros((lmax + 1, 2 * lmax + 1, colat.size))
    for l in range(lmax + 1):
        y = sph_harm_y(l, np.arange(0, l + 1)[:, None], colat[None], lon[None])  # (l+1, cells)
        out[l, lmax] = np.sqrt(4.0 * np.pi) * y[0].real  # m = 0
        scale = np.sqrt(8.0 * np.pi)  # real harmonics with the 4pi normalisation
        out[l, lmax + 1 : lmax + l + 1] = scale * y[1:].real
        out[l, lmax - l : lmax] = (scale * y[1:].imag)[::-1]
    return out * w / (4.0 * np.pi)


class SpectralPower(torch.nn.Module):
    """``x (..., 6, n, n) -> (..., lmax)``: power per degree ``l = 1 .. lmax``."""

    def __init__(self, grid, lmax: int):
        super().__init__()
        m = harmonics_matrix(grid.lat, grid.lon, grid.area, lmax)  # (L, M, cells)
        self.register_buffer("matrix", torch.as_tensor(m.reshape(-1, m.shape[-1]).T).float())
        self.lmax = lmax

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.flatten(-3)  # (..., cells)
        coeff = flat @ self.matrix.to(flat.dtype)  # (..., L M)
        coeff = coeff.unflatten(-1, (self.lmax + 1, -1))  # (..., L, M)
        return (coeff**2).sum(-1)[..., 1:]  # (..., lmax): l = 0 (the mean) left out


def spectral_loss(power: SpectralPower, pred: torch.Tensor, target: torch.Tensor, std):
    """Relative L1 of the power per degree: ``pred, target (B, V, 6, n, n)``, ``std (1, V, 1,
    1)``; the truth's power floored at 1e-6 of its mean (and 1e-12) so an empty degree does
    not blow up."""
    p = power(pred / std.unsqueeze(-1))  # (B, V, lmax)
    q = power(target / std.unsqueeze(-1))
    floor = 1e-6 * q.mean(-1, keepdim=True) + 1e-12  # a constant truth has no power at all
    return ((p - q).abs() / (q + floor)).mean()


def time_mean_loss(preds: torch.Tensor, targets: torch.Tensor, area: torch.Tensor, std):
    """Area-weighted L1 between the time means: ``preds, targets (B, k, V, 6, n, n)``,
    ``area (6, n, n)`` of mean 1, ``std (1, V, 1, 1)``."""
    diff = (preds.mean(1) - targets.mean(1)) / std.unsqueeze(-1)  # (B, V, 6, n, n)
    return (diff.abs() * area).mean()
