# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Area-weighted skill scores on the cubed sphere (numpy, ``(..., 6, n, n)`` fields)."""

from __future__ import annotations

import numpy as np


def area_weighted_rmse(pred: np.ndarray, truth: np.ndarray, area: np.ndarray) -> np.ndarray:
    """RMSE over the last three axes weighted by ``area (6, n, n)``: shape ``pred.shape[:-3]``."""
    w = area / area.sum()
    return np.sqrt((((pred - truth) ** 2) * w).sum(axis=(-3, -2, -1)))


def area_weighted_bias(pred: np.ndarray, truth: np.ndarray, area: np.ndarray) -> np.ndarray:
    w = area / area.sum()
    return ((pred - truth) * w).sum(axis=(-3, -2, -1))
