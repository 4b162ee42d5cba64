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


def masked_rmse(pred: np.ndarray, truth: np.ndarray, area: np.ndarray, mask: np.ndarray):
    """Area-weighted RMSE over the pixels where ``mask (6, n, n)`` is True."""
    w = np.where(mask, area, 0.0)
    return np.sqrt((((pred - truth) ** 2) * w).sum(axis=(-3, -2, -1)) / w.sum())


def tile_seam_mask(n: int, tile: int, width: int = 1) -> np.ndarray:
    """Pixels within ``width`` of a tile boundary *inside* a face (not at a face edge)."""
    i = np.arange(n)
    d = np.minimum(i % tile, tile - 1 - i % tile)  # distance to the nearest tile boundary
    edge = np.minimum(i, n - 1 - i)
    near = (d < width) & (edge >= width)  # (n,)
    seam = near[:, None] | near[None, :]
    interior = (edge[:, None] >= width) & (edge[None, :] >= width)
    return np.broadcast_to(seam & interior, (6, n, n)).copy()


def face_edge_mask(n: int, width: int = 1) -> np.ndarray:
    """The outermost ``width`` pixels of every face."""
    i = np.arange(n)
    edge = np.minimum(i, n - 1 - i) < width
    return np.broadcast_to(edge[:, None] | edge[None, :], (6, n, n)).copy()


def edge_gradient_variance_ratio(pred: np.ndarray, truth: np.ndarray, width: int = 2) -> float:
    """Variance of the pixel-to-pixel differences of ``pred`` over that of ``truth``, for the
    differences inside the outermost ``width`` rows of every face (both directions).

    1 means the face edges are as rough as the truth; below 1, smoothed; above, noisier.
    """
    n = pred.shape[-1]
    band = face_edge_mask(n, width)
    out = []
    for field in (pred, truth):
        dx = np.diff(field, axis=-1)[..., band[..., 1:] & band[..., :-1]]
        dy = np.diff(field, axis=-2)[..., band[..., 1:, :] & band[..., :-1, :]]
        out.append(np.var(np.concatenate([dx.ravel(), dy.ravel()])))
    return float(out[0] / out[1])
