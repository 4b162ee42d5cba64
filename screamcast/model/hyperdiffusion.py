# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Grid-scale dissipation of the predicted state: ``y - nu * lap(lap(y))`` on each tile.

A dycore damps what its grid cannot resolve (E3SM's hyperviscosity, a spectral model's
del^4); an emulator rolled out for months needs the same: the Held-Suarez emulator's free
runs grew a two-cell checkerboard in the lowest layer's wind at a cube corner from day ~17
until the guard stopped them (docs/notes/2026-12-03-dissipation.md). The operator is the
5-point Laplacian applied twice, in grid units, on each tile with its halo (edges
replicated: those pixels are halo, cropped or down-weighted by the reassembly), so the
interior sees true neighbours across tile and cube edges whenever ``halo >= 2``. A Fourier
mode ``(kx, ky)`` loses ``nu * (4 sin^2(kx/2) + 4 sin^2(ky/2))^2`` per step: ``64 nu`` for the
checkerboard, ``16 nu`` for a two-cell stripe and ``0.0015 nu`` for a 20-cell wave.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from screamcast.config.choices import MAX_HYPERDIFFUSION as MAX_NU


def check_nu(nu: float, where: str = "model.hyperdiffusion") -> float:
    """``nu`` as a float in ``[0, 1/64]``, or a ValueError naming ``where``."""
    if isinstance(nu, bool) or not isinstance(nu, (int, float)) or not 0.0 <= nu <= MAX_NU:
        raise ValueError(
            f"{where}: a number in [0, 1/64] (0: none; the two-cell checkerboard loses 64 x it "
            f"per step), got {nu!r}"
        )
    return float(nu)


def laplacian(x: torch.Tensor) -> torch.Tensor:
    """5-point Laplacian in grid units of ``x (B, V, S, S)``, edges replicated: ``(B, V, S, S)``."""
    p = F.pad(x, (1, 1, 1, 1), mode="replicate")  # (B, V, S + 2, S + 2)
    return p[..., :-2, 1:-1] + p[..., 2:, 1:-1] + p[..., 1:-1, :-2] + p[..., 1:-1, 2:] - 4 * x


def hyperdiffuse(x: torch.Tensor, nu: float) -> torch.Tensor:
    """``x (B, V, S, S) - nu * lap(lap(x))``; ``x`` itself when ``nu`` is 0."""
    if not nu:
        return x
    return x - nu * laplacian(laplacian(x))
