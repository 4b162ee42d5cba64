# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The initial-condition store a rollout starts from: opened on the checkpoint's grid, its
levels and time step checked against the checkpoint's, the start found in its calendar, and
the state and static fields read (each refused if not finite, naming the variable)."""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import xarray as xr

from screamcast import checkpoint_format as fmt
from screamcast.config.inference import InferenceConfig
from screamcast.data.calendar import CalendarError, calendar_of, parse, seconds
from screamcast.data.channels import grouped, split, vertical_dim
from screamcast.data.compatible import IncompatibleStoreError, channel_levels, check_levels
from screamcast.data.store import (
    StoreError,
    dataset_grid,
    describe_non_finite,
    open_store,
    time_step,
)
from screamcast.rollout.errors import RolloutError


def start_index(times: np.ndarray, start: str | None, data: str, history: int = 0) -> int:
    """The initial condition's time index: ``start``'s, or the first with ``history`` times
    before it (a network of two input times takes the state one step earlier too)."""
    if start is None:
        if history >= len(times):
            raise RolloutError(
                f"the checkpoint takes two input times: {data} needs at least {history + 1} "
                f"times, it has {len(times)}",
                "initial_condition.data",
            )
        return history
    calendar = calendar_of(times)
    try:
        t = parse(start, calendar, "--start")
    except CalendarError as err:
        raise RolloutError(f"{err} (the calendar of {data})") from None
    hit = np.flatnonzero(times == t)
    if hit.size == 0:
        step = f", step {seconds(times[1] - times[0]) / 60:g} min" if len(times) > 1 else ""
        raise RolloutError(
            f"{{initial_condition.start}} {start} is not a time of {data} ({times[0]} to "
            f"{times[-1]}{step}, {calendar} calendar)",
            "initial_condition.start",
        )
    if hit[0] < history:
        raise RolloutError(
            f"{{initial_condition.start}} {start}: the checkpoint takes two input times, the "
            f"state at the start and one step before, and {data} starts there; start at "
            f"{times[history]} or later",
            "initial_condition.start",
        )
    return int(hit[0])


def first_time(times: np.ndarray, dt, ic, desc) -> int:
    """The start's time index; a network of two input times also reads the time one step
    before it, which must be there."""
    history = int(desc.inputs.get("input_times", 1)) - 1  # times before the start it reads
    i0 = start_index(times, ic.start, ic.data, history)
    if history and times[i0] - times[i0 - 1] != dt:
        raise RolloutError(
            f"the checkpoint takes two input times, and {ic.data} has no time one step "
            f"({dt}) before the start {times[i0]} (the one before it is {times[i0 - 1]})",
            "initial_condition.start",
        )
    return i0


def check_finite(fields: np.ndarray, names: list[str], where: str) -> None:
    """Refuse NaN/Inf in ``fields (V, ...)``, naming the variable, the count and the first
    position (``(face, y, x)`` for cube fields)."""
    message = describe_non_finite(fields, names, where)
    if message is not None:
        raise RolloutError(message)


def keyed_store_errors(open_):
    """``open_()``, a store's error about a missing grid naming the config key that
    accepts one (``stores.assume_grid``)."""
    try:
        return open_()
    except StoreError as err:
        if getattr(err, "option", None) == "assume_grid":
            raise RolloutError(
                f"{err.bare} ({{stores.assume_grid}})", "stores.assume_grid"
            ) from None
        raise


def _listed(names) -> str:
    """``U[0]..U[3], PS`` -> ``U (4 levels), PS``."""
    return ", ".join(
        f"{var} ({len(m)} levels)" if m[0][1] is not None else var
        for var, m in grouped(list(names)).items()
    )


def variables_mismatch(c: InferenceConfig, desc, needed: list[str]) -> str | None:
    """When the initial-condition store lacks variables the checkpoint steps, the refusal that
    names both sides (the checkpoint's grid and variables, the store's), else None (the store
    cannot be read at all, or its error is another one)."""
    ic, stores = c.initial_condition, c.stores
    try:
        ds = open_store(ic.data, stores.storage_options, assume_grid=stores.assume_grid)
    except StoreError:
        return None
    have = sorted(v for v in ds.data_vars if set(ds[v].dims) & {"face", "ncol"})
    missing = [v for v in grouped(needed) if v not in have]
    if not missing:
        return None
    names = desc.variables
    trained = [*names.prognostic, *names.diagnostic, *names.static]
    store = [f"{v} ({ds.sizes[d]} levels)" if (d := vertical_dim(ds[v])) else v for v in have]
    return (
        f"checkpoint {c.checkpoint.path} was trained on grid {desc.grid.name} with variables "
        f"[{_listed(trained)}]; the initial condition {ic.data} ({{initial_condition.data}}) "
        f"is grid {ds.attrs.get('grid', 'unknown')} with [{', '.join(store)}], without "
        f"{', '.join(missing)}: roll this checkpoint out on a store of its grid and variables, "
        "or this store with a checkpoint trained on it"
    )


def initial_store(c: InferenceConfig, desc, prog, static) -> xr.Dataset:
    """The initial condition's store on the checkpoint's grid."""
    ic, stores = c.initial_condition, c.stores
    try:
        ds = keyed_store_errors(
            lambda: open_store(
                ic.data,
                stores.storage_options,
                prog,
                static,
                desc.grid.n,
                assume_grid=stores.assume_grid,
            )
        )
    except StoreError as err:  # name the setting that gave the store
        mismatch = variables_mismatch(c, desc, prog + static)
        raise RolloutError(
            mismatch or f"{err} ({{initial_condition.data}})", "initial_condition.data"
        ) from None
    grid = dataset_grid(ds)
    if grid.name != desc.grid.name:
        raise RolloutError(
            f"checkpoint {c.checkpoint.path} was trained on grid {desc.grid.name}, but the "
            f"initial condition {ic.data} is on {grid.name}"
        )
    return ds


def check_data_levels(desc: fmt.ModelDescription, ds: xr.Dataset, names, c) -> None:
    """The data's 3-D channels must be at the levels the checkpoint was trained on (a channel
    is an index: the same index in another store can be another level)."""
    if desc.levels is None:
        if any(split(v)[1] is not None for v in names):
            warnings.warn(
                f"checkpoint {c.checkpoint.path} is from before level values were recorded "
                "(format < 3): its channels' levels cannot be checked against the data's",
                stacklevel=3,
            )
        return
    try:
        check_levels(
            desc.levels,
            channel_levels(ds, names),
            [v for v in names if v in ds],
            f"initial condition {c.initial_condition.data}",
            f"checkpoint {c.checkpoint.path}",
        )
    except IncompatibleStoreError as err:
        raise RolloutError(str(err)) from None


def checked_time_step(ds: xr.Dataset, desc: fmt.ModelDescription, name: str) -> datetime.timedelta:
    """The store's step, which must be the one the checkpoint was trained at; a store of one
    time (an initial state alone) steps at the checkpoint's."""
    dt = time_step(ds)
    trained, step_min = desc.time_step_minutes, seconds(dt) / 60.0
    if ds.sizes["time"] == 1 and trained is not None:
        return datetime.timedelta(minutes=trained)
    if trained is not None and abs(trained - step_min) > 1e-6:
        raise RolloutError(
            f"{name} has a {step_min:g} min time step; "
            f"the checkpoint was trained at {trained:g} min"
        )
    return dt


