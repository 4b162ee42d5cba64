# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Normalisation statistics: area-weighted mean / std per variable and std of 1-step changes,
and each variable's smallest and largest value (the rollout's guard bounds a run by them).

Computed in one streaming pass over time blocks (memory flat in the length of the store), saved
as JSON beside a run and embedded in every checkpoint, so a checkpoint normalises its inputs
the way it was trained whatever store it is later run on.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.grid.physics import PhysicsGrid


@dataclass
class Stats:
    """Per-variable ``mean``, ``std``, ``diff_std`` (std of x(t+1) - x(t)), ``min`` and
    ``max``; plain floats. Statistics written before ``min``/``max`` existed load with them
    empty (the guard then bounds by ``std``)."""

    mean: dict[str, float] = field(default_factory=dict)
    std: dict[str, float] = field(default_factory=dict)
    diff_std: dict[str, float] = field(default_factory=dict)
    min: dict[str, float] = field(default_factory=dict)
    max: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Stats:
        keys = ("mean", "std", "diff_std", "min", "max")
        return cls(**{k: {v: float(x) for v, x in data.get(k, {}).items()} for k in keys})

    def subset(self, channels) -> Stats:
        """These ``channels``' statistics (extremes only where recorded)."""
        d = self.to_dict()
        return Stats.from_dict({k: {c: d[k][c] for c in channels if c in d[k]} for k in d})

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Stats:
        return cls.from_dict(json.loads(Path(path).read_text()))


class Moments:
    """Weighted running sums in float64 (Chan-style merging is overkill at these sizes) and
    the extremes; parts merge (the ingestion's time blocks: :meth:`merge`; a block recorded
    before the extremes were kept merges as ``[w, s1, s2]``)."""

    def __init__(self, w=0.0, s1=0.0, s2=0.0, lo=float("inf"), hi=float("-inf")):
        self.w, self.s1, self.s2, self.lo, self.hi = w, s1, s2, lo, hi

    def merge(self, other: Moments) -> None:
        self.w, self.s1, self.s2 = self.w + other.w, self.s1 + other.s1, self.s2 + other.s2
        self.lo, self.hi = min(self.lo, other.lo), max(self.hi, other.hi)

    def to_list(self) -> list[float]:
        return [self.w, self.s1, self.s2, self.lo, self.hi]

    def add(self, x: np.ndarray, w: np.ndarray) -> None:
        x = x.astype(np.float64)
        self.w += float(w.sum()) * (x.size // w.size)
        self.s1 += float((x * w).sum())
        self.s2 += float((x * x * w).sum())
        if x.size:
            self.lo, self.hi = min(self.lo, float(x.min())), max(self.hi, float(x.max()))

    def put_extremes(self, stats: Stats, name: str) -> None:
        """``stats.min/max[name]``, when any value was seen (JSON has no infinity)."""
        if np.isfinite(self.lo) and np.isfinite(self.hi):
            stats.min[name], stats.max[name] = self.lo, self.hi

    def mean_std(self) -> tuple[float, float]:
        mean = self.s1 / self.w
        return mean, float(np.sqrt(max(self.s2 / self.w - mean**2, 0.0)))


def compute_stats(
    ds: xr.Dataset,
    variables: list[str],
    static: list[str] = (),
    block: int = 24,
    time_range: tuple[int, int] | None = None,
    url: str | None = None,
    storage_options: dict | None = None,
) -> Stats:
    """Stream over ``ds`` in blocks of ``block`` times (only the training period if given).
    A non-finite value is refused naming its variable, time and pixel (one NaN made the
    variable's mean NaN and the first step's gradients non-finite)."""
    area = PhysicsGrid.from_name(ds.attrs["grid"]).area  # recorded by open_store
    lo, hi = time_range or (0, ds.sizes["time"])
    stats = Stats()
    for var in variables:
        level, change = Moments(), Moments()
        previous = None
        for b0 in range(lo, hi, block):
            x = ds[var].isel(time=slice(b0, min(b0 + block, hi))).values  # (t, 6, n, n)
            check_finite(x, (url, storage_options), var, ds["time"], b0)
            level.add(x, area)
            chained = x if previous is None else np.concatenate([previous, x])
            if chained.shape[0] > 1:
                change.add(np.diff(chained, axis=0), area)
            previous = x[-1:]
        stats.mean[var], stats.std[var] = level.mean_std()
        stats.diff_std[var] = change.mean_std()[1] if change.w else stats.std[var]
        level.put_extremes(stats, var)
    for var in static:
        level = Moments()
        x = ds[var].values  # (6, n, n), read once
        check_finite(x, (url, storage_options), var)
        level.add(x, area)
        stats.mean[var], stats.std[var] = level.mean_std()
        level.put_extremes(stats, var)
        stats.diff_std[var] = 0.0
    for var in (*variables, *static):
        if stats.std[var] == 0.0:
            stats.std[var] = 1.0  # a constant field: normalise by its mean only
    return stats


def check_finite(x: np.ndarray, store: tuple, var: str, time=None, t0: int = 0) -> None:
    """Refuse ``x`` (``([t,] 6, n, n)``, the first at time index ``t0`` of the store's
    ``time``) if it holds a non-finite value, naming the first; ``store``: ``(url or None,
    storage options)``, whose ingestion's record of missing times is quoted."""
    if np.isfinite(x).all():
        return
    # imported here: the model (and a lent GPU's check, which has no zarr) imports Stats
    from screamcast.data.remote import StoreError
    from screamcast.data.store import first_non_finite, ingestion_note

    url, options = store
    times = None if time is None else time.values  # only now: a long cftime axis is slow
    message, when = first_non_finite(x, url or "(in memory)", var, times, t0)
    advice = "; fix the data"
    if when is not None:
        note = ingestion_note(url, options, when) if url else ""
        advice = note or "; fix the data, or choose a data.train_range without it"
    raise StoreError(message + ": the normalisation statistics cannot be computed" + advice)


def store_stats(ds: xr.Dataset, channels: list[str], name: str) -> Stats:
    """The statistics an ingested store carries (attr ``normalisation``, over all its times),
    for ``channels``; a store without them, or without a channel, is refused by name."""
    have = ds.attrs.get("normalisation")
    if not have:
        raise ValueError(
            f"store {name} has no 'normalisation' attr (written by python -m screamcast.ingest): "
            "set data.stats_from_store=false to compute the statistics"
        )
    missing = [c for c in channels if c not in have["mean"]]
    if missing:
        raise ValueError(f"store {name}: its statistics lack {', '.join(missing)}")
    return Stats.from_dict(have).subset(channels)
