# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A store's axes checked: its time (increasing, a constant step in its own calendar) and, for
a regular lat-lon store (a nudging reference, a truth), its 1-D lat / lon in degrees.

Part of :func:`screamcast.data.store.open_store`'s validation; each error names the store,
the variable or coordinate and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from screamcast.data.calendar import CalendarError, calendar_of, seconds
from screamcast.data.remote import StoreError

LATLON_DIMS = ("time", "lat", "lon")


def is_latlon(ds: xr.Dataset) -> bool:
    """A regular lat-lon dataset (a nudging reference, a truth), not a cube store."""
    return "lat" in ds.dims and "lon" in ds.dims


def validate_latlon(ds: xr.Dataset, name: str, variables: Sequence[str]) -> None:
    """A regular lat-lon store: ``(time, lat, lon)`` variables, 1-D axes in degrees."""
    for var in variables:
        if var not in ds:
            have = ", ".join(sorted(ds.data_vars))
            raise StoreError(f"store {name} has no variable '{var}' (it has: {have})")
        if ds[var].dims != LATLON_DIMS:
            raise StoreError(
                f"store {name}: variable '{var}' has dims {ds[var].dims}, expected {LATLON_DIMS}"
            )
    for axis, bound in (("lat", 90.0), ("lon", 360.0)):
        if axis not in ds.coords or ds[axis].dims != (axis,):
            raise StoreError(f"store {name}: needs a 1-D coordinate '{axis}' in degrees")
        values = ds[axis].values.astype(float)
        units = str(ds[axis].attrs.get("units", ""))
        if "rad" in units.lower():
            raise StoreError(f"store {name}: coordinate '{axis}' is in {units}; degrees expected")
        if not np.all(np.isfinite(values)) or np.abs(values).max() > bound:
            raise StoreError(
                f"store {name}: coordinate '{axis}' must be finite degrees within "
                f"[-{bound:g}, {bound:g}], got {values.min():g} to {values.max():g}"
            )
        if values.size > 1 and not (np.all(np.diff(values) > 0) or np.all(np.diff(values) < 0)):
            raise StoreError(f"store {name}: coordinate '{axis}' is not strictly monotonic")
    _refuse_radians(ds, name)
    validate_time(ds, name)


def _refuse_radians(ds: xr.Dataset, name: str) -> None:
    """Axes without a units attr that fit inside [-pi/2, pi/2] x [-pi, 2 pi] are radians far
    more often than a region of a few degrees: refuse them unless their units say degrees."""
    lat, lon = ds["lat"].values.astype(float), ds["lon"].values.astype(float)
    declared = any("degree" in str(ds[a].attrs.get("units", "")).lower() for a in ("lat", "lon"))
    small = np.abs(lat).max() <= np.pi / 2 + 1e-9 and -np.pi - 1e-9 <= lon.min()
    if not declared and small and lon.max() <= 2 * np.pi + 1e-9 and lat.size * lon.size > 4:
        raise StoreError(
            f"store {name}: coordinates 'lat' ({lat.min():.4g} to {lat.max():.4g}) and 'lon' "
            f"({lon.min():.4g} to {lon.max():.4g}) look like radians; degrees expected (if "
            "they are degrees, set their units attr to degrees_north / degrees_east)"
        )


def validate_time(ds: xr.Dataset, name: str) -> None:
    """Increasing times at a constant step, in the store's own calendar (a ``noleap`` store is
    regular across Feb 28 -> Mar 1 of a leap year)."""
    if "time" not in ds.coords or ds.sizes.get("time", 0) == 0:
        raise StoreError(f"store {name} has no 'time' values")
    t = ds["time"].values
    if t.dtype.kind not in "MO":
        raise StoreError(
            f"store {name}: 'time' is not decodable as CF time (units "
            f"{ds['time'].attrs.get('units', 'missing')!r}): expected e.g. 'days since 0001-01-01'"
        )
    try:
        calendar_of(t, f"store {name}")
    except CalendarError as err:
        raise StoreError(str(err)) from None
    if ds.sizes["time"] == 1:
        return
    steps = np.array([seconds(d) for d in np.diff(t)])
    bad = np.flatnonzero(steps <= 0)
    if bad.size:
        i = int(bad[0])
        raise StoreError(
            f"store {name}: time is not increasing at index {i + 1} ({t[i]} then {t[i + 1]})"
        )
    irregular = np.flatnonzero(steps != steps[0])
    if irregular.size:
        i = int(irregular[0])
        raise StoreError(
            f"store {name}: irregular time step: {steps[i] / 60:g} min between index {i} "
            f"({t[i]}) and {i + 1} ({t[i + 1]}), expected a constant {steps[0] / 60:g} min "
            f"({calendar_of(t)} calendar)"
        )
