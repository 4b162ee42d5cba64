# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The first phase of a rollout: check every input and decide what to write, writing nothing.

A bad run fails here, in seconds, before any file is created or deleted: checkpoint, stores,
start time, reference coverage and values, the initial condition's values, the output path
(never an input, only ever a rollout output when it exists) and a resume's settings.
"""

from __future__ import annotations

import datetime
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr
from omegaconf import DictConfig, OmegaConf

from screamcast import __version__
from screamcast import checkpoint_format as fmt
from screamcast import checkpoint_io as cio
from screamcast.data.calendar import (
    CalendarError,
    calendar_of,
    in_model_calendar,
    parse,
    seconds,
)
from screamcast.data.channels import (
    ChannelError,
    expand,
    grouped,
    level_coordinate,
    split,
    with_channels,
)
from screamcast.data.compatible import (
    IncompatibleStoreError,
    channel_levels,
    check_levels,
    matched_store,
)
from screamcast.data.store import dataset_grid, describe_non_finite, open_store, time_step
from screamcast.grid import PhysicsGrid
from screamcast.halo import WINDOWS
from screamcast.rollout import output as out
from screamcast.rollout.nudging import Nudger
from screamcast.rollout.stepper import Reassembly, resolve_precision


class RolloutError(ValueError):
    """Bad input to a rollout, found before any step ran (or a state that turned non-finite)."""


@dataclass
class RolloutOptions:
    checkpoint: str
    data: str
    output: str
    start: str | None = None
    steps: int = 24
    reference: str | None = None
    reassembly: Reassembly = Reassembly.CROP
    # the overlap-add's tile window (with the halo adjoint; the crop has none): cosine beat
    # uniform at every lead of the demo's rollouts (docs/halo-adjoint-cross-face.md)
    halo_adjoint_window: str = "cosine"
    nudge_tau_hours: float = 6.0
    # a coarser reference's increment on the model's cells: bicubic (Catmull-Rom), bilinear,
    # or one value per block (screamcast/rollout/nudging.py, docs/rollout.md)
    nudge_increment: str = "bicubic"
    nudge_time: str = "cubic"
    nudge_vars: list[str] = field(default_factory=list)
    device: str = "cpu"
    batch_size: int = 16
    resume: bool = False
    overwrite: bool = False
    storage_options: dict = field(default_factory=dict)
    progress: bool = True
    precision: str = "auto"  # the network's: auto (bf16 autocast on CUDA), bf16 or fp32
    channels_last: bool = True  # the network's convolutions in NHWC (see GlobalStepper)
    partial_reference: str = "nudge"  # a regional reference: nudge inside it, or "refuse"
    # what the checkpoint must be, e.g. a production config's {"model": {...}, "grid": {...}}
    expect: dict | None = None
    expect_source: str = "the expected settings"
    assume_grid: bool = False  # accept stores without lat/lon as on the checkpoint's grid
    climatology: str | None = None  # a store whose time mean the anomaly correlation uses


@dataclass
class RolloutPlan:
    """Everything the execution needs, all of it checked."""

    options: RolloutOptions
    checkpoint: fmt.InferenceCheckpoint
    cfg: DictConfig
    prog: list[str]
    diag: list[str]
    static: list[str]
    ds: xr.Dataset
    grid: PhysicsGrid
    out_times: np.ndarray  # (steps + 1,) cftime, in the initial condition's calendar
    dt: datetime.timedelta
    nudger: Nudger | None
    attrs: dict
    var_attrs: dict
    output: Path
    action: str  # create | resume | replace
    initial: np.ndarray | None  # (V, 6, n, n) prognostic + diagnostic at the start (not resume)
    static_fields: np.ndarray  # (S, 6, n, n)
    levels: dict = field(default_factory=dict)  # 3-D variables' {var: (dim, values, attrs)}
    climatology: np.ndarray | None = None  # (P + D, 6, n, n) time means, with --climatology


def _start_index(times: np.ndarray, start: str | None, data: str) -> int:
    if start is None:
        return 0
    calendar = calendar_of(times)
    try:
        t = parse(start, calendar, "--start")
    except CalendarError as err:
        raise RolloutError(f"{err} (the calendar of {data})") from None
    hit = np.flatnonzero(times == t)
    if hit.size == 0:
        step = f", step {seconds(times[1] - times[0]) / 60:g} min" if len(times) > 1 else ""
        raise RolloutError(
            f"start {start} is not a time of {data} ({times[0]} to {times[-1]}{step}, "
            f"{calendar} calendar)"
        )
    return int(hit[0])


def check_finite(fields: np.ndarray, names: list[str], where: str) -> None:
    """Refuse NaN/Inf in ``fields (V, ...)``, naming the variable, the count and the first
    position (``(face, y, x)`` for cube fields)."""
    message = describe_non_finite(fields, names, where)
    if message is not None:
        raise RolloutError(message)


def _load_checkpoint(o: RolloutOptions) -> fmt.InferenceCheckpoint:
    """The checkpoint, read once (weights, description and sha256), checked against
    ``o.expect``."""
    if not Path(o.checkpoint).exists():
        raise RolloutError(f"checkpoint {o.checkpoint} does not exist")
    try:
        ckpt = fmt.load_for_inference(o.checkpoint)
    except cio.CorruptCheckpointError as err:
        raise RolloutError(f"checkpoint is not usable: {err}") from None
    if o.expect:
        ckpt.description.check(o.expect, o.checkpoint, o.expect_source)
    return ckpt


def _check_options(o: RolloutOptions) -> None:
    if not isinstance(o.reassembly, Reassembly):
        raise RolloutError(f"reassembly must be a Reassembly, got {o.reassembly!r}")
    if o.halo_adjoint_window not in WINDOWS:
        choices = ", ".join(WINDOWS)
        raise RolloutError(
            f"halo_adjoint_window must be one of {choices}, got {o.halo_adjoint_window!r}"
        )

    if o.steps < 1:
        raise RolloutError(f"steps must be >= 1, got {o.steps}")
    if o.batch_size < 1:
        raise RolloutError(f"batch_size (tiles per forward pass) must be >= 1, got {o.batch_size}")
    if not o.nudge_tau_hours > 0:
        raise RolloutError(f"nudge_tau_hours must be positive, got {o.nudge_tau_hours}")


def _nudger(o: RolloutOptions, prog: list[str], dt, ds, out_times, var_attrs) -> Nudger | None:
    if not o.reference:
        if o.nudge_vars:
            raise RolloutError("nudge_vars need a reference to nudge toward")
        return None
    defaults = [v for v in prog if v in ("u", "v", "temperature")]
    try:  # a 3-D variable stands for all its channels, T_mid[10:] for those from level 10 on
        nudge_vars = expand(ds, o.nudge_vars, where=f"nudge_vars ({o.data})") or defaults
    except ChannelError as err:
        raise RolloutError(str(err)) from None
    unknown = [v for v in nudge_vars if v not in prog]
    if unknown:
        raise RolloutError(
            f"nudge_vars: {unknown} not prognostic variables of the checkpoint ({', '.join(prog)})"
        )
    ref = open_reference(
        o.reference, nudge_vars, calendar_of(out_times), o.storage_options, o.assume_grid
    )
    try:
        ref = matched_store(ds, ref, nudge_vars, f"reference {o.reference}")
    except IncompatibleStoreError as err:
        raise RolloutError(str(err)) from None
    nudger = Nudger(
        ref,
        nudge_vars,
        prog,
        o.nudge_tau_hours,
        dt,
        dataset_grid(ds),
        name=o.reference,
        partial=o.partial_reference,
        increment=o.nudge_increment,
        time_interpolation=o.nudge_time,
    )
    nudger.check_covers(out_times[1], out_times[-1])
    nudger.target(out_times[1])  # the first values it needs: read and checked before any step
    return nudger


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
        raise RolloutError(str(err)) from None


def _attrs(o: RolloutOptions, desc, sha256: str, out_times, dt, nudger: Nudger | None) -> dict:
    attrs = {
        "title": out.TITLE,
        "screamcast_version": __version__,
        "checkpoint": str(o.checkpoint),
        "checkpoint_sha256": sha256,
        "initial_condition": str(o.data),
        "start": str(out_times[0]),
        "steps": int(o.steps),
        "time_step_minutes": seconds(dt) / 60.0,
        "calendar": calendar_of(out_times),
        "reassembly": o.reassembly.value,
        "tile": int(desc.grid.tile),
        "halo": int(desc.grid.halo),
        "halo_adjoint": int(o.reassembly.halo_adjoint),
        "halo_adjoint_cross_face": int(o.reassembly.cross_face),
        "halo_adjoint_window": o.halo_adjoint_window if o.reassembly.halo_adjoint else "none",
        "precision": resolve_precision(o.precision, o.device),
        "memory_format": "channels_last" if o.channels_last else "contiguous",
        "nudging": int(nudger is not None),
        "reference": str(o.reference or ""),
        "command": " ".join(sys.argv),
        "Conventions": "CF-1.8",
    }
    return attrs | (nudger.attrs() if nudger is not None else {})


def plan_rollout(o: RolloutOptions) -> RolloutPlan:
    """Check everything; raises :class:`RolloutError` (or a store's error) and writes nothing."""
    _check_options(o)
    inputs = {"initial condition": o.data, "reference": o.reference, "checkpoint": o.checkpoint}
    path = out.check_location(o.output, inputs)
    action = out.check_existing(path, o.resume, o.overwrite)
    ckpt = _load_checkpoint(o)
    desc = ckpt.description
    cfg = OmegaConf.create(desc.config)
    names = desc.variables
    prog, diag, static = list(names.prognostic), list(names.diagnostic), list(names.static)
    n = desc.grid.n
    ds = open_store(o.data, o.storage_options, prog, static, n, assume_grid=o.assume_grid)
    _check_data_levels(desc, ds, prog + diag + static, o)
    times, dt = ds["time"].values, _time_step(ds, desc, o.data)
    i0 = _start_index(times, o.start, o.data)
    out_times = np.array([times[i0] + k * dt for k in range(o.steps + 1)])  # in its calendar
    var_attrs = {v: dict(ds[v].attrs) for v in prog + diag if v in ds}
    grid = dataset_grid(ds)
    if grid.name != desc.grid.name:
        raise RolloutError(
            f"checkpoint {o.checkpoint} was trained on grid {desc.grid.name}, but the initial "
            f"condition {o.data} is on {grid.name}"
        )
    climatology = _climatology(o, prog + diag, ds, out_times, grid)
    nudger = _nudger(o, prog, dt, ds, out_times, var_attrs)
    try:
        attrs = _attrs(o, desc, ckpt.sha256, out_times, dt, nudger)
        if action == "resume":
            out.check_resume_settings(path, attrs)
        initial = None if action == "resume" else _initial_state(ds, prog, diag, i0, n, o.data)
        static_fields = _static_fields(ds, static, n, o.data)
    except BaseException:
        if nudger is not None:
            nudger.close()
        raise
    return RolloutPlan(
        o,
        ckpt,
        cfg,
        prog,
        diag,
        static,
        ds,
        grid,
        out_times,
        dt,
        nudger,
        attrs,
        var_attrs,
        path,
        action,
        initial,
        static_fields,
        {
            v: level_coordinate(ds, v)
            for v, m in grouped(prog + diag).items()
            if m[0][1] is not None
        },
        climatology,
    )


def _check_data_levels(desc: fmt.ModelDescription, ds: xr.Dataset, names, o) -> None:
    """The data's 3-D channels must be at the levels the checkpoint was trained on (a channel
    is an index: the same index in another store can be another level)."""
    if desc.levels is None:
        if any(split(v)[1] is not None for v in names):
            warnings.warn(
                f"checkpoint {o.checkpoint} is from before level values were recorded "
                "(format < 3): its channels' levels cannot be checked against the data's",
                stacklevel=3,
            )
        return
    try:
        check_levels(
            desc.levels,
            channel_levels(ds, names),
            [v for v in names if v in ds],
            f"initial condition {o.data}",
            f"checkpoint {o.checkpoint}",
        )
    except IncompatibleStoreError as err:
        raise RolloutError(str(err)) from None


def _climatology(o: RolloutOptions, variables, ds, out_times, grid) -> np.ndarray | None:
    """The time-mean maps of ``--climatology`` for the anomaly correlation, which needs the
    truth: the data store must hold every output variable at every output time."""
    if o.climatology is None:
        return None
    from screamcast.data.store import StoreError
    from screamcast.evaluate import cube_climatology

    if any(v not in ds for v in variables) or not np.isin(out_times, ds["time"].values).all():
        raise RolloutError(
            f"--climatology scores the rollout against the truth, but {o.data} does not hold "
            f"{', '.join(variables)} at every output time ({out_times[0]} to {out_times[-1]}): "
            "score the finished output with python -m screamcast.evaluate OUTPUT --truth STORE "
            "--climatology CLIM"
        )
    try:
        clim = open_store(o.climatology, o.storage_options, [], (), grid.n)
        clim = with_channels(clim, variables, f"climatology {o.climatology}")
        clim = matched_store(ds, clim, variables, f"climatology {o.climatology}")
        return cube_climatology(clim, o.climatology, variables, grid)
    except (StoreError, ChannelError) as err:  # IncompatibleStoreError is a StoreError
        raise RolloutError(str(err)) from None


def _time_step(ds: xr.Dataset, desc: fmt.ModelDescription, name: str) -> datetime.timedelta:
    """The store's step, which must be the one the checkpoint was trained at."""
    dt = time_step(ds)
    trained, step_min = desc.time_step_minutes, seconds(dt) / 60.0
    if trained is not None and abs(trained - step_min) > 1e-6:
        raise RolloutError(
            f"{name} has a {step_min:g} min time step; "
            f"the checkpoint was trained at {trained:g} min"
        )
    return dt


def _initial_state(ds, prog, diag, i0: int, n: int, name: str) -> np.ndarray:
    """``(P + D, 6, n, n)`` at time index ``i0`` (one time read; a diagnostic the store lacks
    is NaN at the start), refused if any value read is not finite."""
    at = ds.isel(time=i0)
    state = at[prog].to_array().values.astype(np.float32)  # (P, 6, n, n)
    check_finite(state, prog, f"initial condition {name} at {ds['time'].values[i0]}")
    have = [v for v in diag if v in ds]
    first = (
        dict(zip(have, at[have].to_array().values.astype(np.float32), strict=True)) if have else {}
    )
    check_finite(
        np.stack(list(first.values())) if first else np.zeros((0,)),
        have,
        f"initial condition {name} at {ds['time'].values[i0]}",
    )
    nan = np.full((6, n, n), np.nan, np.float32)
    return np.concatenate([state, np.stack([first.get(v, nan) for v in diag])]) if diag else state


def _static_fields(ds, static, n: int, name: str) -> np.ndarray:
    if not static:
        return np.zeros((0, 6, n, n), np.float32)
    fields = np.stack([ds[v].values for v in static])  # (S, 6, n, n)
    check_finite(fields, static, f"static fields of {name}")
    return fields
