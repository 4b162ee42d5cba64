# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The first phase of a rollout: check every input and decide what to write, writing nothing.

A bad run fails here, in seconds, before any file is created or deleted: checkpoint, stores,
start time, reference coverage and values, the initial condition's values, the output path
(never an input, only ever a rollout output when it exists) and a resume's settings.
"""

from __future__ import annotations

import datetime
import json
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
from screamcast.config.inference import InferenceConfig, recorded, resume_attrs
from screamcast.config.strict import ConfigError
from screamcast.data.calendar import (
    CalendarError,
    calendar_of,
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
from screamcast.data.climatology import cube_climatology
from screamcast.data.compatible import (
    IncompatibleStoreError,
    channel_levels,
    check_levels,
    matched_store,
)
from screamcast.data.credentials import redact
from screamcast.data.store import (
    StoreError,
    dataset_grid,
    describe_non_finite,
    open_store,
    time_step,
)
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout import output as out
from screamcast.rollout.nudging import Corrector, CorrectorContext, build_corrector, open_reference
from screamcast.rollout.rollout_step import effective_correctors, effective_hyperdiffusion
from screamcast.rollout.stepper import Reassembly, resolve_precision

# attrs the plan derives (not settings as given) that a resume must match; with the config's
# (screamcast.config.inference.resume_attrs) and the corrector's, the one list of them
DERIVED_RESUME_ATTRS = (
    "checkpoint_sha256",
    "start",
    "time_step_minutes",
    "halo_adjoint",
    "halo_adjoint_cross_face",
    "halo_adjoint_window",
    "nudging",
    "nudge_method",
    "precision",
    "memory_format",
    "correctors",
    "hyperdiffusion",
)


class RolloutError(ConfigError):
    """Bad input to a rollout, found before any step ran (or a state that turned non-finite).
    ``{section.key}`` placeholders name the settings concerned (:class:`ConfigError`)."""


@dataclass
class RolloutPlan:
    """Everything the execution needs, all of it checked."""

    config: InferenceConfig
    checkpoint: fmt.InferenceCheckpoint
    cfg: DictConfig
    prog: list[str]
    diag: list[str]
    static: list[str]
    ds: xr.Dataset
    grid: PhysicsGrid
    out_times: np.ndarray  # (steps + 1,) cftime, in the initial condition's calendar
    dt: datetime.timedelta
    corrector: Corrector | None
    attrs: dict
    resume_keys: tuple[str, ...]
    var_attrs: dict
    output: Path
    action: str  # create | resume | replace
    initial: np.ndarray | None  # (V, 6, n, n) prognostic + diagnostic at the start (not resume)
    static_fields: np.ndarray  # (S, 6, n, n)
    levels: dict = field(default_factory=dict)  # 3-D variables' {var: (dim, values, attrs)}
    climatology: np.ndarray | None = None  # (P + D, 6, n, n) time means, with --climatology
    start_index: int = 0  # the initial condition's time index in ``ds``

    @property
    def correctors(self) -> list[dict]:
        """The step's correctors: the config's, or those the checkpoint was trained with."""
        return json.loads(self.attrs["correctors"])

    def initial_state(self, region: tuple[slice, ...] | None = None) -> np.ndarray:
        """The state at the start, ``(P + D, 6, n, n)``, or on one rank's ``region`` (faces,
        rows, cols): ``(P + D, F, h, w)``, read and checked on that region only (a rank of a
        domain-decomposed rollout reads only its block)."""
        name = self.config.initial_condition.data
        return _initial_state(self.ds, self.prog, self.diag, self.start_index, name, region)

    def pipeline(self):
        """The checkpoint's network and pipeline, its weights loaded."""
        from screamcast.data.stats import Stats
        from screamcast.model.pipeline import build_pipeline

        pipeline = build_pipeline(self.cfg, Stats.from_dict(self.checkpoint.description.stats))
        pipeline.load_state_dict(self.checkpoint.weights)
        return pipeline

    def writer(self, path: Path | None = None, region=None, chunks: tuple | None = None):
        """The output's writer (at ``path``: default the output; ``region``: one rank's
        ``(faces, rows, cols)``, in chunks of ``chunks = (rows, cols)``)."""
        from screamcast.rollout.writer import RolloutWriter

        return RolloutWriter(
            path or self.output,
            self.prog + self.diag,
            self.var_attrs,
            self.grid,
            self.attrs,
            self.out_times,
            self.levels,
            region=region,
            chunks=chunks,
        )

    def layout(self) -> TileLayout:
        """The checkpoint's tiling of this grid."""
        g = self.checkpoint.description.grid
        return TileLayout(self.grid, g.tile, g.halo)


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
            f"{{initial_condition.start}} {start} is not a time of {data} ({times[0]} to "
            f"{times[-1]}{step}, {calendar} calendar)",
            "initial_condition.start",
        )
    return int(hit[0])


