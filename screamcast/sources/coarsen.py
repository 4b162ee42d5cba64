# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Any cube store -> a coarser ``ne*pg2`` store of area-weighted block means: a nudging
reference made from data the ingestion wrote (or any store ``open_store`` reads).

The coarse grid's ``ne`` must divide the store's (the same ``pg``), so each coarse element is
a union of fine ones and a block of ``f x f`` cells (``f = ne_fine / ne_coarse``) stands for one
coarse cell: the projection the nudging applies (:mod:`screamcast.rollout.nudging`). Levels
and layers, their coordinates and every variable's attrs carry over; ``every`` keeps one time
in ``every`` (a 6-hourly reference from an hourly store).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
import zarr

from screamcast.data.calendar import encode
from screamcast.data.store import StoreError, dataset_grid, open_store
from screamcast.grid.physics import PhysicsGrid, block_mean

TITLE = "screamcast coarsened store (area-weighted block means)"
HORIZONTAL = ("face", "y", "x")


def coarsen_store(
    url: str,
    output: str | Path,
    ne: int,
    every: int = 1,
    storage_options: dict | None = None,
    block: int = 64,
) -> Path:
    """Write the block-mean store of ``url`` on ``ne<ne>pg<pg>`` at ``output`` (which must not
    exist: nothing is overwritten); ``block`` times at a time, so memory stays flat."""
    output = Path(output)
    if output.exists():
        raise StoreError(f"--output {output} exists: choose another path (nothing is replaced)")
    if every < 1:
        raise StoreError(f"--every must be >= 1, got {every}")
    ds = open_store(url, storage_options, [], (), None)
    fine = dataset_grid(ds)
    if ne < 1 or fine.ne % ne:
        raise StoreError(
            f"{url} is on {fine.name}: the coarse grid's ne must divide {fine.ne}, got {ne}"
        )
    coarse, factor = PhysicsGrid(ne, fine.pg), fine.ne // ne
    names = [
        v for v in ds.data_vars if ds[v].dims[:1] == ("time",) and ds[v].dims[-3:] == HORIZONTAL
    ]
    names = [v for v in names if "[" not in v]  # a 3-D variable, not its channel views
    times = ds["time"].values[::every]
    if times.size == 0:
        raise StoreError(f"{url} holds no times: nothing to coarsen")
    _, units, calendar = encode(times)
    non_finite: dict[str, dict] = {}  # as the ingestion records it: {var: {values, times}}
    for b0 in range(0, times.size, block):
        part = ds[names].isel(time=slice(b0 * every, (b0 + block) * every, every))
        means = {v: block_mean(part[v].values, fine.area, factor).astype(np.float32) for v in names}
        for v, m in means.items():  # a NaN fine cell makes its coarse cell NaN: recorded
            bad = ~np.isfinite(m.reshape(m.shape[0], -1))  # (t, values)
            for k in np.flatnonzero(bad.any(axis=1)):
                entry = non_finite.setdefault(v, {"values": 0, "times": []})
                entry["values"] += int(bad[k].sum())
                entry["times"].append(str(part["time"].values[k]))
        out = xr.Dataset(
            {v: (part[v].dims, means[v], ds[v].attrs) for v in names},
            coords={"time": part["time"].values} | _level_coords(ds, names),
        )
        if b0 == 0:
            _create(out, output, coarse, names, url, fine, factor, every, units, calendar)
        else:
            out.to_zarr(output, append_dim="time", consolidated=False)
    zarr.open_group(output, mode="r+").attrs["non_finite"] = non_finite
    return output


def _create(out, output, coarse, names, url, fine, factor, every, units, calendar) -> None:
    """The coarse store with its first block of times, its grid and its provenance."""
    out = out.assign_coords(
        lat=(HORIZONTAL, coarse.lat, {"units": "degrees_north"}),
        lon=(HORIZONTAL, coarse.lon, {"units": "degrees_east"}),
        area=(HORIZONTAL, coarse.area, {"units": "sr"}),
    )
    out.attrs = {
        "title": TITLE,
        "grid": coarse.name,
        "calendar": calendar,
        "coarsened_from": str(url),
        "source_grid": fine.name,
        "block_cells": factor,
        "every": every,
    }
    enc = {"time": {"units": units, "calendar": calendar, "dtype": "int64"}}
    enc |= {v: {"chunks": (1,) * (out[v].ndim - 3) + (1, coarse.n, coarse.n)} for v in names}
    out.to_zarr(output, mode="w-", encoding=enc, consolidated=False)


def _level_coords(ds: xr.Dataset, names: list[str]) -> dict:
    """The level coordinates (values and attrs: layer interfaces) of the 3-D variables."""
    dims = {d for v in names for d in ds[v].dims if d not in ("time", *HORIZONTAL)}
    return {d: ds[d] for d in dims if d in ds.coords}
