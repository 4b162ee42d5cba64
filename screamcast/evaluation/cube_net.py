# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Cube-net pictures: the four equatorial faces in a row, the poles above and below face 0.

With HOMME's orientation (docs/data.md) and ``origin="lower"`` every face keeps x to the right
and y up, and neighbouring faces touch along their shared edges.
"""

from __future__ import annotations

import numpy as np


def cube_net(field: np.ndarray) -> np.ndarray:
    """``(6, n, n) -> (3n, 4n)`` with NaN outside the six faces; a lat-lon field scored as one
    face ``(1, nlat, nlon)`` (:mod:`screamcast.scoring_grid`, lat increasing) as it is."""
    if field.shape[0] == 1:
        return np.asarray(field[0], dtype=np.float64)  # (nlat, nlon)
    n = field.shape[-1]
    net = np.full((3 * n, 4 * n), np.nan, dtype=np.float64)
    for f in range(4):
        net[n : 2 * n, f * n : (f + 1) * n] = field[f]
    net[2 * n :, :n] = field[5]
    net[:n, :n] = field[4]
    return net


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (no display on clusters or in CI)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
