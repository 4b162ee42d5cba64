# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Exact CF time encoding: integer counts, never float hours.

Float ``hours since`` cannot hold a 20-minute step exactly: steps 13, 26 and 29 of such a run
decoded 1 ns off, and a store or output then failed its own regular-step check. Counting in
the largest unit that divides every offset keeps every time exact.
"""

from __future__ import annotations

import numpy as np

_UNITS = (
    ("hours", 3_600_000_000_000),
    ("minutes", 60_000_000_000),
    ("seconds", 10**9),
    ("milliseconds", 10**6),
    ("microseconds", 10**3),
    ("nanoseconds", 1),
)


def time_units(times: np.ndarray, origin: np.datetime64 | None = None) -> str:
    """``"<unit> since <origin>"`` for the largest unit that every ``times - origin`` is a
    whole multiple of (``origin`` defaults to the first time)."""
    t0 = np.datetime64(times[0] if origin is None else origin, "ns")
    offsets = (np.asarray(times, "datetime64[ns]") - t0).astype(np.int64)  # ns
    unit = next(name for name, ns in _UNITS if not (offsets % ns).any())
    whole = t0.astype("datetime64[s]")
    return f"{unit} since {str(whole if whole == t0 else t0).replace('T', ' ')}"


def encode_times(times: np.ndarray) -> tuple[np.ndarray, str]:
    """``(int64 counts, units)`` of ``times`` from the first of them, exactly."""
    units = time_units(times)
    ns = dict(_UNITS)[units.split()[0]]
    offsets = (np.asarray(times, "datetime64[ns]") - np.datetime64(times[0], "ns")).astype(np.int64)
    return offsets // ns, units
