# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The analytic flows written as E3SM writes history: columns, model calendar, 3-D fields.

A store in E3SM's exact layout, for tests and for trying the package as a SCREAM user would:
``ncol`` columns in E3SM's global-id order on ``ne<ne>pg<pg>`` (``lat``, ``lon``, ``area``
per column; EAM's ``ne`` and ``fv_nphys`` global attrs), times in a model calendar
(``noleap`` by default), 2-D fields ``(time, ncol)``, a 3-D field with the level last as
EAMxx writes it (``T_mid (time, ncol, lev)``) and one with the level first as EAM does
(``Q (time, lev, ncol)``). Every value is the exact analytic truth of
:mod:`screamcast.sources.synthetic` at the column's centre, so a rollout can be scored exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from screamcast import __version__
from screamcast.grid.physics import PhysicsGrid
from screamcast.sources import synthetic as syn

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
            "source": f"screamcast {__version__} screamcast.sources.synthetic_e3sm",
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


def hybrid_coefficients(levels: int) -> dict[str, np.ndarray]:
    """``hyai, hybi (levels + 1)``, ``hyam, hybm (levels)`` and ``P0`` of a simple hybrid
    column: pure pressure above eta 0.2, terrain-following below (``p = hyai P0 + hybi PS``)."""
    eta = np.linspace(0.01, 1.0, levels + 1)
    hybi = np.clip((eta - 0.2) / 0.8, 0.0, 1.0)
    hyai = eta - hybi
    return {
        "hyai": hyai,
        "hybi": hybi,
        "hyam": 0.5 * (hyai[1:] + hyai[:-1]),
        "hybm": 0.5 * (hybi[1:] + hybi[:-1]),
        "P0": np.float64(1e5),
    }


# (units, long_name) of every history variable, as E3SM writes them: EAM's names, then EAMxx's
HISTORY_ATTRS = {
    "T": ("K", "Temperature"),
    "U": ("m/s", "Zonal wind"),
    "V": ("m/s", "Meridional wind"),
    "Q": ("kg/kg", "Specific humidity"),
    "PS": ("Pa", "Surface pressure"),
    "PRECT": ("m/s", "Total (convective and large-scale) precipitation rate (liq + ice)"),
    "T_mid": ("K", "temperature at midpoints"),
    "qv": ("kg/kg", "water vapor mixing ratio (wet)"),
    "horiz_winds": ("m/s", "horizontal wind"),
    "ps": ("Pa", "surface pressure"),
    "hyai": ("1", "hybrid A coefficient at layer interfaces"),
    "hybi": ("1", "hybrid B coefficient at layer interfaces"),
    "hyam": ("1", "hybrid A coefficient at layer midpoints"),
    "hybm": ("1", "hybrid B coefficient at layer midpoints"),
    "P0": ("Pa", "reference pressure"),
    "area": ("radians^2", "physics column areas"),
}
Q_DRY, Q_MOIST = 3e-6, 0.02  # kg/kg: stratospheric floor; a moist tropical surface


def history_fields(truth: dict, lat: np.ndarray, eta_mid: np.ndarray) -> dict[str, np.ndarray]:
    """One time's EAM fields from the 2-D truth: ``PS (ncol)``, ``T, U, V, Q (lev, ncol)``.

    Each in its physical range: ``Q`` is the tracer (0 to 1) as specific humidity, from
    :data:`Q_DRY` aloft to at most :data:`Q_MOIST` + :data:`Q_DRY` at the surface (positive,
    so the tracer's exact zeros do not reach it); ``PRECT`` the truth's kg m-2 s-1 as the
    m/s of liquid water E3SM writes (1000 kg m-3)."""
    e = eta_mid[:, None]
    return {
        "PS": 1e5 + 800.0 * truth["tracer"] - 1500.0 * np.sin(np.radians(lat)) ** 2,
        "T": truth["temperature"][None] - 70.0 * (1.0 - e),
        "U": truth["u"][None] * (0.4 + e),
        "V": truth["v"][None] * (0.4 + e),
        "Q": Q_DRY + Q_MOIST * np.clip(truth["tracer"][None], 0.0, 1.0) * e**2,
        "PRECT": truth["precip"] / 1000.0,
    }


