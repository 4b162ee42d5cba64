# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The CF-1.7 metadata and the time axis of an export (:mod:`screamcast.evaluation.export`).

Names: a small table of the variables E3SM's EAM and EAMxx write (``U``/``u``, ``T``/
``T_mid``, ``PS``/``ps``, ``Q``/``qv``, ...) gives ``standard_name`` and ``long_name``; units
are the source's own (its variables' ``units`` attrs), never guessed. Times: kept in the
source's calendar (E3SM runs ``noleap``), written in days since the first time or period
start, each with its ``time_bnds``: an instant ``[t, t]`` (``cell_methods: time: point``), a
mean the bounds of its day or month (``time: mean``), ``time`` at the period's end as EAM
writes its averages.
"""

from __future__ import annotations

import datetime as dt

import cftime
import numpy as np

from screamcast.config.choices import AVERAGES
from screamcast.data.calendar import as_model_times, calendar_of

CONVENTIONS = "CF-1.7"

_STANDARD = {  # E3SM name: (standard_name or None, long_name)
    "U": ("eastward_wind", "Zonal wind"),
    "V": ("northward_wind", "Meridional wind"),
    "T": ("air_temperature", "Temperature"),
    "PS": ("surface_air_pressure", "Surface pressure"),
    "PSL": ("air_pressure_at_mean_sea_level", "Sea level pressure"),
    "Q": ("specific_humidity", "Specific humidity"),
    "OMEGA": ("lagrangian_tendency_of_air_pressure", "Vertical velocity (pressure)"),
    "Z3": ("geopotential_height", "Geopotential height (above sea level)"),
    "TS": ("surface_temperature", "Surface temperature (radiative)"),
    "TREFHT": ("air_temperature", "Reference height temperature"),
    "PRECT": ("lwe_precipitation_rate", "Total (convective and large-scale) precipitation rate"),
    "u": ("eastward_wind", "Zonal wind"),
    "v": ("northward_wind", "Meridional wind"),
    "T_mid": ("air_temperature", "Temperature at mid-levels"),
    "T_2m": ("air_temperature", "Air temperature at 2 m"),
    "ps": ("surface_air_pressure", "Surface pressure"),
    "qv": ("humidity_mixing_ratio", "Water vapor mass mixing ratio"),
    "omega": ("lagrangian_tendency_of_air_pressure", "Vertical pressure velocity"),
    "z_mid": ("geopotential_height", "Geopotential height at mid-levels"),
    "phis": ("surface_geopotential", "Surface geopotential"),
    "PHIS": ("surface_geopotential", "Surface geopotential"),
    "SST": ("sea_surface_temperature", "Sea surface temperature"),
}
_KEPT = ("units", "long_name", "standard_name", "description")


def variable_attrs(name: str, source: dict, average: str, latlon: bool) -> dict:
    """A variable's CF attrs: the source's units and names, the table's where the source has
    none, and ``cell_methods`` (``time: point`` or ``time: mean``; ``area: mean`` on a
    lat-lon grid, whose values are area means of the cube's cells)."""
    standard, long_name = _STANDARD.get(name, (None, None))
    out = {k: source[k] for k in _KEPT if k in source}
    out.setdefault("long_name", long_name or name)
    if standard and "standard_name" not in out:
        out["standard_name"] = standard
    methods = "time: mean" if average != "none" else "time: point"
    out["cell_methods"] = f"{methods} area: mean" if latlon else methods
    return out


def _period(t: cftime.datetime, average: str) -> tuple[cftime.datetime, cftime.datetime]:
    """The day or month ``t`` falls in: ``(start, end)``, end exclusive."""
    kind = cftime.datetime
    if average == "daily":
        start = kind(t.year, t.month, t.day, calendar=t.calendar)
        return start, start + dt.timedelta(days=1)
    start = kind(t.year, t.month, 1, calendar=t.calendar)
    year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
    return start, kind(year, month, 1, calendar=t.calendar)


def periods(times: np.ndarray, average: str) -> list[tuple[np.ndarray, object, object]]:
    """``[(indices of times, start, end)]``: one per instant for ``none``, one per day or
    month (in the source's calendar) holding its times, in order."""
    times = as_model_times(times)
    if average not in AVERAGES:
        raise ValueError(f"--average: {average!r} is not one of {', '.join(AVERAGES)}")
    if average == "none":
        return [(np.array([i]), t, t) for i, t in enumerate(times)]
    keys = [_period(t, average) for t in times]
    out = []
    for key in dict.fromkeys(keys):  # first-seen order: the times are increasing
        out.append((np.array([i for i, k in enumerate(keys) if k == key]), *key))
    return out


def time_variables(bounds: list[tuple[object, object]], average: str) -> dict:
    """``time`` and ``time_bnds`` (``(time, nbnd)``) of the periods ``[(start, end)]``: an
    instant's time itself, a mean's period end (EAM's convention), with CF encodings."""
    starts = as_model_times(np.array([b[0] for b in bounds]))
    ends = as_model_times(np.array([b[1] for b in bounds]))
    time = ends if average != "none" else starts
    calendar = calendar_of(starts)
    units = f"days since {starts[0].strftime('%Y-%m-%d %H:%M:%S')}"
    encoding = {"units": units, "calendar": calendar, "dtype": "float64"}
    attrs = {"standard_name": "time", "long_name": "time", "bounds": "time_bnds", "axis": "T"}
    return {
        "time": (("time",), time, attrs, encoding),
        "time_bnds": (("time", "nbnd"), np.stack([starts, ends], 1), {}, encoding),
    }


def file_date(t) -> str:
    """EAMxx's file date ``YYYY-MM-DD-SSSSS`` (seconds of the day)."""
    t = as_model_times(np.array([t]))[0]
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}-{t.hour * 3600 + t.minute * 60 + t.second:05d}"
