# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Which samples of a nudging reference give it at a model time, and with what weights.

A reference comes every few hours (6 for ERA5-style nudging) and the model steps every hour,
so the nudging needs it between samples. Linear interpolation cuts a diurnal cycle's corners
(a 24 h sine sampled every 6 h is off by up to 29% of its amplitude at the midpoints) and a
moving wave's crests: on the demo even a perfect model nudged toward such a chord was held
0.32 K off in temperature and 0.06 m/s in u (docs/rollout.md). ``"cubic"`` is Catmull-Rom in
time (a cubic Hermite whose slope at each sample is the centred difference of its neighbours:
Keys' a = -1/2 kernel for evenly spaced samples, exact for quadratics in time), with the
quadratic through the three nearest samples in the first and last interval; ``"linear"`` is
the chord. Times are seconds from any origin (the caller's calendar arithmetic).
"""

from __future__ import annotations

import numpy as np

from screamcast.config.choices import TIME_INTERPOLATIONS


def time_weights(
    sample_seconds: np.ndarray, t: float, method: str = "cubic"
) -> list[tuple[int, float]]:
    """``[(sample index, weight), ...]`` summing to 1 that give the reference at ``t`` from its
    samples at ``sample_seconds`` (increasing; ``t`` inside their range)."""
    if method not in TIME_INTERPOLATIONS:
        raise ValueError(f"time interpolation must be one of {TIME_INTERPOLATIONS}, got {method!r}")
    s_ = np.asarray(sample_seconds, dtype=np.float64)
    i = int(np.searchsorted(s_, t, side="right")) - 1
    if s_[i] == t:
        return [(i, 1.0)]
    h = s_[i + 1] - s_[i]
    s = (t - s_[i]) / h  # in (0, 1)
    if method == "linear" or len(s_) < 3:
        return [(i, 1 - s), (i + 1, s)]
    if i == 0 or i + 2 == len(s_):  # no sample on one side: the quadratic through three
        nodes = [0, 1, 2] if i == 0 else [i - 1, i, i + 1]
        return [(j, _lagrange(s_[nodes], k, t)) for k, j in enumerate(nodes)]
    # Hermite on [i, i + 1] with centred-difference slopes (per unit of s)
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    a = h / (s_[i + 1] - s_[i - 1])  # slope at i: a * (p[i + 1] - p[i - 1])
    b = h / (s_[i + 2] - s_[i])  # slope at i + 1: b * (p[i + 2] - p[i])
    return [(i - 1, -h10 * a), (i, h00 - h11 * b), (i + 1, h01 + h10 * a), (i + 2, h11 * b)]


def _lagrange(nodes: np.ndarray, k: int, t: float) -> float:
    """The ``k``-th Lagrange basis polynomial of ``nodes`` at ``t``."""
    others = np.delete(nodes, k)
    return float(np.prod((t - others) / (nodes[k] - others)))
