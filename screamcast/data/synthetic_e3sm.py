# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The analytic flows written as E3SM writes history: columns, model calendar, 3-D fields.

A store in E3SM's exact layout, for tests and for trying the package as a SCREAM user would:
``ncol`` columns in E3SM's global-id order on ``ne<ne>pg<pg>`` (``lat``, ``lon``, ``area``
per column; EAM's ``ne`` and ``fv_nphys`` global attrs), times in a model calendar
(``noleap`` by default), 2-D fields ``(time, ncol)``, a 3-D field with the level last as
EAMxx writes it (``T_mid (time, ncol, lev)``) and one with the level first as EAM does
(``Q (time, lev, ncol)``). Every value is the exact analytic truth of
:mod:`screamcast.data.synthetic` at the column's centre, so a rollout can be scored exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from screamcast import __version__
from screamcast.data import synthetic as syn
from screamcast.grid.physics import PhysicsGrid

LEVELS = np.array([250.0, 500.0, 850.0])  # hPa, hybrid levels at mid-points (top to bottom)
TWO_D = ("u", "v", "precip")


def level_fields(truth: dict) -> tuple[np.ndarray, np.ndarray]:
    """``T_mid`` and ``Q`` on :data:`LEVELS` from one time's 2-D truth: ``(lev, ncol)`` each.

    Temperature falls 25 K per level upward; the tracer is the humidity-like field, halved
    toward the top."""
    k = np.arange(LEVELS.size)[::-1, None]  # 2 at the top, 0 at the bottom
    t_mid = truth["temperature"][None] - 25.0 * k
    q = truth["tracer"][None] * (1.0 - 0.25 * k)
    return t_mid, q


def write_column_store(
    path: str | Path,
    ne: int = 8,
    pg: int = 2,
    days: float = 3.0,
    step_hours: float = 3.0,
    start: str = "2020-02-27T00:00",
    calendar: str = "noleap",
    seed: int = 0,
) -> Path:
    """Write the store (must not exist); returns its path."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; remove it or choose another path")
    grid = PhysicsGrid(ne, pg)
    order = grid.column_index()  # E3SM's column order
    lat, lon = grid.lat.reshape(-1)[order], grid.lon.reshape(-1)[order]
    p = syn.FlowParameters(seed=seed)
    t0, times = syn.output_times(start, days, step_hours, calendar)
    truths = [syn.evaluate(p, t, t0, lat, lon) for t in times]
    levels = [level_fields(truth) for truth in truths]
    data = {
        name: (("time", "ncol"), np.stack([f[name] for f in truths]).astype(np.float32))
        for name in TWO_D
    }
    data["T_mid"] = (("time", "ncol", "lev"), np.stack([t.T for t, _ in levels]).astype("f4"))
    data["Q"] = (("time", "lev", "ncol"), np.stack([q for _, q in levels]).astype("f4"))
    statics = syn.static_fields(lat, lon)
    data |= {name: (("ncol",), statics[name].astype(np.float32)) for name in syn.STATIC}
    ds = xr.Dataset(
        data,
        coords={
            "time": ("time", times),
            "lev": ("lev", LEVELS, {"units": "hPa", "long_name": "hybrid level at midpoints"}),
            "lat": ("ncol", lat, {"units": "degrees_north"}),
            "lon": ("ncol", lon, {"units": "degrees_east"}),
            "area": ("ncol", grid.area.reshape(-1)[order], {"units": "sr"}),
        },
        attrs={
            "title": "screamcast analytic flows in E3SM's history layout",
            "source": f"screamcast {__version__} screamcast.data.synthetic_e3sm",
            "ne": ne,
            "fv_nphys": pg,
        },
    )
    for name in (*TWO_D, *syn.STATIC):
        ds[name].attrs = syn.variable_attrs(name)
    ds["T_mid"].attrs = {"units": "K", "long_name": "temperature at mid-levels"}
    ds["Q"].attrs = {"units": "1", "long_name": "tracer at mid-levels"}
    ds.to_zarr(path, mode="w-", consolidated=False, encoding={"time": syn.time_encoding(times)})
    return path
