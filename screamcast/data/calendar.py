# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Model time in the store's own calendar, from the store to the rollout output.

E3SM runs on ``noleap``; xarray decodes such times to ``cftime`` objects, and converting them
to numpy's Gregorian ``datetime64`` makes Feb 28 -> Mar 1 of a leap year 48 h long. So every
store is decoded to cftime (:data:`DECODER`, whatever its calendar), steps are differences in
that calendar, insolation takes the day of the year in it, and outputs are encoded in it.

Nudging toward a reference in another calendar follows one rule (:func:`to_calendar`): a
Gregorian reference (``standard`` or ``proleptic_gregorian``, e.g. ERA5) nudges a ``noleap`` or
Gregorian model; each reference time keeps its date and time of day (year, month, day, hour,
minute, second) in the model's calendar, and Feb 29 of the reference, which a ``noleap``
calendar lacks, is dropped (never a shift of a day). Every other pair (a ``noleap`` reference
for a Gregorian model, whose Feb 29 it cannot cover; ``360_day`` with anything else) is
refused: convert such a reference first.
"""

from __future__ import annotations

import datetime as dt
import re

import cftime
import numpy as np
import xarray as xr

DECODER = xr.coders.CFDatetimeCoder(use_cftime=True)  # cftime for every calendar
_ALIASES = {
    "noleap": "noleap",
    "365_day": "noleap",
    "all_leap": "all_leap",
    "366_day": "all_leap",
    "360_day": "360_day",
    "standard": "standard",
    "gregorian": "standard",
    "proleptic_gregorian": "proleptic_gregorian",
    "julian": "julian",
}
_GREGORIAN = {"standard", "proleptic_gregorian"}  # the same dates after 1582
_UNITS = (("days", 86_400_000_000), ("hours", 3_600_000_000), ("minutes", 60_000_000))
_UNITS += (("seconds", 1_000_000), ("milliseconds", 1000), ("microseconds", 1))
_ISO = re.compile(r"^(-?\d{1,4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{2})(?::(\d{2}))?)?)?$")


class CalendarError(ValueError):
    """A calendar, date or pair of calendars screamcast cannot use, named in the message."""


def canonical(calendar: str, where: str = "time") -> str:
    """The one name of a CF calendar (``365_day`` -> ``noleap``); unknown ones refused."""
    name = _ALIASES.get(str(calendar).strip().lower())
    if name is None:
        raise CalendarError(
            f"{where}: unknown calendar {calendar!r} (known: {', '.join(sorted(_ALIASES))})"
        )
    return name


def calendar_of(times: np.ndarray, where: str = "time") -> str:
    """The calendar of decoded times: cftime objects carry it; datetime64 is Gregorian."""
    first = np.asarray(times).flat[0]
    if isinstance(first, cftime.datetime):
        return canonical(first.calendar, where)
    return "proleptic_gregorian"


def as_model_times(times: np.ndarray, calendar: str | None = None) -> np.ndarray:
    """``times`` as a 1-D object array of cftime datetimes (datetime64 becomes Gregorian)."""
    times = np.asarray(times)
    if times.dtype.kind == "M":
        cal = canonical(calendar or "proleptic_gregorian")
        stamps = times.astype("datetime64[us]").astype(dt.datetime)
        values = [cftime.datetime(*s.timetuple()[:6], s.microsecond, calendar=cal) for s in stamps]
        return np.array(values, dtype=object)
    return times.astype(object)


def seconds(step: dt.timedelta | np.timedelta64) -> float:
    """A time step in seconds (``timedelta`` from cftime, or numpy's)."""
    if isinstance(step, np.timedelta64):
        return float(step / np.timedelta64(1, "s"))
    return step.total_seconds()


def parse(text: str, calendar: str, where: str = "--start") -> cftime.datetime:
    """``YYYY-MM-DD[THH[:MM[:SS]]]`` as a date of ``calendar`` (Feb 29 is no ``noleap`` date)."""
    m = _ISO.match(str(text).strip())
    if not m:
        raise CalendarError(f"{where}: {text!r} is not a date YYYY-MM-DD[THH:MM[:SS]]")
    parts = [int(p) for p in m.groups(default="0")]
    try:
        return cftime.datetime(*parts, calendar=calendar)
    except ValueError as err:
        raise CalendarError(f"{where}: {text} is not a date of the {calendar} calendar") from err


def encode(times: np.ndarray) -> tuple[np.ndarray, str, str]:
    """``(int64 counts, units, calendar)`` of ``times`` from the first of them, exactly: in
    the largest unit that every offset is a whole multiple of (float hours cannot hold a
    20-minute step exactly)."""
    times = as_model_times(times)
    us = np.array([(t - times[0]) // dt.timedelta(microseconds=1) for t in times], np.int64)
    unit, size = next((name, size) for name, size in _UNITS if not (us % size).any())
    origin = times[0].strftime("%Y-%m-%d %H:%M:%S")
    return us // size, f"{unit} since {origin}", calendar_of(times)


def to_calendar(
    times: np.ndarray, calendar: str, where: str = "reference"
) -> tuple[np.ndarray, np.ndarray]:
    """``(converted, kept)``: the times re-dated in ``calendar`` by the module's rule, and the
    boolean mask of the times kept (dates ``calendar`` lacks are dropped). Raises
    :class:`CalendarError` for pairs the rule does not cover."""
    times = as_model_times(times)
    have, want = calendar_of(times, where), canonical(calendar)
    if have == want:
        return times, np.ones(times.size, bool)
    if not (have in _GREGORIAN and want in _GREGORIAN | {"noleap"}):
        raise CalendarError(
            f"{where} is on the {have} calendar and the model on {want}: screamcast matches "
            "only Gregorian references to noleap or Gregorian models (same date and time of "
            "day, Feb 29 unused); convert the reference to the model's calendar first"
        )
    out, kept = [], []
    for t in times:
        try:
            out.append(cftime.datetime(*t.timetuple()[:6], t.microsecond, calendar=want))
            kept.append(True)
        except ValueError:  # Feb 29 of a Gregorian reference, for a noleap model
            kept.append(False)
    return np.array(out, dtype=object), np.array(kept)


def in_model_calendar(reference: xr.Dataset, calendar: str, name: str) -> xr.Dataset:
    """The reference with its times in the model's ``calendar`` (the rule of
    :func:`~screamcast.data.calendar.to_calendar`: same date and time of day; Feb 29 of a
    Gregorian reference dropped for a ``noleap`` model), ``reference_dropped`` in its attrs."""
    if calendar_of(reference["time"].values) == calendar:
        return reference
    times, kept = to_calendar(reference["time"].values, calendar, name)
    out = reference.isel(time=np.flatnonzero(kept)).assign_coords(time=times)
    out.attrs["reference_calendar"] = calendar_of(reference["time"].values)
    out.attrs["reference_dropped"] = int((~kept).sum())  # Feb 29 of a Gregorian reference
    return out


def decode_group_time(group) -> np.ndarray:
    """CF-decode the ``time`` array of a zarr group to cftime, in the store's calendar (no
    xarray open of the whole store)."""
    var = xr.Variable(("time",), group["time"][:], dict(group["time"].attrs))
    return DECODER.decode(var).values
