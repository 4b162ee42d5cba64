# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The grid's local metric: how one pixel step maps onto east and north, per pixel.

A convolution sees pixels, but the winds it is given are east/north components: how far
(in pixels) a wind moves a feature, and in which pixel direction, depends on the local cell
extent and on the grid's rotation and shear against east/north. On an equiangular cube both
vary across a face (a cell's extent across the grid lines is ~0.7 of the centre's at a face
edge, the grid lines meet at 60/120 degrees at a corner) and keep changing past the edge,
where a crop's halo continues the face's grid. Given only latitude and longitude a network
must learn that map face by face; these four numbers state it (``data.grid_metric``, issue 19).
"""

from __future__ import annotations

import numpy as np

from screamcast.grid.cubed_sphere import latlon_to_xyz

METRIC_CHANNELS = 4  # d(east)/dx, d(north)/dx, d(east)/dy, d(north)/dy


def grid_jacobian(lat: np.ndarray, lon: np.ndarray, n: int) -> np.ndarray:
    """``(4, ..., Y, X)`` float32 from pixel-centre ``lat``/``lon`` ``(..., Y, X)`` in degrees
    on a logically rectangular grid (an extended face): the east and north displacement of
    one step in x, then in y, in units of an equiangular face's nominal cell width ``pi /
    (2 n)`` radians (so 1, 0, 0, 1 at the centre of a face whose x is east).

    Central differences of the unit vectors (one-sided on the array's border): the chord over
    two pixels is shorter than their arc by ``theta^2 / 6`` (``theta`` one pixel's angle),
    1.6e-3 at n = 16, 1e-4 at n = 64; the radial part of the chord is projected away.
    """
    xyz = latlon_to_xyz(lat, lon)  # (..., Y, X, 3)
    d_dx = np.gradient(xyz, axis=-2)  # (..., Y, X, 3): one pixel step in x
    d_dy = np.gradient(xyz, axis=-3)  # one pixel step in y
    phi, lam = np.radians(lat), np.radians(lon)
    east = np.stack([-np.sin(lam), np.cos(lam), np.zeros_like(lam)], axis=-1)  # (..., Y, X, 3)
    north = np.stack([-np.sin(phi) * np.cos(lam), -np.sin(phi) * np.sin(lam), np.cos(phi)], axis=-1)
    scale = 1.0 / (np.pi / (2 * n))
    terms = [(d * e).sum(-1) * scale for d in (d_dx, d_dy) for e in (east, north)]
    return np.stack(terms).astype(np.float32)  # (4, ..., Y, X)
