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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast import __version__
from screamcast import checkpoint_format as fmt
from screamcast import checkpoint_io as cio
from screamcast.config.inference import InferenceConfig, recorded, resume_attrs
from screamcast.data.calendar import (
    calendar_of,
    seconds,
)
from screamcast.data.channels import (
    ChannelError,
    expand,
    grouped,
    level_coordinate,
    with_channels,
)
from screamcast.data.climatology import cube_climatology
from screamcast.data.compatible import (
    IncompatibleStoreError,
    matched_store,
)
from screamcast.data.credentials import redact
from screamcast.data.store import (
    StoreError,
    dataset_grid,
    open_store,
)
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout import output as out
from screamcast.rollout.errors import RolloutError
from screamcast.rollout.inference_settings import concrete
from screamcast.rollout.initial_condition import (
    check_data_levels,
    checked_time_step,
    first_time,
    initial_state,
    initial_store,
    keyed_store_errors,
)
from screamcast.rollout.initial_condition import static_fields as read_static_fields
from screamcast.rollout.nudging import (
    Corrector,
    CorrectorContext,
    build_corrector,
    method_settings,
    open_reference,
)
from screamcast.rollout.nudging.default_variables import NoDefaultNudgingError, default_nudged
from screamcast.rollout.rollout_step import effective_correctors, effective_hyperdiffusion
from screamcast.rollout.stepper import Reassembly, resolve_precision