def check_finite(fields: np.ndarray, names: list[str], where: str) -> None:
    """Refuse NaN/Inf in ``fields (V, ...)``, naming the variable, the count and the first
    position (``(face, y, x)`` for cube fields)."""
    message = describe_non_finite(fields, names, where)
    if message is not None:
        raise RolloutError(message)


def _load_checkpoint(c: InferenceConfig, source: str) -> fmt.InferenceCheckpoint:
    """The checkpoint, read once (weights, description and sha256), checked against what the
    config requires of it (``source``: where that came from, for messages)."""
    path = c.checkpoint.path
    if not Path(path).exists():
        raise RolloutError(f"checkpoint {path} does not exist")
    try:
        ckpt = fmt.load_for_inference(path)
    except cio.CorruptCheckpointError as err:
        raise RolloutError(f"{{checkpoint.path}} is not usable: {err}", "checkpoint.path") from None
    expected = c.checkpoint.expected()
    if expected:
        ckpt.description.check(expected, path, source)
    return ckpt


def _corrector(c: InferenceConfig, prog: list[str], dt, ds, out_times) -> Corrector | None:
    """The nudging's corrector, its reference opened, matched and read at the first time."""
    n = c.nudging
    if not n.reference:
        return None
    defaults = [v for v in prog if v in ("u", "v", "temperature")]
    where = f"{{nudging.variables}} ({c.initial_condition.data})"
    try:  # a 3-D variable stands for all its channels, T_mid[10:] for those from level 10 on
        variables = expand(ds, n.variables, where=where) or defaults
    except ChannelError as err:
        raise RolloutError(str(err), "nudging.variables") from None
    unknown = [v for v in variables if v not in prog]
    if unknown:
        raise RolloutError(
            f"{{nudging.variables}}: {unknown} not prognostic variables of the checkpoint "
            f"({', '.join(prog)})",
            "nudging.variables",
        )
    stores = c.stores
    ref = _keyed_store_errors(
        lambda: open_reference(
            n.reference,
            variables,
            calendar_of(out_times),
            stores.storage_options,
            stores.assume_grid,
        )
    )
    try:
        ref = matched_store(ds, ref, variables, f"reference {n.reference}")
    except IncompatibleStoreError as err:
        raise RolloutError(str(err)) from None
    context = CorrectorContext(ref, n.reference, variables, prog, dt, dataset_grid(ds))
    corrector = build_corrector(n, context)
    try:
        corrector.prepare(out_times[1], out_times[-1])
    except BaseException:
        corrector.close()
        raise
    return corrector


def _keyed_store_errors(open_):
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


def _attrs(c: InferenceConfig, desc, sha256: str, out_times, dt, corrector) -> dict:
    s = c.stepper
    reassembly = Reassembly.from_flags(s.halo_adjoint, s.halo_adjoint_cross_face)
    given = recorded(c)  # checkpoint, initial_condition, steps, reference
    attrs = {
        "title": out.TITLE,
        "screamcast_version": __version__,
        "checkpoint": given["checkpoint"],
        "checkpoint_sha256": sha256,
        "initial_condition": given["initial_condition"],
        "start": str(out_times[0]),
        "steps": int(given["steps"]),
        "time_step_minutes": seconds(dt) / 60.0,
        "calendar": calendar_of(out_times),
        "reassembly": reassembly.value,
        "tile": int(desc.grid.tile),
        "halo": int(desc.grid.halo),
        "halo_adjoint": int(reassembly.halo_adjoint),
        "halo_adjoint_cross_face": int(reassembly.cross_face),
        "halo_adjoint_window": s.window if reassembly.halo_adjoint else "none",
        "precision": resolve_precision(s.precision, s.device),
        "memory_format": "channels_last" if s.channels_last else "contiguous",
        "nudging": int(corrector is not None),
        "reference": given["reference"],
        "correctors": json.dumps(effective_correctors(c, desc.config)),
        "hyperdiffusion": effective_hyperdiffusion(c, desc.config),
        "command": redact(" ".join(sys.argv), c.stores.storage_options),
        "Conventions": "CF-1.8",
    }
    if corrector is None:
        return attrs
    return attrs | {"nudge_method": c.nudging.method} | corrector.attrs()


def _resume_keys(corrector) -> tuple[str, ...]:
    own = corrector.resume_attrs if corrector is not None else ()
    return tuple(dict.fromkeys(resume_attrs() + DERIVED_RESUME_ATTRS + own))


