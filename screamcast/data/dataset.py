# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training samples: crops with halo of the extended faces, read chunk by chunk from zarr.

A crop is an ``S x S`` window of one *extended face* (the face plus the ring of width ``halo``
that :class:`~screamcast.halo.HaloOperator` builds), so crops near an edge carry the same KNN
halo values the rollout's tiles see. Only the chunks a crop touches are read: the window's
part of its own face, and for ring pixels the bounding box of their KNN sources on each
neighbour face. All reads of a sample (every variable, every time) are issued concurrently
through zarr's async API, which matters on S3.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch
import zarr
from zarr.core.sync import sync

from screamcast.data.forcing import cos_zenith_from_trig, position_trig
from screamcast.data.store import StoreError, zarr_store
from screamcast.grid.cubed_sphere import xyz_to_latlon
from screamcast.grid.tiling import TileLayout


class ExtendedFaceGeometry:
    """Per extended-face pixel: ring row (or -1), lat/lon and exact area. Computed once."""

    def __init__(self, layout: TileLayout):
        self.layout = layout
        n, H, P = layout.n, layout.halo, layout.padded
        self.ring_row = np.full(6 * P * P, -1, dtype=np.int64)
        self.ring_row[layout.ring_positions] = np.arange(layout.ring_positions.size)
        self.ring_row = self.ring_row.reshape(6, P, P)
        lat = np.empty((6, P, P))
        lon = np.empty((6, P, P))
        lat[:, H : H + n, H : H + n], lon[:, H : H + n, H : H + n] = (
            layout.grid.lat,
            layout.grid.lon,
        )
        ring = layout.ring_mask
        lat[ring], lon[ring] = xyz_to_latlon(layout.ring_target_xyz())
        self.lat, self.lon = lat, lon
        # the gnomonic area formula holds past the face edge too: (P, P), the same on every face
        self.area = layout.grid.face_cell_areas(np.arange(P + 1) - H).astype(np.float32)

    @cached_property
    def trig(self) -> np.ndarray:
        """``(4, 6, P, P)`` float32 sin/cos of lat and lon: the network's position features and
        the insolation's inputs without per-crop trigonometry (16 bytes per pixel, built on
        first use: only training crops need it)."""
        return np.stack(position_trig(self.lat, self.lon)).astype(np.float32)


@dataclass(frozen=True)
class CropPlan:
    """What to read for one window: its own face's box, and per neighbour face a box + gather."""

    face: int
    inner: tuple[slice, slice]  # face-coordinate box read from the crop's own face
    inner_at: tuple[slice, slice]  # where it lands in the crop
    ring_at: np.ndarray  # (Q,) flat positions in the (S, S) crop of its ring pixels
    boxes: tuple[tuple[int, slice, slice], ...]  # (face, ys, xs) of KNN sources
    box_index: tuple[np.ndarray, ...]  # per box: (Q, k) flat positions into the box (0 if none)
    box_weights: tuple[np.ndarray, ...]  # per box: (Q, k) the KNN weights, 0 where not its own


def plan_crop(geo: ExtendedFaceGeometry, face: int, oy: int, ox: int, size: int) -> CropPlan:
    L = geo.layout
    n, H = L.n, L.halo
    y0, y1 = max(oy - H, 0), min(oy + size - H, n)
    x0, x1 = max(ox - H, 0), min(ox + size - H, n)
    inner = (slice(y0, y1), slice(x0, x1))
    inner_at = (slice(y0 + H - oy, y1 + H - oy), slice(x0 + H - ox, x1 + H - ox))
    rows = geo.ring_row[face, oy : oy + size, ox : ox + size]  # (S, S)
    mask = rows >= 0
    src = L.ring_sources[rows[mask]]  # (Q, k) flat into (6, n, n)
    sf, sy, sx = src // (n * n), (src // n) % n, src % n
    weights = L.ring_weights[rows[mask]]  # (Q, k)
    boxes, index, box_weights = [], [], []
    for g in np.unique(sf):
        sel = sf == g
        ys = slice(int(sy[sel].min()), int(sy[sel].max()) + 1)
        xs = slice(int(sx[sel].min()), int(sx[sel].max()) + 1)
        width = xs.stop - xs.start
        boxes.append((int(g), ys, xs))
        index.append(np.where(sel, (sy - ys.start) * width + (sx - xs.start), 0))
        box_weights.append(np.where(sel, weights, 0.0))
    ring_at = np.flatnonzero(mask)
    return CropPlan(face, inner, inner_at, ring_at, tuple(boxes), tuple(index), tuple(box_weights))


