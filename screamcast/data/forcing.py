# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Forcing computed from time and position alone: top-of-atmosphere insolation, static inputs.

Insolation is ``S0 * max(0, cos Z)`` with the declination and hour angle of
``../shared/reference/analytic-flows.md``: no data file is needed, so a rollout can run past
the end of any store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from screamcast.grid.metric import grid_jacobian

if TYPE_CHECKING:
    from screamcast.grid.extended import ExtendedFaceGeometry

SOLAR_CONSTANT = 1361.0  # W m-2


def day_of_year_and_hours(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Day of the year (1-based) in the times' own calendar and UTC hours, shaped like
    ``times``: cftime objects (any calendar; attributes only, no cftime import, so the GPU
    check runs without it) or datetime64 (proleptic Gregorian)."""
    times = np.asarray(times)
    if times.dtype.kind == "M":
        t = times.astype("datetime64[ns]")
        day = t.astype("datetime64[D]").astype("datetime64[ns]")
        doy = (day - t.astype("datetime64[Y]").astype("datetime64[ns]")) / np.timedelta64(1, "D")
        return doy + 1.0, (t - day) / np.timedelta64(1, "h")
    flat = times.ravel()
    doy = np.array([t.dayofyr for t in flat], dtype=np.float64)
    hours = np.array([t.hour + t.minute / 60 + t.second / 3600 for t in flat], dtype=np.float64)
    return doy.reshape(times.shape), hours.reshape(times.shape)


def year_length(times: np.ndarray) -> float:
    """The year of the declination formula: 360 days in a ``360_day`` calendar, else 365."""
    first = np.asarray(times).flat[0]
    return 360.0 if getattr(first, "calendar", "") == "360_day" else 365.0


def position_trig(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, ...]:
    """``sin(lat), cos(lat), sin(lon), cos(lon)`` (degrees in): computed once per grid."""
    phi, lam = np.radians(lat), np.radians(lon)
    return np.sin(phi), np.cos(phi), np.sin(lam), np.cos(lam)


def cos_zenith(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Cosine of the solar zenith angle; ``time`` ``(T,)`` (cftime in the store's calendar, or
    datetime64), lat/lon in degrees.

    Returns ``(T, *lat.shape)``.
    """
    time = np.atleast_1d(time)
    expand = (...,) + (None,) * np.ndim(lat)  # (T,) -> (T, 1, ...): every time, every point
    return cos_zenith_broadcast(time[expand], *position_trig(lat, lon))


def cos_zenith_broadcast(time: np.ndarray, sin_lat, cos_lat, sin_lon, cos_lon) -> np.ndarray:
    """Cosine of the solar zenith angle where ``time`` and the points broadcast against each
    other, e.g. ``(B, T, 1, 1)`` times of ``(B, 1, S, S)`` crops: a batch in one call."""
    return cos_zenith_from_terms(solar_terms(time), sin_lat, cos_lat, sin_lon, cos_lon)


def solar_terms(time: np.ndarray) -> tuple[np.ndarray, ...]:
    """``sin`` and ``cos`` of the declination, ``cos a`` and ``sin a`` (the hour angle is
    ``a + lon``), shaped like ``time``: all of the zenith angle that depends on time alone."""
    doy, hours = day_of_year_and_hours(time)
    decl = np.radians(23.44) * np.sin(2 * np.pi * (doy - 81.0) / year_length(time))
    a = 2 * np.pi * hours / 24.0 - np.pi
    return np.sin(decl), np.cos(decl), np.cos(a), np.sin(a)


def cos_zenith_from_terms(terms, sin_lat, cos_lat, sin_lon, cos_lon):
    """The zenith cosine from :func:`solar_terms` and the points' trigonometry. Arithmetic
    only, so the points may be numpy arrays or torch tensors (the rollout evaluates its tiles
    on their device); the same operations in the same order either way."""
    sin_d, cos_d, cos_a, sin_a = terms
    cos_hour_angle = cos_a * cos_lon - sin_a * sin_lon
    return sin_lat * sin_d + cos_lat * cos_d * cos_hour_angle


def hour_angle_from_terms(terms, sin_lon, cos_lon):
    """``cos`` and ``sin`` of the local hour angle (the local solar time as an angle: 0 at
    noon) from :func:`solar_terms` and the points' longitude: what the insolation cannot say
    at night, when it is zero at both times of a step (``data.solar_time``, docs/training.md).
    Arithmetic only, numpy or torch."""
    _, _, cos_a, sin_a = terms
    return cos_a * cos_lon - sin_a * sin_lon, sin_a * cos_lon + cos_a * sin_lon


# the position inputs (the static channels after the store's static variables), by name:
# the grid's metric when asked, then the trigonometry the insolation is evaluated from
METRIC_NAMES = ("east_per_x", "north_per_x", "east_per_y", "north_per_y")
TRIG_NAMES = ("sin_lat", "cos_lat", "sin_lon", "cos_lon")
# the forcing channels at each time of a step, by name (the insolation / S0, and with
# ``data.solar_time`` the local solar time as the hour angle's cosine and sine)
FORCING_NAMES = ("insolation", "cos_hour_angle", "sin_hour_angle")


def position_names(grid_metric: bool) -> tuple[str, ...]:
    """The position inputs' channels in order (:func:`extended_position_features`)."""
    return (METRIC_NAMES if grid_metric else ()) + TRIG_NAMES


def trig_channels(n_static: int, grid_metric: bool) -> list[int]:
    """Where sin, cos of latitude and longitude lie among a model's static inputs: its
    ``n_static`` static variables, then the position features, found by their names."""
    names = position_names(grid_metric)
    return [n_static + names.index(name) for name in TRIG_NAMES]


def forcing_names(solar_time: bool, insolation: bool = True) -> tuple[str, ...]:
    """The forcing channels a model takes at each time of a step (none without a sun)."""
    if not insolation:
        return ()
    return FORCING_NAMES if solar_time else FORCING_NAMES[:1]


def forcing_fields(names: tuple[str, ...], terms, trig) -> list:
    """The forcing channels ``names`` (:func:`forcing_names`) from :func:`solar_terms` and
    the points' ``trig`` (sin, cos of latitude and longitude, ``TRIG_NAMES``' order): the one
    builder of training's crops (numpy) and the rollout's tiles (torch, on their device),
    arithmetic only, the same operations in the same order either way."""
    fields = {"insolation": _at_least_zero(cos_zenith_from_terms(terms, *trig))}
    if "cos_hour_angle" in names or "sin_hour_angle" in names:
        fields["cos_hour_angle"], fields["sin_hour_angle"] = hour_angle_from_terms(terms, *trig[2:])
    return [fields[name] for name in names]


def _at_least_zero(x):
    """``max(0, x)`` as each library takes it (numpy's ``maximum`` and torch's ``clamp``
    both keep a ``-0.0``: the crops' and the tiles' bits alike)."""
    return np.maximum(0.0, x) if isinstance(x, np.ndarray) else x.clamp(min=0.0)


def insolation(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Top-of-atmosphere insolation in W m-2, ``(T, *lat.shape)``."""
    return SOLAR_CONSTANT * np.maximum(0.0, cos_zenith(time, lat, lon))


def position_features(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """``(4, *lat.shape)``: sin/cos of latitude and longitude, static inputs of the network."""
    return np.stack(position_trig(lat, lon)).astype(np.float32)


def position_channels(grid_metric: bool) -> int:
    """The position inputs' channels: the grid's metric (if asked), then sin/cos lat, lon."""
    return len(position_names(grid_metric))


def extended_position_features(geo: ExtendedFaceGeometry, grid_metric: bool) -> np.ndarray:
    """``(position_channels, 6, P, P)`` float32 on every extended-face pixel of ``geo`` (an
    :class:`~screamcast.grid.extended.ExtendedFaceGeometry`): with ``grid_metric`` the grid's
    Jacobian first (:func:`~screamcast.grid.metric.grid_jacobian`), always sin/cos of lat, lon
    last (where the insolation is evaluated from)."""
    trig = position_features(geo.lat, geo.lon)  # (4, 6, P, P)
    if not grid_metric:
        return trig
    return np.concatenate([grid_jacobian(geo.lat, geo.lon, geo.layout.n), trig])
