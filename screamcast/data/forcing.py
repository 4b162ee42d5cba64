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


def cos_zenith(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Cosine of the solar zenith angle; ``time`` ``(T,)`` datetime64, lat/lon in degrees.

    Returns ``(T, *lat.shape)``.
    """
    doy, hours = _day_of_year_and_utc_hours(np.atleast_1d(time))
    decl = np.radians(23.44) * np.sin(2 * np.pi * (doy - 81.0) / 365.0)  # (T,)
    phi, lam = np.radians(lat)[None], np.radians(lon)[None]
    expand = (slice(None),) + (None,) * np.ndim(lat)
    hour_angle = 2 * np.pi * hours[expand] / 24.0 + lam - np.pi  # (T, ...)
    return np.sin(phi) * np.sin(decl[expand]) + np.cos(phi) * np.cos(decl[expand]) * np.cos(
        hour_angle
    )


def insolation(time: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Top-of-atmosphere insolation in W m-2, ``(T, *lat.shape)``."""
    return SOLAR_CONSTANT * np.maximum(0.0, cos_zenith(time, lat, lon))


def position_features(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """``(4, *lat.shape)``: sin/cos of latitude and longitude, static inputs of the network."""
    phi, lam = np.radians(lat), np.radians(lon)
    return np.stack([np.sin(phi), np.cos(phi), np.sin(lam), np.cos(lam)]).astype(np.float32)
