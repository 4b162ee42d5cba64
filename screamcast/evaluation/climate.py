# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A long rollout's climate against a truth run's (the Held-Suarez benchmark's and
``screamcast-evaluate --climate``): zonal means of u and T per layer, eddy
kinetic energy and eddy heat flux (deviations from the zonal mean at each time), the jets'
strength and latitude, and the global-mean temperature's drift. Zonal means on the cube are
area-weighted means over latitude bands."""

from __future__ import annotations

import numpy as np
import xarray as xr

from screamcast.data.zonal_climate import BANDS, ZonalStats, compare, jets

__all__ = ["BANDS", "ZonalStats", "compare", "jets", "of_store"]


def of_store(
    ds: xr.Dataset,
    every: int = 1,
    depart_kelvin: float | None = None,
    names: tuple[str, str, str] = ("U", "V", "T"),
) -> ZonalStats:
    """The zonal statistics of a cube store's ``U, V, T`` (layers), every ``every``-th time,
    up to a non-finite value or, with ``depart_kelvin``, to the first time the global-mean
    temperature is that far from its first value (a rollout that has left the climate: its
    statistics would be the runaway's; ``departed`` says when). ``names``: the eastward and
    northward winds and the temperature, each ``(time, layer, 6, n, n)`` or without layers."""
    stats = ZonalStats(ds["lat"].values, ds["area"].values)
    stats.departed = None
    for k in range(0, ds.sizes["time"], every):
        u, v, t = (_layers(ds[name].isel(time=k).values) for name in names)
        if not np.isfinite(u).all():
            break
        stats.add(u, v, t)
        if (
            depart_kelvin is not None
            and abs(stats.global_t[-1] - stats.global_t[0]) > depart_kelvin
        ):
            stats.departed = k
            stats.remove_last()
            break
    return stats


def _layers(x: np.ndarray) -> np.ndarray:
    """``(L, 6, n, n)``: a 2-D field as one layer."""
    return x if x.ndim == 4 else x[None]
