# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Years of Held-Suarez training data, one resumable yearly chunk at a time, kept in a cache
outside the work tree under a content key (dycore settings, restart, seed, length, grid), so a
killed run continues where it stopped and a later session that still has the cache reuses it.
A finished year keeps its ingested store (its history files, 2.2 GB a year, are deleted); to
make a year again, remove its folder.

Each year is an independent run from the shipped spun-up restart, perturbed by its own seed and
run ``discard_days`` before recording: Held-Suarez is statistically stationary and forgets its
start within weeks, so independent years sample the climate as one long run would, and they can
be made (or re-made) in any order. Year 0 is seed 1, the benchmark's one training year; seed 2
is the independent test run and is never a training year.

    python -m benchmarks.held_suarez.years --years 10            # make (or finish) 10 years
    python -m benchmarks.held_suarez.years --years 10 --list     # what is there, made nothing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.held_suarez.data import RESTART

TEST_SEED = 2  # the benchmark's independent test run (data.py)


def cache_root() -> Path:
    """``$SCREAMCAST_CACHE`` or ``~/.cache/screamcast``: outside any work tree."""
    root = os.environ.get("SCREAMCAST_CACHE") or Path.home() / ".cache" / "screamcast"
    return Path(root) / "held_suarez_years"


@dataclass(frozen=True)
class YearPlan:
    days: float = 365.0
    discard_days: float = 30.0
    ne: int = 16
    layers: int = 4
    truncation: int = 42
    restart: Path = RESTART


def year_seed(year: int) -> int:
    """Year 0 is the benchmark's training year (seed 1); later years skip the test seed."""
    if year < 0:
        raise ValueError(f"year must be >= 0, got {year}")
    return 1 if year == 0 else year + TEST_SEED


