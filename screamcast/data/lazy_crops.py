# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Lazy crop reads: only the chunks a crop (or a region of crops) touches, every read of a
sample in flight at once through zarr's async API, retried as a whole on transient errors.

Part of :class:`~screamcast.data.dataset.CropDataset` (a mixin, as
:class:`~screamcast.data.in_memory.InMemoryExtendedFaces`: it uses the dataset's geometry,
read units, url and time axis); non-finite values are refused naming the store, variable,
time and pixel.
"""

from __future__ import annotations

import asyncio

import numpy as np
from zarr.core.sync import sync

from screamcast.data.crops import assemble, plan_crop
from screamcast.data.remote import StoreError, with_retries
from screamcast.data.store import ingestion_note


class LazyCropReads:
    def _from_region(self, arrays, t: int, face: int, oy: int, ox: int) -> dict[str, np.ndarray]:
        """The crop cut from its region (read once, kept for the window of crops that share
        it): square, ``regions.size`` a side, covering its block's origins plus a crop."""
        R = self.regions.size
        ry, rx = self.region_origin(oy, ox)
        key = (t, face, ry, rx)
        region = self._region_cache.pop(key, None)
        if region is None:
            region = self._read_lazy(arrays, t, face, ry, rx, size=R)  # (V, [k + 1,] R, R)
        self._region_cache[key] = region  # most recently used last
        while len(self._region_cache) > self.regions.window:
            self._region_cache.popitem(last=False)
        win = (slice(oy - ry, oy - ry + self.crop), slice(ox - rx, ox - rx + self.crop))
        return {v: values[(..., *win)] for v, values in region.items()}

    def region_origin(self, oy: int, ox: int) -> tuple[int, int]:
        """The first pixel of the region (``regions.size`` a side) a crop at ``(oy, ox)`` is
        cut from: its block's start, kept inside the extended face."""
        R, s = self.regions.size, self.regions.stride
        return tuple(min(o - o % s, self.layout.padded - R) for o in (oy, ox))

    def _read_lazy(
        self, arrays, t: int, face: int, oy: int, ox: int, size: int | None = None
    ) -> dict[str, np.ndarray]:
        """Only the chunks the crop (or region, ``size`` a side) touches, every read of it in
        flight at once."""
        size = size or self.crop
        plan = plan_crop(self.geo, face, oy, ox, size)
        parts = iter(self._fetch(t, face, oy, ox, plan))
        return self._assembled(self._groups(), parts, plan, size, (t, face, oy, ox))

    def _read_words(self, t: int, face: int, oy: int, ox: int, size: int) -> list[np.ndarray]:
        """A region's reads as the device takes them (:mod:`~screamcast.data.device_crops`):
        per group and read unit, its boxes (own face's, then each neighbour's) flattened and
        put end to end, ``(slots, [k + 1,] N)``, a packed stack's as its stored float16 words
        (the unit's ``decoder`` unpacks them), other arrays' as their values."""
        plan = plan_crop(self.geo, face, oy, ox, size)
        parts = iter(self._fetch(t, face, oy, ox, plan, raw=True))
        out = []
        for group_units in self._units:
            for _ in group_units[0]:
                boxes = [next(parts) for _ in range(1 + len(plan.boxes))]  # (slots, .., h, w)
                flat = [b.reshape(*b.shape[:-2], -1) for b in boxes]  # (slots, [k + 1,] h w)
                out.append(np.concatenate(flat, axis=-1))  # (slots, [k + 1,] N)
        return out

    def _fetch(self, t: int, face: int, oy: int, ox: int, plan, raw: bool = False) -> list:
        """Every read of a crop or region in flight at once: per group, per read unit, per
        box (own face's first) ``(channels, [k + 1,] h, w)``; retried as a whole."""
        tsel = slice(t, t + self.steps + 1)

        def selections(static: bool):  # the crop's own face box, then each neighbour box
            lead = () if static else (tsel,)
            yield (*lead, face, *plan.inner)
            for g, ys, xs in plan.boxes:
                yield (*lead, g, ys, xs)

        groups = self._groups()
        units = [u for u, _ in self._units]  # built once per process (_open)
        limit = asyncio.Semaphore(self.max_in_flight)  # requests in flight at once
        shared: dict = {}  # whole-shard reads by selection: two boxes in one shard read it once

        async def get(names, unit, sel):
            try:
                async with limit:
                    return await unit.getitem(sel, shared, raw)  # (channels, [k + 1,] h, w)
            except Exception as err:  # say which read failed: s3fs's errors name no key
                which = names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"
                err.add_note(f"reading '{which}'{_region(sel)} of store {self.url}")
                raise

        async def fetch():
            jobs = (
                (names, unit, sel)
                for (_, static), group_units in zip(groups, units, strict=True)
                for names, unit in group_units
                for sel in selections(static)
            )
            tasks = [asyncio.ensure_future(get(*job)) for job in jobs]
            try:
                return await asyncio.gather(*tasks)
            except BaseException:  # one read failed: stop the others before a retry
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise

        # s3fs and botocore retry each request first; a sample whose reads still fail with a
        # transient error (throttling, 5xx, timeouts) is read again, with backoff
        what = f"store {self.url}, crop (time {t}, face {face}, y {oy}, x {ox})"
        return with_retries(lambda: sync(fetch()), what, self.retries, self.backoff)

    def _assembled(self, groups, parts, plan, size: int, where) -> dict[str, np.ndarray]:
        """The reads ``parts`` (in :meth:`_read_lazy`'s order: per group, per unit, per box)
        put together into each variable's crop, non-finite values reported."""
        nb = 1 + len(plan.boxes)  # boxes per read unit
        out = {}
        for (group, _), (group_units, order) in zip(groups, self._units, strict=True):
            per_box = [[] for _ in range(nb)]
            for _ in group_units:
                for box in per_box:
                    box.append(next(parts))
            inner, *boxes = (np.concatenate(b)[order] for b in per_box)  # (V, [k + 1,] h, w)
            values = assemble(plan, inner, boxes, size)  # (V, [k + 1,] S, S)
            if not np.isfinite(values).all():
                for var, crop in zip(group, values, strict=True):
                    if not np.isfinite(crop).all():
                        self._report_non_finite(var, crop, *where)
            out |= zip(group, values, strict=True)
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
            + (
                ingestion_note(self.url, self.storage_options, self.times[ti])
                if ti is not None
                else ""
            )
        )


def _region(sel: tuple) -> str:
    """``[3:5, 1, 0:8, 4:12]`` for a tuple of ints and slices."""
    parts = (f"{s.start}:{s.stop}" if isinstance(s, slice) else str(s) for s in sel)
    return f"[{', '.join(parts)}]"
