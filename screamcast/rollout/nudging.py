# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Relaxation toward a reference: ``x += alpha * P(x_ref(t) - x)``, ``alpha = 1 - exp(-dt/tau)``.

``P`` keeps the scales the reference resolves: the block mean over each reference cell, the
increment taken back to the model's cells within each face by Catmull-Rom cubics between block
centres (``increment="bicubic"``, the default), bilinearly (``"bilinear"``) or as one value per
block (``"block"``: it prints the reference's cells on the nudged fields, a lattice that grows
with every step; docs/rollout.md), the identity when the reference is on the model grid. A
regular lat-lon reference is put on the cube by nearest neighbour
(:mod:`screamcast.grid.regrid`) and ``P`` is the area-weighted mean over the cube cells that
share a nearest reference point; cells outside a regional reference's domain are not nudged
(or, with ``partial="refuse"``, such a reference is refused). Between its samples the
reference is interpolated in time by Catmull-Rom cubics (``time_interpolation="cubic"``, the
default) or linearly (:mod:`screamcast.rollout.reference_time`); a rollout past its last time,
a non-finite reference value and units other than the model's are refused.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import torch
import xarray as xr

from screamcast.data.calendar import seconds
from screamcast.data.remote import with_retries
from screamcast.data.store import describe_non_finite, is_latlon
from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.regrid import NearestMap, latlon_points, nearest_map, regular_spacing_deg
from screamcast.rollout.reference_time import TIME_INTERPOLATIONS, time_weights

# a coarser cube reference's increment on the model's cells (Nudger._to_cells)
INCREMENTS = ("bicubic", "bilinear", "block")


class NudgingError(ValueError):
    pass