def year_key(plan: YearPlan, year: int) -> str:
    """What makes a year's data: the restart's bytes, the dycore, the seed, length and grid."""
    from screamcast.sources.dycore_run import _dinosaur_version

    content = {
        "restart": hashlib.sha256(Path(plan.restart).read_bytes()).hexdigest(),
        "dinosaur": _dinosaur_version(),
        "truncation": plan.truncation,
        "ne": plan.ne,
        "layers": plan.layers,
        "days": plan.days,
        "discard_days": plan.discard_days,
        "seed": year_seed(year),
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def year_folder(plan: YearPlan, year: int, root: Path | None = None) -> Path:
    return (root or cache_root()) / f"year{year:02d}-seed{year_seed(year)}-{year_key(plan, year)}"


def is_complete(store: Path) -> bool:
    from screamcast.ingest.store import existing_attrs

    attrs = existing_attrs(str(store), None)
    return bool(attrs and attrs.get("ingest_complete"))


def make_year(plan: YearPlan, year: int, root: Path | None = None, log=print) -> Path:
    """The year's ingested store (float32, as the benchmark's), made or finished here."""
    from screamcast.ingest import IngestOptions, ingest
    from screamcast.sources.dycore_run import HistoryOptions, history
    from screamcast.sources.held_suarez import DycoreConfig

    folder = year_folder(plan, year, root)
    store = folder / "train.zarr"
    if is_complete(store):
        return store
    t0 = time.perf_counter()
    options = HistoryOptions(
        str(plan.restart),
        str(folder / "hist"),
        plan.days,
        year_seed(year),
        discard_days=plan.discard_days,
        ne=plan.ne,
        config=DycoreConfig(truncation=plan.truncation),
    )
    summary = history(options, progress=False)
    ingest(
        IngestOptions(
            [f"{folder / 'hist'}/*.nc"],
            str(store),
            layers=str(plan.layers),
            workers=0,
            progress=False,
            dtype="float32",
        )
    )
    for f in (folder / "hist").glob("*.nc"):  # 2.2 GB a year, in the store now
        f.unlink()
    minutes = (time.perf_counter() - t0) / 60.0
    (folder / "minutes").write_text(f"{minutes:.2f}\n")  # the benchmark's record reads it
    log(f"year {year} (seed {year_seed(year)}): {store} in {minutes:.1f} min, {summary}")
    return store


def make_years(plan: YearPlan, years: int, root: Path | None = None, log=print) -> list[Path]:
    return [make_year(plan, y, root, log) for y in range(years)]


def made_years(plan: YearPlan, years: int, root: Path | None = None) -> list[Path]:
    """The complete years among the first ``years``, made nothing."""
    stores = [year_folder(plan, y, root) / "train.zarr" for y in range(years)]
    return [s for s in stores if is_complete(s)]


def minutes_of(stores: list[Path]) -> list[float | None]:
    """Each year's making (dycore and ingestion) in wall minutes, where it was recorded (None
    for years made before it was)."""
    files = [Path(s).parent / "minutes" for s in stores]
    return [float(f.read_text()) if f.exists() else None for f in files]


def combine(stores: list[Path], output: Path) -> Path:
    """One training store of the years end to end (``output``, made once; its ``years`` attr
    names the stores): every time-dependent array concatenated, the times made one 6-hourly
    axis, the ``segments`` attr (``[[start, stop], ...]``) telling the training where each
    independent run begins (no sample spans two), the statistics merged."""
    import shutil

    import zarr

    names = [str(s) for s in stores]
    if is_complete(output) and zarr.open_group(str(output), mode="r").attrs.get("years") == names:
        return output
    groups = [zarr.open_group(str(s), mode="r") for s in stores]
    packed = [n for n, g in zip(names, groups, strict=True) if g["fields"].filters]
    if packed:  # year 0's packing would re-pack the others' values unchecked
        raise ValueError(f"joining years needs float32 stores; packed: {', '.join(packed)}")
    sizes = [g["time"].shape[0] for g in groups]
    work = output.with_name(output.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    out = zarr.open_group(str(work), mode="w", zarr_format=3)
    for name, array in groups[0].arrays():
        _combined_array(out, name, array, [g[name] for g in groups], sizes)
    stops = np.cumsum(sizes).tolist()
    segments = [[a, b] for a, b in zip([0, *stops[:-1]], stops, strict=True)]
    stats = [g.attrs["normalisation"] for g in groups]
    out.attrs.update(
        dict(groups[0].attrs)
        | {"normalisation": merged_stats(stats, sizes), "segments": segments, "years": names}
    )
    shutil.rmtree(output, ignore_errors=True)
    work.rename(output)
    return output


def _combined_array(out, name: str, first, arrays: list, sizes: list[int]) -> None:
    """``name`` in ``out``: concatenated along time, the time axis renumbered, or copied."""
    dims = list(first.metadata.dimension_names or [])
    timed = bool(dims) and dims[0] == "time"
    shape = (sum(sizes), *first.shape[1:]) if timed else first.shape
    new = out.create_array(
        name, shape=shape, chunks=first.chunks, shards=first.shards, dtype=first.dtype,
        fill_value=first.fill_value, filters=first.filters, compressors=first.compressors,
        dimension_names=dims or None,
    )  # fmt: skip
    new.attrs.update(dict(first.attrs))
    if name == "time":  # one axis: the first year's start, then every 6 h
        counts = first[:]
        new[:] = counts[0] + (counts[1] - counts[0]) * np.arange(sum(sizes))
    elif timed:
        t0 = 0
        for array, size in zip(arrays, sizes, strict=True):
            for a in range(0, size, 64):
                new[t0 + a : t0 + min(a + 64, size)] = array[a : min(a + 64, size)]
            t0 += size
    else:
        new[...] = first[...]


def merged_stats(parts: list[dict], sizes: list[int]) -> dict:
    """The statistics of the concatenation: means and variances weighted by the times,
    extremes over all (a channel's extremes only where every part records them)."""
    w = np.asarray(sizes, np.float64) / sum(sizes)
    out = {"mean": {}, "std": {}, "diff_std": {}, "min": {}, "max": {}}
    for c in parts[0]["mean"]:
        mean = np.array([p["mean"][c] for p in parts])
        std = np.array([p["std"][c] for p in parts])
        diff = np.array([p["diff_std"][c] for p in parts])
        m = float((w * mean).sum())
        out["mean"][c] = m
        out["std"][c] = float(np.sqrt(max((w * (std**2 + mean**2)).sum() - m * m, 0.0)))
        out["diff_std"][c] = float(np.sqrt((w * diff**2).sum()))
        if all(c in p.get("min", {}) for p in parts):
            out["min"][c] = min(p["min"][c] for p in parts)
            out["max"][c] = max(p["max"][c] for p in parts)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.held_suarez.years", description=__doc__)
    p.add_argument("--years", type=int, default=10)
    p.add_argument("--days", type=float, default=365.0, help="recorded days per year (365)")
    p.add_argument("--list", action="store_true", help="list the complete years; make nothing")
    a = p.parse_args(argv)
    plan = YearPlan(days=a.days)
    if a.list:
        for store in made_years(plan, a.years):
            print(store)
        return 0
    for store in make_years(plan, a.years, log=lambda m: print(m, flush=True)):
        print(store, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
