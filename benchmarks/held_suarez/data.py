# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The benchmark's data, made once and kept under the work folder: the training years (year 0
seed 1; with ``years`` > 1 each year made in the content-keyed cache of
:mod:`benchmarks.held_suarez.years` and joined into one store of independent segments) and an
independent test run (seed 2, with its spectral states every day for the T21 baseline) from
the shipped spun-up T42 restart, ingested as SCREAM output is (4 pressure-weighted layers),
the test run coarsened to ne4pg2 (the nudging reference) and the training data's time mean
(the climatology)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

RESTART = Path(__file__).resolve().parents[2] / "screamcast/sources/restarts/held_suarez_T42L20.npz"


@dataclass(frozen=True)
class DataPlan:
    workdir: Path
    train_days: float = 365.0
    test_days: float = 50.0
    ne: int = 16
    reference_ne: int = 4
    layers: int = 4
    truncation: int = 42
    restart: Path = RESTART
    discard_days: float = 30.0
    years: int = 1  # training years (each train_days long)

    @property
    def folder(self) -> Path:
        return self.workdir / "data"

    def path(self, name: str) -> Path:
        return self.folder / name

    def year_plan(self):
        """Each training year's plan in the years' cache."""
        from benchmarks.held_suarez import years

        return years.YearPlan(
            self.train_days, self.discard_days, self.ne, self.layers, self.truncation, self.restart
        )


def make(plan: DataPlan, log=print) -> dict[str, Path]:
    """Every data product, each skipped when it is already there (a killed history run
    continues where it stopped)."""
    from screamcast.ingest import IngestOptions, ingest
    from screamcast.sources.dycore_run import HistoryOptions, history
    from screamcast.sources.held_suarez import DycoreConfig

    plan.folder.mkdir(parents=True, exist_ok=True)
    config = DycoreConfig(truncation=plan.truncation)
    runs = {"test": (2, plan.test_days, 24.0)}
    if plan.years == 1:
        runs["train"] = (1, plan.train_days, 0.0)
    out = {}
    for name, (seed, days, states) in runs.items():
        hist, store = plan.path(f"{name}_hist"), plan.path(f"{name}.zarr")
        if not _complete(store):
            options = HistoryOptions(
                str(plan.restart),
                str(hist),
                days,
                seed,
                discard_days=plan.discard_days,
                ne=plan.ne,
                states_every_hours=states,
                config=config,
            )
            log(f"{name}: {history(options, progress=False)}")
            ingest(
                IngestOptions(  # float32: the record's stores (float16's error: data.md)
                    [f"{hist}/*.nc"],
                    str(store),
                    layers=str(plan.layers),
                    workers=0,
                    progress=False,
                    dtype="float32",
                )
            )
        out[name] = store
    if plan.years > 1:
        out["train"] = _years(plan, log)
    ref = plan.path(f"reference_ne{plan.reference_ne}.zarr")
    if not ref.exists():
        from screamcast.sources.coarsen import coarsen_store

        coarsen_store(str(out["test"]), ref, plan.reference_ne)
    clim = plan.path("climatology.zarr")
    if not clim.exists():
        climatology(out["train"], clim)
    return out | {"reference": ref, "climatology": clim, "states": plan.path("test_hist/states")}


def _years(plan: DataPlan, log) -> Path:
    """The training years, each made (or found) in the years' cache, joined in the work folder."""
    from benchmarks.held_suarez import years

    stores = years.make_years(plan.year_plan(), plan.years, log=log)
    return years.combine(stores, plan.path(f"train_{plan.years}_years.zarr"))


def _complete(store: Path) -> bool:
    from screamcast.ingest.store import existing_attrs

    attrs = existing_attrs(str(store), None)
    return bool(attrs and attrs.get("ingest_complete"))


def climatology(train: Path, output: Path) -> Path:
    """The training year's time mean of every variable, as a one-time store on its grid."""
    from screamcast.data.calendar import DECODER
    from screamcast.data.stacked import unstack

    ds = unstack(xr.open_zarr(train, chunks=None, decode_times=DECODER))
    names = [v for v in ds.data_vars if ds[v].dims[:1] == ("time",) and "[" not in v]
    sums = {v: np.zeros(ds[v].shape[1:]) for v in names}
    for t0 in range(0, ds.sizes["time"], 64):
        part = ds[names].isel(time=slice(t0, t0 + 64))
        for v in names:
            sums[v] += part[v].values.astype(np.float64).sum(axis=0)
    mean = xr.Dataset(
        {
            v: (ds[v].dims, (sums[v] / ds.sizes["time"])[None].astype(np.float32), ds[v].attrs)
            for v in names
        },
        coords={"time": ds["time"].values[:1]} | {c: ds[c] for c in ds.coords if c != "time"},
        attrs={"grid": ds.attrs["grid"], "title": "time mean of the training year"},
    )
    mean.to_zarr(output, mode="w-", consolidated=False)
    return output