def initial_state(ds, prog, diag, i0: int, name: str, region=None) -> np.ndarray:
    """``(P + D, 6, n, n)`` at time index ``i0`` (one time read; a diagnostic the store lacks
    is NaN at the start), or ``(P + D, F, h, w)`` on ``region`` (faces, rows, cols), refused if
    any value read is not finite."""
    at = ds.isel(time=i0)
    where = f"initial condition {name} at {ds['time'].values[i0]}"
    if region is not None:
        at = at.isel(face=region[0], y=region[1], x=region[2])
        named = zip(("faces", "rows", "columns"), region, strict=True)
        where += " (" + ", ".join(f"{d} {r.start} to {r.stop - 1}" for d, r in named) + ")"
    state = at[prog].to_array().values.astype(np.float32)  # (P, F, h, w)
    check_finite(state, prog, where)
    have = [v for v in diag if v in ds]
    first = (
        dict(zip(have, at[have].to_array().values.astype(np.float32), strict=True)) if have else {}
    )
    check_finite(np.stack(list(first.values())) if first else np.zeros((0,)), have, where)
    nan = np.full(state.shape[1:], np.nan, np.float32)
    return np.concatenate([state, np.stack([first.get(v, nan) for v in diag])]) if diag else state


def static_fields(ds, static, n: int, name: str) -> np.ndarray:
    if not static:
        return np.zeros((0, 6, n, n), np.float32)
    fields = np.stack([ds[v].values for v in static])  # (S, 6, n, n)
    check_finite(fields, static, f"static fields of {name}")
    return fields