def plan_rollout(
    c: InferenceConfig, source: str = "the expected settings", read_initial: bool = True
) -> RolloutPlan:
    """Check everything; raises :class:`RolloutError` (or a store's error) and writes nothing.
    ``source``: where the config's requirements of the checkpoint came from (messages);
    ``read_initial=False``: the initial state is left to :meth:`RolloutPlan.initial_state`
    (each rank of a domain-decomposed rollout reads its block)."""
    c.validate()
    ic, o = c.initial_condition, c.output
    inputs = {"initial condition": ic.data, "reference": c.nudging.reference}
    path = out.check_location(o.path, inputs | {"checkpoint": c.checkpoint.path})
    action = out.check_existing(path, o.resume, o.overwrite)
    ckpt = _load_checkpoint(c, source)
    desc = ckpt.description
    names = desc.variables
    prog, diag, static = list(names.prognostic), list(names.diagnostic), list(names.static)
    ds = _initial_store(c, desc, prog, static)
    _check_data_levels(desc, ds, prog + diag + static, c)
    times, dt = ds["time"].values, _time_step(ds, desc, ic.data)
    i0 = _start_index(times, ic.start, ic.data)
    grid = dataset_grid(ds)
    out.check_room(path, o.steps, len(prog + diag) * 6 * grid.n**2 * 4, action)
    out_times = np.array([times[i0] + k * dt for k in range(o.steps + 1)])  # in its calendar
    climatology = _climatology(c, prog + diag, ds, out_times, grid)
    corrector = _corrector(c, prog, dt, ds, out_times)
    try:
        attrs = _attrs(c, desc, ckpt.sha256, out_times, dt, corrector)
        keys = _resume_keys(corrector)
        if action == "resume":
            out.check_resume_settings(path, attrs, keys)
        fresh = action != "resume" and read_initial
        initial = _initial_state(ds, prog, diag, i0, ic.data) if fresh else None
        static_fields = _static_fields(ds, static, desc.grid.n, ic.data)
    except BaseException:
        if corrector is not None:
            corrector.close()
        raise
    levels = {
        v: level_coordinate(ds, v) for v, m in grouped(prog + diag).items() if m[0][1] is not None
    }
    var_attrs = {v: dict(ds[v].attrs) for v in prog + diag if v in ds}
    cfg = OmegaConf.create(desc.config)
    cfg.model.hyperdiffusion = attrs["hyperdiffusion"]  # the step's: the config's or training's
    return RolloutPlan(
        c, ckpt, cfg, prog, diag, static, ds, grid, out_times, dt, corrector, attrs, keys,
        var_attrs, path, action, initial, static_fields, levels, climatology, i0,
    )  # fmt: skip


def _initial_store(c: InferenceConfig, desc, prog, static) -> xr.Dataset:
    """The initial condition's store on the checkpoint's grid."""
    ic, stores = c.initial_condition, c.stores
    ds = _keyed_store_errors(
        lambda: open_store(
            ic.data, stores.storage_options, prog, static, desc.grid.n,
            assume_grid=stores.assume_grid,
        )
    )  # fmt: skip
    grid = dataset_grid(ds)
    if grid.name != desc.grid.name:
        raise RolloutError(
            f"checkpoint {c.checkpoint.path} was trained on grid {desc.grid.name}, but the "
            f"initial condition {ic.data} is on {grid.name}"
        )
    return ds


def _check_data_levels(desc: fmt.ModelDescription, ds: xr.Dataset, names, c) -> None:
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


def _climatology(c: InferenceConfig, variables, ds, out_times, grid) -> np.ndarray | None:
    """The time-mean maps of the climatology store for the anomaly correlation, which needs
    the truth: the data store must hold every output variable at every output time."""
    name, data = c.scoring.climatology, c.initial_condition.data
    if name is None:
        return None
    if any(v not in ds for v in variables) or not np.isin(out_times, ds["time"].values).all():
        raise RolloutError(
            f"{{scoring.climatology}} scores the rollout against the truth, but {data} does not "
            f"hold {', '.join(variables)} at every output time ({out_times[0]} to "
            f"{out_times[-1]}): score the finished output with screamcast-evaluate OUTPUT "
            "--truth STORE --climatology CLIM",
            "scoring.climatology",
        )
    try:
        clim = open_store(name, c.stores.storage_options, [], (), grid.n)
        clim = with_channels(clim, variables, f"climatology {name}")
        clim = matched_store(ds, clim, variables, f"climatology {name}")
        return cube_climatology(clim, name, variables, grid)
    except (StoreError, ChannelError) as err:  # IncompatibleStoreError is a StoreError
        raise RolloutError(str(err)) from None


def _time_step(ds: xr.Dataset, desc: fmt.ModelDescription, name: str) -> datetime.timedelta:
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


def _initial_state(ds, prog, diag, i0: int, name: str, region=None) -> np.ndarray:
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


def _static_fields(ds, static, n: int, name: str) -> np.ndarray:
    if not static:
        return np.zeros((0, 6, n, n), np.float32)
    fields = np.stack([ds[v].values for v in static])  # (S, 6, n, n)
    check_finite(fields, static, f"static fields of {name}")
    return fields
