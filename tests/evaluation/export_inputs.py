# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Rollout outputs written by the rollout's own writer, holding known functions of position
and time, for the export tests."""

import datetime as dt

import cftime
import numpy as np
import zarr

from screamcast.grid.physics import PhysicsGrid
from screamcast.rollout.output import TITLE
from screamcast.rollout.writer import RolloutWriter

LEVELS = np.array([500.0, 850.0])
HYAM = np.array([0.3, 0.1])


def ps(xyz: np.ndarray, k: int) -> np.ndarray:
    """A smooth field (Pa) that changes with the step ``k``."""
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    return 1e5 + 1e3 * (x + 2 * y * z + 0.5 * (3 * z**2 - 1)) + 10.0 * k


def t_mid(xyz: np.ndarray, k: int, level: int) -> np.ndarray:
    return 250.0 + 20 * xyz[..., 2] ** 2 + 5.0 * level + 0.5 * k


def write_output(path, grid: PhysicsGrid, steps: int = 13, complete: int | None = None):
    """``steps`` 6-hourly noleap times from 0001-01-30 (across the month's end), ``ps`` and
    ``T_mid`` on two levels, hybrid coefficients; only ``complete`` steps committed (all by
    default), as a rollout stopped early leaves its output. Returns the times."""
    times = np.array(
        [cftime.DatetimeNoLeap(1, 1, 30) + dt.timedelta(hours=6 * k) for k in range(steps)]
    )
    writer = RolloutWriter(
        path,
        ["ps", "T_mid[0]", "T_mid[1]"],
        {"ps": {"units": "Pa", "long_name": "surface pressure"}, "T_mid[0]": {"units": "K"}},
        grid,
        {"title": TITLE, "checkpoint": "demo.ckpt"},
        times,
        {"T_mid": ("lev", LEVELS, {"units": "hPa", "long_name": "hybrid level"})},
    )
    writer.create()
    for k in range(steps if complete is None else complete):
        fields = np.stack([ps(grid.xyz, k), t_mid(grid.xyz, k, 0), t_mid(grid.xyz, k, 1)])
        writer.append(times[k], fields)
    writer.close()
    group = zarr.open_group(path, mode="r+")
    hyam = group.create_array("hyam", shape=(2,), dtype="float64", dimension_names=["lev"])
    hyam[:] = HYAM
    p0 = group.create_array("P0", shape=(), dtype="float64", dimension_names=[])
    p0[...] = 1e5
    p0.attrs["units"] = "Pa"
    return times


def ps_cell_mean(lat_bounds: np.ndarray, lon_bounds: np.ndarray, k: int) -> np.ndarray:
    """The exact mean of :func:`ps` over each cell of a lat-lon grid ``(nlat, nlon)``
    (bounds in degrees): integrals in ``(lon, z = sin lat)``, where the area element is
    ``dlon dz``, of ``x = sqrt(1 - z^2) cos lon``, ``y z`` and ``3 z^2 - 1``."""
    z0, z1 = (np.sin(np.radians(lat_bounds[:, i]))[:, None] for i in (0, 1))
    l0, l1 = (np.radians(lon_bounds[:, i])[None, :] for i in (0, 1))

    def root(z):  # integral of sqrt(1 - z^2)
        return 0.5 * (z * np.sqrt(1 - z**2) + np.arcsin(z))

    def z_root(z):  # integral of z sqrt(1 - z^2)
        return -((1 - z**2) ** 1.5) / 3

    dz, dl = z1 - z0, l1 - l0
    x = (root(z1) - root(z0)) * (np.sin(l1) - np.sin(l0))
    yz = (z_root(z1) - z_root(z0)) * (np.cos(l0) - np.cos(l1))
    p2 = (z1**3 - z1 - z0**3 + z0) * dl
    return 1e5 + 1e3 * (x + 2 * yz + 0.5 * p2) / (dz * dl) + 10.0 * k
