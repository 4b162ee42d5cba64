# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A nudging reference over time: opened in the model's calendar, read one time at a time
(the next one in the background, so that S3 reads overlap the steps), interpolated between
its samples by Catmull-Rom cubics or linearly (:mod:`.reference_time`)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import xarray as xr

from screamcast.data.calendar import CalendarError, in_model_calendar, seconds
from screamcast.data.remote import with_retries
from screamcast.data.store import describe_non_finite, open_store
from screamcast.data.store_axes import is_latlon
from screamcast.rollout.nudging.errors import NudgingError
from screamcast.rollout.nudging.reference_time import time_weights


def open_reference(
    url: str, variables: list[str], calendar: str, storage_options=None, assume_grid=False
) -> xr.Dataset:
    """A nudging reference (cube or regular lat-lon) with ``variables``, its times in the
    model's ``calendar`` (matched date for date)."""
    ref = open_store(
        url, storage_options, variables, (), None, latlon=True, assume_grid=assume_grid
    )
    try:
        return in_model_calendar(ref, calendar, url)
    except CalendarError as err:
        raise NudgingError(str(err)) from None


class ReferenceSeries:
    """``variables`` of ``reference`` at any time inside its span."""

    def __init__(self, reference: xr.Dataset, variables, name: str, time_interpolation: str):
        self.reference, self.variables, self.name = reference, list(variables), name
        self.time_interpolation = time_interpolation
        self.times = reference["time"].values
        self._seconds = np.array([seconds(t - self.times[0]) for t in self.times])  # (T,)
        self.calendar = str(
            reference.attrs.get("reference_calendar", getattr(self.times[0], "calendar", ""))
            or "proleptic_gregorian"
        )
        self.dims = "(lat, lon)" if is_latlon(reference) else "(face, y, x)"
        self._cache: dict[int, np.ndarray] = {}
        self._pending: dict[int, Future] = {}  # the next time index, being read
        self._reader: ThreadPoolExecutor | None = None
        self._target: tuple[object, np.ndarray] | None = None  # the last time asked for

    def on_block(self, faces: range, rows: range, cols: range) -> ReferenceSeries:
        """This cube reference's series restricted to ``faces`` and their ``rows`` and
        ``cols`` (one rank's block, in the reference's cells), so the rank reads only their
        chunks; its targets are ``(V, F, c, d)`` and its messages name the block."""
        ref = self.reference
        part = ref.isel(
            face=slice(faces.start, faces.stop),
            y=slice(rows.start, rows.stop),
            x=slice(cols.start, cols.stop),
        )
        where = f"faces {faces.start} to {faces.stop - 1}"
        if part.sizes["y"] != ref.sizes["y"] or part.sizes["x"] != ref.sizes["x"]:
            where += f", rows {rows.start} to {rows.stop - 1}, columns {cols.start} to "
            where += f"{cols.stop - 1}"
        name = f"{self.name} ({where}, counted from face {faces.start}, row {rows.start})"
        return ReferenceSeries(part, self.variables, name, self.time_interpolation)

    def on_box(self, lat: slice, lon) -> ReferenceSeries:
        """This lat-lon reference's series restricted to the rows ``lat`` and the columns
        ``lon`` (a slice, or indices of a run across the last longitude): one rank's part, so
        that it reads only those chunks; its targets are ``(V, rows, columns)``."""
        part = self.reference.isel(lat=lat, lon=lon)
        lons = part["lon"].values
        where = (
            f"lat {part['lat'].values[0]:g} to {part['lat'].values[-1]:g}, lon "
            f"{lons[0]:g} to {lons[-1]:g}"
        )
        return ReferenceSeries(
            part, self.variables, f"{self.name} ({where})", self.time_interpolation
        )

    def check_covers(self, first: object, last: object) -> None:
        if first < self.times[0] or last > self.times[-1]:
            raise NudgingError(
                f"{self.name} covers {self.times[0]} to {self.times[-1]}, but the rollout needs "
                f"{first} to {last}"
            )

    def covers(self, time: object) -> bool:
        return bool(self.times[0] <= time <= self.times[-1])

    def _read(self, i: int) -> np.ndarray:
        """The reference's fields at time index ``i``, float64 ``(V, 6, m, m)`` or ``(V, nlat,
        nlon)``; a long rollout reads its reference every few steps: outlast S3 throttling."""

        def read() -> np.ndarray:
            return self.reference[self.variables].isel(time=i).to_array().values

        where = f"{self.name} at {self.times[i]}"
        try:
            data = with_retries(read, where).astype(np.float64)
        except Exception as err:  # a corrupt chunk's codec error names no store or time
            err.add_note(f"reading the nudging reference {where}")
            raise
        message = describe_non_finite(data, self.variables, where, self.dims)
        if message is not None:
            raise NudgingError(message)
        return data

    def _at(self, i: int) -> np.ndarray:
        """Time index ``i``, cached with the three before it (a cubic reads four); reading
        ``i + 1`` starts in the background so that it overlaps the steps until it is needed (a
        read error is raised then)."""
        if i not in self._cache:
            pending = self._pending.pop(i, None)
            data = pending.result() if pending is not None else self._read(i)
            self._cache = {k: v for k, v in self._cache.items() if k >= i - 3} | {i: data}
        ahead = i + 1
        if ahead < len(self.times) and ahead not in self._cache and ahead not in self._pending:
            if self._reader is None:
                self._reader = ThreadPoolExecutor(1, thread_name_prefix="reference-read")
            self._pending = {ahead: self._reader.submit(self._read, ahead)}
        return self._cache[i]

    def close(self) -> None:
        """Stop the background reader (a read in flight is finished, its result dropped)."""
        if self._reader is not None:
            self._reader.shutdown(wait=True, cancel_futures=True)
            self._reader, self._pending = None, {}

    def target(self, time: object) -> np.ndarray:
        """The reference at ``time``, interpolated in time between its samples (``(V, 6, m,
        m)``, ``(V, nlat, nlon)`` for a lat-lon reference)."""
        if self._target is not None and self._target[0] == time:  # apply, then misfit
            return self._target[1]
        t = seconds(time - self.times[0])
        weights = time_weights(self._seconds, t, self.time_interpolation)  # [(index, w)]
        value = sum(w * self._at(k) for k, w in weights)
        self._target = (time, value)
        return value
