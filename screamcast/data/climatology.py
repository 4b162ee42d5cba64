# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A climatology store's time means: what anomaly correlations are taken against."""

from __future__ import annotations

import numpy as np
import xarray as xr

from screamcast.data.store import StoreError


def time_mean_climatology(store, variables: list[str], name: str = "") -> np.ndarray:
    """``(V, 6, n, n)``: each variable's time mean in a climatology store (static variables as
    they are), read one time at a time. A non-finite mean is refused (it would make every
    anomaly correlation NaN, silently); ``name``: the store, for that message."""
    out = []
    for v in variables:
        da = store[v]
        if "time" not in da.dims:
            out.append(np.asarray(da.values, np.float64))
            continue
        total = np.zeros(da.shape[1:])
        for i in range(da.sizes["time"]):
            total += da.isel(time=i).values
        out.append(total / da.sizes["time"])
    for v, mean in zip(variables, out, strict=True):
        bad = int(np.count_nonzero(~np.isfinite(mean)))
        if bad:
            raise StoreError(
                f"climatology {name}: variable {v!r} has {bad} non-finite values in its time "
                "mean (a NaN or inf at some time): give a climatology with finite values"
            )
    return np.stack(out)


def cube_climatology(clim: xr.Dataset, name: str, variables, grid) -> np.ndarray:
    """``(V, 6, n, n)``: the time mean of a climatology store opened on ``grid``."""
    missing = [v for v in variables if v not in clim]
    if missing:
        raise StoreError(f"climatology {name} has no variable {', '.join(missing)}")
    maps = time_mean_climatology(clim, variables, name)
    if maps.shape[1:] != grid.shape:
        raise StoreError(f"climatology {name} has fields {maps.shape[1:]}, expected {grid.shape}")
    return maps
