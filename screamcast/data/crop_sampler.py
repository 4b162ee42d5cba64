# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where each training sample comes from: ``(time, face, oy, ox)`` as a pure function of
``(seed, epoch, index)``, so every rank and worker draws the same samples in any order.

The reads live in :mod:`screamcast.data.lazy_crops` (or a slice of the in-memory faces), the
batch in :class:`~screamcast.data.dataset.CropDataset`; this module only draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from screamcast.data.region_sampler import RegionPlan

if TYPE_CHECKING:
    import xarray as xr

DRAW_BLOCK = 256  # sample origins drawn per random generator


def time_range(
    spec, total: int, steps: int | None = None, key: str = "the time range", store: str = ""
) -> tuple[int, int]:
    """``[lo, hi]`` time indices of a config (``lo < 0``: from the end; ``hi <= 0``: from the
    end, 0 meaning to the end) as a Python range ``(lo, hi)``. With ``steps``, a range without
    room for one ``steps``-step sample (``steps + 1`` times) is refused naming ``key``: before
    the statistics pass or a dataset would divide by its empty sums."""
    lo, hi = spec
    lo, hi = (lo % total if lo < 0 else lo, total + hi if hi <= 0 else hi)
    if steps is not None and not (0 <= lo and hi <= total and hi - lo > steps):
        where = f" of {store}" if store else ""
        raise ValueError(
            f"{key}={list(spec)} selects times [{lo}, {hi}) of the {total}{where}: a "
            f"{steps}-step sample needs {steps + 1} consecutive times; choose a longer range "
            f"or a store with more times"
        )
    return lo, hi


def segments_of(ds: xr.Dataset) -> list[tuple[int, int]]:
    """The store's independent runs as ``[(start, stop), ...]`` time indices (its ``segments``
    attr), or the whole store as one."""
    segments = ds.attrs.get("segments")
    return [tuple(s) for s in segments] if segments else [(0, ds.sizes["time"])]


def window_starts(lo: int, hi: int, steps: int, segments) -> np.ndarray:
    """The first times ``t`` in ``[lo, hi)`` whose window ``t .. t + steps`` lies in
    ``[lo, hi)`` and inside one segment."""
    starts = [np.arange(max(lo, a), min(hi, b) - steps) for a, b in segments]
    return np.concatenate(starts) if starts else np.zeros(0, int)


@dataclass
class CropSampler:
    """Crop origins on the ``padded``-wide extended faces, start times in ``[t_lo, t_hi)``.

    Drawn for blocks of :data:`DRAW_BLOCK` indices at once from ``default_rng((seed, epoch,
    block))``; with ``regions``, a window of region groups per block and per rank, shuffled
    (each rank draws whole regions of its own, so no two ranks read one). ``fixed`` ignores
    the epoch (validation).
    """

    padded: int  # P: extended-face side
    crop: int  # S
    t_lo: int
    t_hi: int
    seed: int = 0
    fixed: bool = False
    regions: RegionPlan | None = None
    # the allowed start times (a store of several independent runs: none whose window spans
    # two), drawn by their rank in place of ``t_lo .. t_hi``; None: every time there
    starts: np.ndarray | None = None
    _draws: dict = field(default_factory=dict, repr=False)  # one block kept: indices in order

    def draw(
        self, index: int, epoch: int = 0, shard: tuple[int, int] = (1, 1)
    ) -> tuple[int, int, int, int]:
        """``(time, face, oy, ox)`` of sample ``index``; ``shard`` is (global batch G, world):
        index ``step * G + rank + j * world`` is rank's (StepBatches)."""
        epoch = 0 if self.fixed else epoch
        if self.regions is not None:
            G, world = shard
            rank = index % G % world  # the rank StepBatches gives it, and its place there
            mine = index // G * (G // world) + index % G // world
            per = self.regions.window * self.regions.per_region
            key = (epoch, rank, mine // per)
            if key not in self._draws:
                self._draws = {key: self.window(*key).tolist()}
            t, f, oy, ox = self._draws[key][mine % per][:4]
            return t, f, oy, ox
        key = (epoch, index // DRAW_BLOCK)
        if key not in self._draws:
            span = self.padded - self.crop + 1
            rng = np.random.default_rng((self.seed, *key))
            block = rng.integers(
                [self.t_lo, 0, 0, 0], [self._t_end(), 6, span, span], (DRAW_BLOCK, 4)
            )
            self._draws = {key: self._mapped(block).tolist()}
        t, f, oy, ox = self._draws[key][index % DRAW_BLOCK]
        return t, f, oy, ox

    def window(self, epoch: int, rank: int, number: int) -> np.ndarray:
        """``(window * per_region, 6)`` rows ``(t, face, oy, ox, ry, rx)`` of a rank's window
        ``number`` of region crops, in the order its samples are drawn (``ry, rx``: the
        region's block start, :meth:`RegionPlan.draw`)."""
        epoch = 0 if self.fixed else epoch
        rng = np.random.default_rng((self.seed, epoch, rank, number, 1))
        return self._mapped(self.regions.draw(rng, self.t_lo, self._t_end()))

    def _t_end(self) -> int:
        return self.t_hi if self.starts is None else self.t_lo + len(self.starts)

    def _mapped(self, rows: np.ndarray) -> np.ndarray:
        """Rows whose first column is a rank among the allowed starts, as those times."""
        if self.starts is None:
            return rows
        rows = rows.copy()
        rows[:, 0] = self.starts[rows[:, 0] - self.t_lo]
        return rows