# attrs the plan derives (not settings as given) that a resume must match; with the config's
# (screamcast.config.inference.resume_attrs) and the corrector's, the one list of them
DERIVED_RESUME_ATTRS = (
    "checkpoint_sha256",
    "start",
    "time_step_minutes",
    "tile",
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


@dataclass(kw_only=True)
class RolloutPlan:
    """The rollout's settings, every one of them checked: what to run and write (the open
    stores and what was read from them are :class:`RolloutInputs`)."""

    config: InferenceConfig
    checkpoint: fmt.InferenceCheckpoint
    prog: list[str]
    diag: list[str]
    static: list[str]
    grid: PhysicsGrid
    out_times: np.ndarray  # (steps + 1,) cftime, in the initial condition's calendar
    dt: datetime.timedelta
    attrs: dict
    resume_keys: tuple[str, ...]
    var_attrs: dict
    output: Path
    action: str  # create | resume | replace
    levels: dict = field(default_factory=dict)  # 3-D variables' {var: (dim, values, attrs)}
    start_index: int = 0  # the initial condition's time index in its store

    @property
    def input_times(self) -> int:
        """1, or 2 for a network that also takes the state one step earlier."""
        return int(self.checkpoint.description.inputs.get("input_times", 1))

    @property
    def correctors(self) -> list[dict]:
        """The step's correctors: the config's, or those the checkpoint was trained with."""
        return json.loads(self.attrs["correctors"])

    def pipeline(self):
        """The checkpoint's network and pipeline, its weights loaded."""
        from screamcast.data.stats import Stats
        from screamcast.model.pipeline import pipeline_of

        desc = self.checkpoint.description
        hyperdiffusion = self.attrs["hyperdiffusion"]  # the step's: the config's or training's
        pipeline = pipeline_of(desc, Stats.from_dict(desc.stats), hyperdiffusion)
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
        """The tiling of this grid: the checkpoint's halo, the planned ``stepper.tile``."""
        g = self.checkpoint.description.grid
        return TileLayout(self.grid, self.config.stepper.tile, g.halo)


@dataclass
class RolloutInputs:
    """What planning opened and read to check the rollout, handed on to run it: the
    initial-condition store (the truth, where it holds the output times), the nudging's
    corrector (its reference open), and the arrays read from them."""

    data: xr.Dataset  # the initial-condition store
    corrector: Corrector | None
    static_fields: np.ndarray  # (S, 6, n, n)
    initial: np.ndarray | None  # (V, 6, n, n) prognostic + diagnostic at the start (not resume)
    climatology: np.ndarray | None = None  # (P + D, 6, n, n) time means, with --climatology

    def initial_state(self, plan: RolloutPlan, region: tuple[slice, ...] | None = None):
        """The state at ``plan``'s start, ``(P + D, 6, n, n)``, or on one rank's ``region``
        (faces, rows, cols): ``(P + D, F, h, w)``, read and checked on that region only (a
        rank of a domain-decomposed rollout reads only its block)."""
        name = plan.config.initial_condition.data
        i0 = plan.start_index
        return initial_state(self.data, plan.prog, plan.diag, i0, name, region)

    def previous_state(self, plan: RolloutPlan, region: tuple[slice, ...] | None = None):
        """The prognostic state one step before the start (a network of two input times),
        ``(P, 6, n, n)`` or ``(P, F, h, w)`` on ``region``, read and checked as the start's."""
        name = plan.config.initial_condition.data
        return initial_state(self.data, plan.prog, [], plan.start_index - 1, name, region)

    def close(self) -> None:
        """Close the nudging's reference (the stores are read lazily, nothing to close)."""
        if self.corrector is not None:
            self.corrector.close()


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
    where = f"{{nudging.variables}} ({c.initial_condition.data})"
    try:  # a 3-D variable stands for all its channels, T_mid[10:] for those from level 10 on
        variables = expand(ds, n.variables, where=where) or default_nudged(prog)
    except (ChannelError, NoDefaultNudgingError) as err:
        raise RolloutError(str(err), "nudging.variables") from None
    unknown = [v for v in variables if v not in prog]
    if unknown:
        raise RolloutError(
            f"{{nudging.variables}}: {unknown} not prognostic variables of the checkpoint "
            f"({', '.join(prog)})",
            "nudging.variables",
        )
    stores = c.stores
    ref = keyed_store_errors(
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
        "tile": int(s.tile),  # concrete once planned (inference_settings.concrete)
        "halo": int(desc.grid.halo),
        "input_times": int(desc.inputs.get("input_times", 1)),  # 2: it also reads t - dt
        "halo_adjoint": int(reassembly.halo_adjoint),
        "halo_adjoint_cross_face": int(reassembly.cross_face),
        "halo_adjoint_window": s.window if reassembly.halo_adjoint else "none",
        "precision": resolve_precision(s.precision, s.device),
        "memory_format": "channels_last" if s.channels_last else "contiguous",
        "nudging": int(corrector is not None),
        "reference": given["reference"],
        "correctors": json.dumps(effective_correctors(c, desc)),
        "hyperdiffusion": effective_hyperdiffusion(c, desc),
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
    c: InferenceConfig,
    source: str = "the expected settings",
    read_initial: bool = True,
    world: int = 1,
) -> tuple[RolloutPlan, RolloutInputs]:
    """Check everything; raises :class:`RolloutError` (or a store's error) and writes nothing.
    Returns the settings and the inputs they were checked on (the caller closes the inputs).
    ``source``: where the config's requirements of the checkpoint came from (messages);
    ``read_initial=False``: the initial state is left to :meth:`RolloutInputs.initial_state`
    (each rank of a domain-decomposed rollout reads its block); ``world``: the ranks it runs
    on (the automatic tile gives each the same tiles). ``plan.config`` is ``c`` with the
    stepper's tile and precision concrete (:mod:`screamcast.rollout.inference_settings`)."""
    c.validate()
    method_settings(c.nudging)  # the method's own settings, nudged or not: before any read
    ic, o = c.initial_condition, c.output
    inputs = {"initial condition": ic.data, "reference": c.nudging.reference}
    path = out.check_location(o.path, inputs | {"checkpoint": c.checkpoint.path})
    action = out.check_existing(path, o.resume, o.overwrite)
    ckpt = _load_checkpoint(c, source)
    desc = ckpt.description
    names = desc.variables
    prog, diag, static = list(names.prognostic), list(names.diagnostic), list(names.static)
    ds = initial_store(c, desc, prog, static)
    check_data_levels(desc, ds, prog + diag + static, c)
    times, dt = ds["time"].values, checked_time_step(ds, desc, ic.data)
    i0 = first_time(times, dt, ic, desc)
    grid = dataset_grid(ds)
    resumed = out.read_attrs(path) if action == "resume" else None
    c = concrete(c, desc, grid.n, world, resumed)  # the tile and precision the run takes
    out.check_room(path, o.steps, len(prog + diag) * 6 * grid.n**2 * 4, action)
    out_times = np.array([times[i0] + k * dt for k in range(o.steps + 1)])  # in its calendar
    climatology = _climatology(c, prog + diag, ds, out_times, grid)
    corrector = _corrector(c, prog, dt, ds, out_times)
    with _closed_on_error(corrector):
        attrs = _attrs(c, desc, ckpt.sha256, out_times, dt, corrector)
        keys = _resume_keys(corrector)
        if action == "resume":
            out.check_resume_settings(path, attrs, keys)
        fresh = action != "resume" and read_initial
        initial = initial_state(ds, prog, diag, i0, ic.data) if fresh else None
        static_fields = read_static_fields(ds, static, desc.grid.n, ic.data)
    plan = RolloutPlan(
        config=c,
        checkpoint=ckpt,
        prog=prog,
        diag=diag,
        static=static,
        grid=grid,
        out_times=out_times,
        dt=dt,
        attrs=attrs,
        resume_keys=keys,
        var_attrs={v: dict(ds[v].attrs) for v in prog + diag if v in ds},
        output=path,
        action=action,
        levels=_levels(ds, prog + diag),
        start_index=i0,
    )
    return plan, RolloutInputs(ds, corrector, static_fields, initial, climatology)


@contextmanager
def _closed_on_error(corrector: Corrector | None):
    """Close the nudging's reference (its open store) when planning fails after opening it."""
    try:
        yield
    except BaseException:
        if corrector is not None:
            corrector.close()
        raise


def _levels(ds: xr.Dataset, names: list[str]) -> dict:
    """The 3-D variables' level coordinates ``{var: (dim, values, attrs)}``."""
    return {v: level_coordinate(ds, v) for v, m in grouped(names).items() if m[0][1] is not None}


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
