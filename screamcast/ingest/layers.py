# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Hybrid model levels -> pressure-weighted layers that conserve the column integral.

Pressure at interface k is ``p_k = hyai_k * P0 + hybi_k * PS``; level l lies between interfaces
l and l + 1 (top to bottom) with thickness ``dp_l = p_{l+1} - p_l``. A layer of levels
``[a, b)`` holds ``sum(X_l dp_l) / sum(dp_l)``, so ``sum over layers of X_layer dp_layer``
equals ``sum over levels of X_l dp_l`` (the column integral times g) to rounding
(``../shared/reference/e3sm-physics-grid.md``; ACE's emulators use 8 such layers).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class LayerError(ValueError):
    """Layers that the levels cannot make, named in the message."""


def equal_thickness(hyai: np.ndarray, hybi: np.ndarray, p0: float, count: int) -> list[int]:
    """Interface indices of ``count`` layers of about equal pressure thickness at ``PS = P0``
    (the reference column), from the top interface 0 to the bottom one ``L``."""
    levels = len(hyai) - 1
    if not 1 <= count <= levels:
        raise LayerError(f"--layers {count}: between 1 and the {levels} model levels")
    p = hyai * p0 + hybi * p0  # (L + 1,) reference interfaces
    cuts = [0]
    for target in np.linspace(p[0], p[-1], count + 1)[1:-1]:
        k = int(np.argmin(np.abs(p - target)))
        k = min(max(k, cuts[-1] + 1), levels - (count - len(cuts)))  # strictly increasing
        cuts.append(k)
    return cuts + [levels]


def check_interfaces(indices: Sequence[int], levels: int) -> list[int]:
    """Interface indices ``0 = i_0 < i_1 < ... < i_m = L`` (ACE's 8-layer set is such a list)."""
    idx = [int(i) for i in indices]
    if len(idx) < 2 or idx[0] != 0 or idx[-1] != levels or np.any(np.diff(idx) <= 0):
        raise LayerError(
            f"--layers {','.join(map(str, idx))}: interface indices must increase strictly from "
            f"0 (the model top) to {levels} (the surface, {levels} levels)"
        )
    return idx


def layer_means(values: np.ndarray, dp: np.ndarray, interfaces: Sequence[int]) -> np.ndarray:
    """``values (..., L, ncol)`` with ``dp (..., L, ncol)`` -> ``(..., layers, ncol)``
    pressure-weighted means, float64 sums."""
    weighted = values.astype(np.float64) * dp
    out = [
        weighted[..., a:b, :].sum(axis=-2) / dp[..., a:b, :].sum(axis=-2)
        for a, b in zip(interfaces[:-1], interfaces[1:], strict=True)
    ]
    return np.stack(out, axis=-2)  # (..., layers, ncol)
