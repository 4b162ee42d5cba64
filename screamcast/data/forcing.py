# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Forcing computed from time and position alone: top-of-atmosphere insolation, static inputs.

Insolation is ``S0 * max(0, cos Z)`` with the declination and hour angle of
``../shared/reference/analytic-flows.md``: no data file is needed, so a rollout can run past
the end of any store.
"""

from __future__ import annotations

import numpy as np

SOLAR_CONSTANT = 1361.0  # W m-2


def _day_of_year_and_utc_hours(time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(time, dtype="datetime64[ns]")
    year_start = t.astype("datetime64[Y]").astype("datetime64[ns]")
    day_start = t.astype("datetime64[D]").astype("datetime64[ns]")
    doy = (day_start - year_start) / np.timedelta64(1, "D") + 1.0
    hours = (t - day_start) / np.timedelta64(1, "h")
    return doy, hours


def position_trig(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, ...]:
    """``sin(lat), cos(lat), sin(lon), cos(lon)`` (degrees in): computed once per grid."""
    phi, lam = np.radians(lat), np.radians(lon)
    return np.sin(phi), np.cos(phi), np.sin(lam), np.cos(lam)


def cos_zenith(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Cosine of the solar zenith angle; ``time`` ``(T,)`` datetime64, lat/lon in degrees.

    Returns ``(T, *lat.shape)``.
    """
    return cos_zenith_from_trig(time, *position_trig(lat, lon))


def cos_zenith_from_trig(time: np.ndarray, sin_lat, cos_lat, sin_lon, cos_lon) -> np.ndarray:
    """:func:`cos_zenith` from :func:`position_trig` of the points (no trig per pixel)."""
    doy, hours = _day_of_year_and_utc_hours(np.atleast_1d(time))
    decl = np.radians(23.44) * np.sin(2 * np.pi * (doy - 81.0) / 365.0)  # (T,)
    expand = (slice(None),) + (None,) * np.ndim(sin_lat)
    a = 2 * np.pi * hours / 24.0 - np.pi  # (T,): the hour angle is a + lon
    cos_hour_angle = np.cos(a)[expand] * cos_lon - np.sin(a)[expand] * sin_lon  # (T, ...)
    return sin_lat * np.sin(decl)[expand] + cos_lat * np.cos(decl)[expand] * cos_hour_angle


def insolation(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Top-of-atmosphere insolation in W m-2, ``(T, *lat.shape)``."""
    return SOLAR_CONSTANT * np.maximum(0.0, cos_zenith(time, lat, lon))


def position_features(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """``(4, *lat.shape)``: sin/cos of latitude and longitude, static inputs of the network."""
    return np.stack(position_trig(lat, lon)).astype(np.float32)