def assemble(plan: CropPlan, inner: np.ndarray, boxes: list[np.ndarray], size: int) -> np.ndarray:
    """Fill a ``(..., S, S)`` crop from the inner box and the neighbour boxes of ``plan``."""
    lead = inner.shape[:-2]
    out = np.empty((*lead, size, size), dtype=np.float32)
    out[(..., *plan.inner_at)] = inner
    if plan.boxes:
        ring = np.zeros((*lead, plan.ring_at.size), dtype=np.float64)
        for box, idx, w in zip(boxes, plan.box_index, plan.box_weights, strict=True):
            ring += (box.reshape(*lead, -1)[..., idx] * w).sum(-1)  # (..., Q, k) -> (..., Q)
        out.reshape(*lead, size * size)[..., plan.ring_at] = ring
    return out


class CropDataset(torch.utils.data.Dataset):
    """Random crops with halo and ``steps``-step targets from a cubed-sphere store.

    Sample ``i`` of epoch ``e`` is drawn from ``np.random.default_rng((seed, e, i))``: the same
    on every rank and worker, whatever the order. ``fixed=True`` ignores the epoch (validation).
    ``in_memory=True`` loads the variables once per process (for stores that fit in RAM).
    Each item is a dict of float32 tensors: ``state (C, S, S)`` at t, ``target (k, C + D, S,
    S)`` at t+1..t+k, ``forcing (k + 1, 1, S, S)`` insolation / S0 at t..t+k, ``static (F, S,
    S)``, ``area (S, S)``; plus ``time``, ``face``, ``oy``, ``ox`` for bookkeeping.
    """

    def __init__(
        self,
        url: str,
        layout: TileLayout,
        prognostic: list[str],
        diagnostic: list[str] = (),
        static: list[str] = (),
        crop: int = 64,
        steps: int = 1,
        time_range: tuple[int, int] | None = None,
        samples: int = 1000,
        seed: int = 0,
        fixed: bool = False,
        storage_options: dict | None = None,
        times: np.ndarray | None = None,
        in_memory: bool = False,
    ):
        P = layout.padded
        if not 0 < crop <= P:
            raise ValueError(f"crop={crop} must be in 1..{P} (face {layout.n} + 2 * halo)")
        self.url, self.layout, self.crop, self.steps = url, layout, crop, steps
        self.prognostic, self.diagnostic, self.static = (
            list(prognostic),
            list(diagnostic),
            list(static),
        )
        self.samples, self.seed, self.fixed, self.epoch = samples, seed, fixed, 0
        self.storage_options, self.in_memory = storage_options, in_memory
        self.geo = ExtendedFaceGeometry(layout)
        self._pid: int | None = None
        self._arrays: dict[str, Any] = {}
        if times is None:
            times = _decode_time(zarr.open_group(zarr_store(url, storage_options), mode="r"))
        self.times = times
        lo, hi = time_range or (0, len(times))
        self.t_lo, self.t_hi = lo, hi - steps  # start times whose targets lie inside the range
        if self.t_hi <= self.t_lo:
            raise ValueError(f"time range {lo}:{hi} of {url} is too short for {steps}-step samples")

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.samples

    def _open(self) -> dict[str, Any]:
        """Open the arrays once per process (s3fs and zarr's loop do not survive a fork)."""
        if self._pid != os.getpid():
            group = zarr.open_group(zarr_store(self.url, self.storage_options), mode="r")
            names = self.prognostic + self.diagnostic + self.static
            if self.in_memory:  # small stores: one read per group, then numpy slicing
                self._arrays = {}  # {variables: (V, [time,] 6, n, n)}
                for g, _ in self._groups():
                    dtype = np.result_type(*(group[v].dtype for v in g))
                    stacked = np.empty((len(g), *group[g[0]].shape), dtype=dtype)
                    for i, v in enumerate(g):  # filled in place: no second copy of the store
                        stacked[i] = group[v][...]
                    self._arrays[tuple(g)] = stacked
            else:
                self._arrays = {v: group[v].async_array for v in names}
            self._pid = os.getpid()
        return self._arrays

    def draw(self, index: int) -> tuple[int, int, int, int]:
        rng = np.random.default_rng((self.seed, 0 if self.fixed else self.epoch, index))
        span = self.layout.padded - self.crop + 1
        t, f, oy, ox = rng.integers([self.t_lo, 0, 0, 0], [self.t_hi, 6, span, span])
        return int(t), int(f), int(oy), int(ox)

    def _groups(self) -> list[tuple[list[str], bool]]:
        """(variables, static?): the time-dependent ones and the static ones, each assembled at
        once; empty groups left out."""
        groups = [(self.prognostic + self.diagnostic, False), (self.static, True)]
        return [(g, static) for g, static in groups if g]

    def read(self, t: int, face: int, oy: int, ox: int) -> dict[str, np.ndarray]:
        """Every variable's crop: time-dependent ones as ``(k + 1, S, S)``, static ``(S, S)``."""
        arrays = self._open()
        plan = plan_crop(self.geo, face, oy, ox, self.crop)
        tsel = slice(t, t + self.steps + 1)

        def selections(static: bool):
            lead = () if static else (tsel,)
            yield (*lead, face, *plan.inner)
            for g, ys, xs in plan.boxes:
                yield (*lead, g, ys, xs)

        groups = self._groups()
        nb = 1 + len(plan.boxes)  # the inner box and each neighbour box
        if self.in_memory:
            reads = [[arrays[tuple(g)][(slice(None), *sel)] for sel in selections(static)]
                     for g, static in groups]  # fmt: skip
        else:

            async def fetch():  # every read of the sample in flight at once
                sels = ((v, sel) for g, static in groups for v in g for sel in selections(static))
                return await asyncio.gather(*(arrays[v].getitem(sel) for v, sel in sels))

            parts, reads = sync(fetch()), []
            for g, _ in groups:  # variable-major parts -> per box, (V, [k + 1,] h, w)
                mine, parts = parts[: len(g) * nb], parts[len(g) * nb :]
                reads.append([np.stack(mine[i::nb]) for i in range(nb)])
        out = {}
        for (group, _), (inner, *boxes) in zip(groups, reads, strict=True):
            crops = assemble(plan, inner, boxes, self.crop)  # (V, [k + 1,] S, S)
            if not np.isfinite(crops).all():
                for var, crop in zip(group, crops, strict=True):
                    if not np.isfinite(crop).all():
                        self._report_non_finite(var, crop, t, face, oy, ox)
            out |= dict(zip(group, crops, strict=True))
        return out

    def _report_non_finite(self, var, crop, t, face, oy, ox) -> None:
        where = np.argwhere(~np.isfinite(crop))[0]
        ti = t + int(where[0]) if crop.ndim == 3 else None
        py, px = (int(v) for v in where[-2:])
        H = self.layout.halo
        when = f" at time index {ti} ({self.times[ti]})" if ti is not None else ""
        raise StoreError(
            f"store {self.url}: non-finite value in '{var}'{when}, face {face}, "
            f"extended-face pixel (y={oy + py}, x={ox + px}) = face pixel "
            f"(y={oy + py - H}, x={ox + px - H})"
        )

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        t, face, oy, ox = self.draw(index)
        crops = self.read(t, face, oy, ox)
        win = (face, slice(oy, oy + self.crop), slice(ox, ox + self.crop))
        trig = self.geo.trig[(slice(None), *win)]  # (4, S, S): sin/cos lat, sin/cos lon
        cz = cos_zenith_from_trig(self.times[t : t + self.steps + 1], *trig.astype(np.float64))
        sun = np.maximum(0.0, cz)  # insolation / S0, (k + 1, S, S)
        static = [crops[v][None] for v in self.static] + [trig]
        state = np.stack([crops[v][0] for v in self.prognostic])  # (C, S, S)
        target = np.stack([crops[v][1:] for v in self.prognostic + self.diagnostic], axis=1)
        area = self.geo.area[win[1:]]  # same on every face
        return {
            "state": torch.from_numpy(state),
            "target": torch.from_numpy(np.ascontiguousarray(target)),  # (k, C + D, S, S)
            "forcing": torch.from_numpy(sun.astype(np.float32)[:, None]),  # (k + 1, 1, S, S)
            "static": torch.from_numpy(np.concatenate(static).astype(np.float32)),
            "area": torch.from_numpy(area / area.mean()),
            "time": torch.tensor(t),
            "face": torch.tensor(face),
            "origin": torch.tensor([oy, ox]),
        }


def _decode_time(group: Any) -> np.ndarray:
    """CF-decode the ``time`` array of a zarr group to datetime64[ns]."""
    import xarray as xr

    var = xr.Variable(("time",), group["time"][:], dict(group["time"].attrs))
    return xr.coding.times.CFDatetimeCoder().decode(var).values.astype("datetime64[ns]")
