# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The tile-imprint null models of the imprint and seam studies (imprint_analysis.py,
demo_rollout_probe.py): only these studies use them, so they live here, not in the library."""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.seams import tile_blocks


def tile_stack(field: np.ndarray, tile: int) -> np.ndarray:
    """``(V, 6, n, n) -> (V, tiles, tile, tile)``: every tile of the globe, face-major."""
    blocks = tile_blocks(field, tile)
    return blocks.reshape(field.shape[0], -1, tile, tile)  # (V, 6 m m, t, t)


def lattice_means(local: np.ndarray, period: int) -> np.ndarray:
    """``(..., t, t) -> (..., period, period)``: a tile map's means over the positions modulo
    ``period`` (``t`` a multiple of it), e.g. the nudging reference's ``period x period``
    blocks, which the tiles' origins share."""
    q = local.shape[-1] // period
    return local.reshape(*local.shape[:-2], q, period, q, period).mean(axis=(-4, -2))


def without_lattice(local: np.ndarray, period: int) -> np.ndarray:
    """A tile map ``(..., t, t)`` divided by its :func:`lattice_means`, tiled back: what is left
    when a lattice of that period is taken out."""
    q = local.shape[-1] // period
    return local / np.tile(lattice_means(local, period), (q, q))  # (..., t, t)


def equatorial_orbits(tiles_per_face: int) -> np.ndarray:
    """``(6 m m,)`` group ids for :func:`worst_position_null`: the tile at ``(ty, tx)`` of each
    equatorial face (0-3) in one group, each polar tile alone. A flow that repeats every 90
    degrees of longitude (the demo's Rossby-Haurwitz wave, R = 4) is the same on the four
    equatorial faces, so their errors are not independent samples of the tile map."""
    m2 = tiles_per_face**2
    polar = 4 * m2 + np.arange(2 * m2)  # (2 m m,): unique ids after the equatorial ones
    return np.concatenate([np.tile(np.arange(m2), 4), polar])  # face-major, as tile_stack


def worst_position_null(
    stack: np.ndarray,
    draws: int = 200,
    seed: int = 0,
    lattice: int = 0,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The worst tile-local position's mean over the overall mean (the imprint
    measure) when each tile of ``stack (V, N, t, t)`` is rolled by a random phase: its mean
    and 95th percentile over ``draws``, ``(V,)`` each. What that measure gives for an error
    that does not know the tiling; an observed value above the percentile is an imprint.
    ``lattice > 0``: of the map :func:`without_lattice` (dividing out a fitted lattice lowers
    the maximum of noise too, so the imprint without it needs this null, not the plain one).
    ``groups (N,)``: tiles with one id share their phase (e.g. :func:`equatorial_orbits`),
    for errors that repeat across tiles because the flow does."""
    rng = np.random.default_rng(seed)
    V, N, t, _ = stack.shape
    groups = np.arange(N) if groups is None else np.asarray(groups)  # (N,)
    yy, xx = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")  # (t, t)
    tiles = np.arange(N)[:, None, None]  # (N, 1, 1)
    out = np.empty((draws, V))
    for d in range(draws):
        sy, sx = rng.integers(0, t, (2, groups.max() + 1))[:, groups, None, None]  # (2, N, 1, 1)
        rolled = stack[:, tiles, (yy + sy) % t, (xx + sx) % t]  # (V, N, t, t)
        m = rolled.mean(axis=1)  # (V, t, t)
        if lattice:
            m = without_lattice(m, lattice)
        out[d] = m.max(axis=(1, 2)) / m.mean(axis=(1, 2))
    return out.mean(axis=0), np.quantile(out, 0.95, axis=0)