def write_history(
    folder: str | Path,
    layout: str = "eam",
    files: int = 3,
    times_per_file: int = 4,
    ne: int = 4,
    levels: int = 8,
    start: str = "2020-02-27T00:00",
    step_hours: float = 6.0,
    calendar: str = "noleap",
    netcdf_format: str = "NETCDF4",
    seed: int = 0,
) -> list[Path]:
    """Several history files as EAM (``(time, lev, ncol)``, ``PS``, ``ne``/``fv_nphys`` attrs)
    or EAMxx (``(time, ncol, lev)``, ``horiz_winds (time, ncol, dim2, lev)``, ``ps``) write
    them: netCDF (``NETCDF3_64BIT_DATA`` is EAM's CDF5), columns in E3SM's order, times in
    ``calendar``. Returns the paths, in time order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    grid = PhysicsGrid(ne, 2)
    order = grid.column_index()
    lat, lon = grid.lat.reshape(-1)[order], grid.lon.reshape(-1)[order]
    hybrid = hybrid_coefficients(levels)
    eta_mid = hybrid["hyam"] + hybrid["hybm"]
    p = syn.FlowParameters(seed=seed)
    t0, times = syn.output_times(
        start, (files * times_per_file - 1) * step_hours / 24, step_hours, calendar
    )
    paths = []
    for f in range(files):
        tb = times[f * times_per_file : (f + 1) * times_per_file]
        per_time = [history_fields(syn.evaluate(p, t, t0, lat, lon), lat, eta_mid) for t in tb]
        ds = _history_dataset(per_time, tb, layout, lat, lon, grid, hybrid, ne)
        path = folder / f"run.{layout}.h0.{tb[0].strftime('%Y-%m-%d-%H')}.nc"
        units = f"days since {t0.strftime('%Y-%m-%d %H:%M:%S')}"
        enc = {"time": {"units": units, "calendar": calendar, "dtype": "float64"}}
        ds.to_netcdf(path, format=netcdf_format, encoding=enc, engine="netcdf4")
        paths.append(path)
    return paths


def _history_dataset(per_time, times, layout, lat, lon, grid, hybrid, ne) -> xr.Dataset:
    def stack(name):
        return np.stack([f[name] for f in per_time]).astype(np.float32)

    if layout == "eam":
        data = {v: (("time", "lev", "ncol"), stack(v)) for v in ("T", "U", "V", "Q")}
        data |= {"PS": (("time", "ncol"), stack("PS")), "PRECT": (("time", "ncol"), stack("PRECT"))}
        attrs = {"ne": ne, "fv_nphys": 2, "source": "E3SM Atmosphere Model (screamcast synthetic)"}
    elif layout == "eamxx":
        last = ("time", "ncol", "lev")
        data = {
            "T_mid": (last, stack("T").transpose(0, 2, 1)),
            "qv": (last, stack("Q").transpose(0, 2, 1)),
        }
        winds = np.stack([stack("U"), stack("V")], axis=1).transpose(
            0, 3, 1, 2
        )  # (t, ncol, 2, lev)
        data["horiz_winds"] = (("time", "ncol", "dim2", "lev"), winds)
        data["ps"] = (("time", "ncol"), stack("PS"))
        attrs = {"source": "E3SM Atmosphere Model in C++ (screamcast synthetic)"}
    else:
        raise ValueError(f"layout must be 'eam' or 'eamxx', got {layout!r}")
    levels = len(hybrid["hyam"])
    data |= {
        "hyai": (("ilev",), hybrid["hyai"]),
        "hybi": (("ilev",), hybrid["hybi"]),
        "hyam": (("lev",), hybrid["hyam"]),
        "hybm": (("lev",), hybrid["hybm"]),
        "P0": ((), hybrid["P0"]),
        "area": (("ncol",), grid.area.reshape(-1)[grid.column_index()]),
    }
    coords = {
        "time": ("time", times),
        "lat": ("ncol", lat, {"units": "degrees_north"}),
        "lon": ("ncol", lon, {"units": "degrees_east"}),
        "lev": ("lev", 1000.0 * (hybrid["hyam"] + hybrid["hybm"]), {"units": "hPa"}),
    }
    assert len(coords["lev"][1]) == levels
    ds = xr.Dataset(data, coords=coords, attrs=attrs)
    for name in ds.data_vars:  # units and long_name on every variable, as E3SM writes them
        units, long_name = HISTORY_ATTRS[name]
        ds[name].attrs = {"units": units, "long_name": long_name}
    return ds