class Nudger:
    def __init__(
        self,
        reference: xr.Dataset,
        variables: list[str],
        state_vars: list[str],
        tau_hours: float,
        dt,  # the model's step: datetime.timedelta (cftime) or np.timedelta64
        grid: PhysicsGrid,
        name: str = "reference",
        partial: str = "nudge",
        increment: str = "bicubic",
        time_interpolation: str = "cubic",
    ):
        if not tau_hours > 0:
            raise NudgingError(f"nudge_tau_hours must be positive, got {tau_hours}")
        if increment not in INCREMENTS:
            raise NudgingError(
                f"nudge_increment must be one of {', '.join(INCREMENTS)}, got {increment!r}"
            )
        if time_interpolation not in TIME_INTERPOLATIONS:
            raise NudgingError(
                f"nudge_time must be one of {', '.join(TIME_INTERPOLATIONS)}, got "
                f"{time_interpolation!r}"
            )
        self.increment, self.time_interpolation = increment, time_interpolation
        for v in variables:
            if v not in state_vars:
                raise NudgingError(
                    f"nudge_vars: '{v}' is not a prognostic variable of the checkpoint "
                    f"({', '.join(state_vars)})"
                )
            if v not in reference:
                raise NudgingError(f"{name} has no variable '{v}' to nudge toward")
        self.map: NearestMap | None = None
        self.factor = 1
        self._grid = grid  # its cell areas weight the group and block means
        self._weights: dict[tuple, torch.Tensor] = {}
        if is_latlon(reference):
            self.map = self._latlon_map(reference, name, partial)
            self._groups: dict[tuple, tuple[torch.Tensor, ...]] = {}
        else:
            self.factor = _block_factor(grid, reference, name)
        self.reference, self.name = reference, name
        self.index = [state_vars.index(v) for v in variables]
        self.variables, self.tau_hours = list(variables), tau_hours
        self.alpha = 1.0 - math.exp(-seconds(dt) / (tau_hours * 3600.0))
        self.times = reference["time"].values
        self._seconds = np.array([seconds(t - self.times[0]) for t in self.times])  # (T,)
        self.reference_calendar = str(
            reference.attrs.get("reference_calendar", getattr(self.times[0], "calendar", ""))
            or "proleptic_gregorian"
        )
        self._cache: dict[int, np.ndarray] = {}
        self._pending: dict[int, Future] = {}  # the next time index, being read
        self._reader: ThreadPoolExecutor | None = None
        self._target: tuple[object, np.ndarray] | None = None  # the last time asked for
        self._block_area: torch.Tensor | None = None  # (6, m, m), for misfit

    def _latlon_map(self, reference: xr.Dataset, name: str, partial: str) -> NearestMap:
        """Nearest reference point of every cube cell, and which cells its domain covers."""
        lat1, lon1 = reference["lat"].values, reference["lon"].values
        limit = regular_spacing_deg(lat1, lon1)
        nearest = nearest_map(self._grid, *latlon_points(lat1, lon1), limit)
        if partial not in ("nudge", "refuse"):
            raise NudgingError(f"partial must be 'nudge' or 'refuse', got {partial!r}")
        covered = nearest.covered_fraction
        if partial == "refuse" and covered < 1.0 - 1e-9:
            raise NudgingError(
                f"{name} covers {100 * covered:.1f}% of the globe (lat {lat1.min():g} to "
                f"{lat1.max():g}, lon {lon1.min():g} to {lon1.max():g}); "
                "a global reference is required"
            )
        return nearest

    @property
    def projection(self) -> str:
        if self.map is not None:
            shape = "x".join(str(self.reference.sizes[d]) for d in ("lat", "lon"))
            return (
                f"nearest neighbour from the {shape} lat-lon grid, mean over the "
                f"{self.map.n_groups} groups of cells sharing a reference point"
            )
        if self.factor == 1:
            return "identity"
        block = f"block mean over {self.factor}x{self.factor}"
        if self.increment == "block":
            return block
        return f"{block}, increment {self.increment} in each face"

    def check_covers(self, first: object, last: object) -> None:
        if first < self.times[0] or last > self.times[-1]:
            raise NudgingError(
                f"{self.name} covers {self.times[0]} to {self.times[-1]}, but the rollout needs "
                f"{first} to {last}"
            )

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
        dims = "(face, y, x)" if self.map is None else "(lat, lon)"
        message = describe_non_finite(data, self.variables, where, dims)
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

    def apply(self, x: torch.Tensor, time: object) -> torch.Tensor:
        """Nudge the prognostic state ``x (C, 6, n, n)`` in place toward the reference."""
        ref = torch.as_tensor(self.target(time), dtype=x.dtype, device=x.device)
        if self.map is not None:
            return self._apply_nearest(x, ref.reshape(len(self.index), -1))
        f = self.factor
        for k, c in enumerate(self.index):
            field = x[c]  # (6, n, n)
            if f == 1:
                x[c] += self.alpha * (ref[k] - field)
            else:
                m = field.shape[-1] // f
                w = self._block_weights(x)  # (6, n, n), summing to 1 over each block
                coarse = (field * w).reshape(6, m, f, m, f).sum(dim=(2, 4))  # (6, m, m)
                x[c] += self.alpha * self._to_cells(ref[k] - coarse, f)  # (6, n, n)
        return x

    def _to_cells(self, delta: torch.Tensor, f: int) -> torch.Tensor:
        """A block increment ``(6, m, m)`` on the model's cells ``(6, n, n)``: bicubic
        (Catmull-Rom, :func:`cubic_weights`: no kink at the block centres, quadratics exact
        inside a face) or bilinear between block centres (edges held at a face's border), or
        one value per block. Bicubic took the demo's nudged u, v 3-6% closer to the truth at
        +48 h than bilinear, on three models (docs/rollout.md)."""
        if self.increment == "block":
            return delta.repeat_interleave(f, 1).repeat_interleave(f, 2)
        if self.increment == "bicubic":
            key = ("cubic", delta.device, delta.dtype)
            if key not in self._weights:  # (n, m), built once
                w = cubic_weights(delta.shape[-1], f)
                self._weights[key] = torch.as_tensor(w, dtype=delta.dtype, device=delta.device)
            w = self._weights[key]
            return w @ delta @ w.T  # (6, m, m) -> (6, n, m) -> (6, n, n): along y, then x
        fine = torch.nn.functional.interpolate(
            delta[:, None], scale_factor=f, mode="bilinear", align_corners=False
        )  # (6, 1, n, n): block centres at (i + 1/2) f - 1/2, as the blocks' own
        return fine[:, 0]

    def _block_weights(self, like: torch.Tensor) -> torch.Tensor:
        """Each model cell's share of its ``f x f`` block's area, ``(6, n, n)``."""
        key = (like.device, like.dtype)
        if key not in self._weights:
            f, n = self.factor, self._grid.n
            area = self._grid.area  # (6, n, n)
            block = area.reshape(6, n // f, f, n // f, f).sum(axis=(2, 4))  # (6, m, m)
            share = area / block.repeat(f, 1).repeat(f, 2)
            self._weights[key] = torch.as_tensor(share, dtype=like.dtype, device=like.device)
        return self._weights[key]

    def _group_tensors(self, like: torch.Tensor) -> tuple[torch.Tensor, ...]:
        key = (like.device, like.dtype)
        if key not in self._groups:
            m = self.map
            as_long = dict(dtype=torch.long, device=like.device)
            as_like = dict(dtype=like.dtype, device=like.device)
            covered = m.covered.ravel()
            self._groups[key] = (
                torch.as_tensor(m.source.ravel(), **as_long),  # (6 n n,) reference point
                torch.as_tensor(m.group.ravel(), **as_long),  # (6 n n,) group
                torch.as_tensor(self._grid.area.ravel() * covered, **as_like),  # (6 n n,)
                # (groups,) area of the covered cells; 1 for a group with none (never used)
                torch.as_tensor(np.where(m.group_area > 0, m.group_area, 1.0), **as_like),
                torch.as_tensor(covered, dtype=torch.bool, device=like.device),  # (6 n n,)
            )
        return self._groups[key]

    def _apply_nearest(self, x: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """``x += alpha * (ref[source] - mean_group(x))``; ``ref (V, n_points)``."""
        source, group, area, group_area, covered = self._group_tensors(x)
        for k, c in enumerate(self.index):
            field = x[c].reshape(-1)  # (6 n n,)
            sums = torch.zeros_like(group_area).index_add_(0, group, field * area)
            mean = (sums / group_area)[group]  # (6 n n,)
            delta = torch.where(covered, self.alpha * (ref[k][source] - mean), 0.0)
            x[c] += delta.view(x[c].shape)  # (6, n, n)
        return x

    def misfit(self, fields: np.ndarray, time: object) -> np.ndarray:
        """``(V,)``: the area-weighted RMSE of the state ``fields (C.., 6, n, n)`` (prognostic
        variables first), seen at the reference's scales (the projection the nudging uses),
        against the reference at ``time``, per nudged variable; NaN outside its times."""
        if not self.times[0] <= time <= self.times[-1]:
            return np.full(len(self.index), np.nan)
        # the nudged channels only, in float64: (V, 6, n, n)
        x = torch.as_tensor(np.asarray(fields)[self.index], dtype=torch.float64)
        ref = torch.as_tensor(self.target(time), dtype=torch.float64)
        out = []
        if self.map is not None:
            source, group, area, group_area, _ = self._group_tensors(x)
            ref = ref.reshape(len(self.index), -1)  # (V, points)
            for k in range(len(self.index)):
                field = x[k].reshape(-1)  # (6 n n,)
                mean = torch.zeros_like(group_area).index_add_(0, group, field * area)
                d = ref[k][source] - (mean / group_area)[group]  # (6 n n,)
                out.append(torch.sqrt((area * d * d).sum() / area.sum()))
            return torch.stack(out).numpy()
        f, n = self.factor, self._grid.n
        m = n // f
        w = self._block_weights(x)  # (6, n, n)
        if self._block_area is None:  # built once: the grid's areas summed over each block
            area = torch.as_tensor(self._grid.area)
            self._block_area = area.reshape(6, m, f, m, f).sum(dim=(2, 4))  # (6, m, m)
        block_area = self._block_area
        for k in range(len(self.index)):
            coarse = (x[k] * w).reshape(6, m, f, m, f).sum(dim=(2, 4))  # (6, m, m)
            d2 = (ref[k] - coarse) ** 2
            out.append(torch.sqrt((block_area * d2).sum() / block_area.sum()))
        return torch.stack(out).numpy()

    def attrs(self) -> dict:
        coverage = 1.0 if self.map is None else round(self.map.covered_fraction, 6)
        return {
            "nudge_vars": ",".join(self.variables),
            "nudge_tau_hours": self.tau_hours,
            "nudge_alpha": self.alpha,
            "nudge_projection": self.projection,
            "nudge_time": self.time_interpolation,
            "nudge_coverage": coverage,
            "nudge_reference_calendar": self.reference_calendar,
        } | ({} if self.map is not None else {"nudge_block_cells": self.factor})


def _block_factor(grid: PhysicsGrid, reference: xr.Dataset, name: str) -> int:
    """How many model cells a reference cell spans along each axis: the reference's grid must
    be the model's coarsened by whole elements (``ne`` a divisor, the same ``pg``), so that its
    elements are unions of the model's."""
    ref = PhysicsGrid.from_name(reference.attrs["grid"])
    if ref.pg != grid.pg or grid.ne % ref.ne:
        raise NudgingError(
            f"{name} is on {ref.name}, which is not {grid.name} coarsened by whole elements "
            f"(its ne must divide {grid.ne} and its pg be {grid.pg})"
        )
    return grid.ne // ref.ne


def cubic_weights(m: int, f: int) -> np.ndarray:
    """``(m f, m)``: Catmull-Rom (Keys' cubic convolution, ``a = -1/2``) from ``m`` block
    centres to the ``m f`` cells, block ``i``'s centre at cell ``(i + 1/2) f - 1/2``; the
    values past a face's border are the line through its last two centres. So a linear
    increment comes back exactly everywhere and a quadratic one away from the border (torch's
    bicubic, ``a = -3/4``, returns constants only: a linear increment came back with a period-f
    ripple of 0.04 of its step per block)."""
    if m == 1:  # one block per face: the increment is that block's
        return np.ones((f, 1))
    t = (np.arange(m * f) + 0.5) / f - 0.5  # (m f,): each cell's position in block units
    i0 = np.floor(t).astype(int)
    s = t - i0
    taps = [  # Keys (1981), a = -1/2: weights of i0 - 1, i0, i0 + 1, i0 + 2
        0.5 * (-(s**3) + 2 * s**2 - s),
        0.5 * (3 * s**3 - 5 * s**2 + 2),
        0.5 * (-3 * s**3 + 4 * s**2 + s),
        0.5 * (s**3 - s**2),
    ]
    w = np.zeros((m * f, m))
    rows = np.arange(m * f)
    for k, tap in enumerate(taps):
        j = i0 - 1 + k  # (m f,) the centre this tap reads, maybe past the border
        low, high = j < 0, j > m - 1
        inside = ~(low | high)
        np.add.at(w, (rows[inside], j[inside]), tap[inside])
        # past the border: v_j = v_0 + j (v_1 - v_0), and mirrored at the far end
        np.add.at(w, (rows[low], 0), (1 - j[low]) * tap[low])
        np.add.at(w, (rows[low], 1), j[low] * tap[low])
        over = j[high] - (m - 1)
        np.add.at(w, (rows[high], m - 1), (1 + over) * tap[high])
        np.add.at(w, (rows[high], m - 2), -over * tap[high])
    return w
