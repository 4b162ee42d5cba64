# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's settings: one typed tree, loaded strictly from YAML and ``key=value``.

A production config (``configs/production/*.yaml``) is a YAML file of this schema; the
command line's flags map onto its keys in one table (:mod:`screamcast.cli.rollout_flags`).
Fields whose value is recorded in the output carry the attr's name (``attr``) and whether a
resume must match it (``resume``): :func:`recorded` and :func:`resume_attrs` read them, so the
output's attrs and the resume check come from this one list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path

from screamcast.config import strict
from screamcast.config.choices import GUARD_ACTIONS, MAX_HYPERDIFFUSION, PRECISIONS, WINDOWS
from screamcast.config.strict import ConfigError


def check_stepper_values(batch_size: int, precision: str, window: str) -> None:
    """The predictor's settings (the one check: the config's validation and every
    ``GlobalStepper``, screamcast/rollout/stepper.py, call it); errors name the key."""
    if isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigError(
            f"{{stepper.batch_size}} must be >= 1 (tiles per forward pass), got {batch_size}",
            "stepper.batch_size",
        )
    _choice("stepper.precision", precision, PRECISIONS)
    _choice("stepper.halo_adjoint_window", window, WINDOWS)


def check_reassembly_flags(halo_adjoint: bool, cross_face: bool) -> None:
    """The cross-face halo adjoint adds to the halo adjoint (``Reassembly.from_flags`` and the
    config's validation call this one rule)."""
    if cross_face and not halo_adjoint:
        raise ConfigError(
            "{stepper.halo_adjoint_cross_face} requires {stepper.halo_adjoint}",
            "stepper.halo_adjoint_cross_face",
            "stepper.halo_adjoint",
        )


def _recorded(default, attr: str, resume: bool = True, **kw):
    """A field whose value the output records as the attr ``attr``."""
    meta = {"attr": attr, "resume": resume}
    if callable(default):
        return field(default_factory=default, metadata=meta, **kw)
    return field(default=default, metadata=meta, **kw)


@dataclass
class ExpectedModel:
    """What the checkpoint's network must be (None: not checked)."""

    width: int | None = None
    levels: int | None = None
    blocks: int | None = None
    upsample: str | None = None


@dataclass
class ExpectedInputs:
    solar_time: bool | None = None
    grid_metric: bool | None = None


@dataclass
class ExpectedGrid:
    n: int | None = None
    tile: int | None = None
    halo: int | None = None
    name: str | None = None


@dataclass
class CheckpointSection:
    """The model: a training checkpoint, and what a production config requires it to be."""

    path: str | None = _recorded(None, "checkpoint", resume=False)
    model: ExpectedModel = field(default_factory=ExpectedModel)
    inputs: ExpectedInputs = field(default_factory=ExpectedInputs)
    grid: ExpectedGrid = field(default_factory=ExpectedGrid)

    def expected(self) -> dict:
        """``{section: {key: value}}`` of the requirements set (for the checkpoint's check)."""
        out = {}
        for name in ("model", "inputs", "grid"):
            section = getattr(self, name)
            values = {f.name: getattr(section, f.name) for f in fields(section)}
            values = {k: v for k, v in values.items() if v is not None}
            if values:
                out[name] = values
        return out


@dataclass
class InitialConditionSection:
    data: str | None = _recorded(None, "initial_condition")
    start: str | None = None  # e.g. 2020-01-13T00:00; None: the store's first time


@dataclass
class StoresSection:
    """How every input store is opened."""

    assume_grid: bool = False  # accept stores without lat/lon as on the checkpoint's grid
    storage_options: dict = field(default_factory=dict)  # s3fs's, for s3:// stores


@dataclass
class StepperSection:
    """How a step's tiles are predicted and reassembled: the one stepper config (the
    rollout's steppers take it, with the device they run on)."""

    halo_adjoint: bool = False  # overlap-add the tiles' halo predictions inside each face
    halo_adjoint_cross_face: bool = False  # ... and across face edges (needs halo_adjoint)
    halo_adjoint_window: str | None = None  # the overlap-add's tile window (None: cosine)
    batch_size: int = 16  # tiles per forward pass
    # the inference tiles' side in pixels (null: the largest whose window is at most 512
    # pixels and that gives every rank the same tiles, a resume its output's:
    # screamcast/rollout/inference_settings.py); the network is fully convolutional, and
    # larger tiles compute fewer halo pixels per kept pixel
    tile: int | None = None
    # torch's CPU threads; 0: OMP_NUM_THREADS if set, else the cores other processes leave idle
    threads: int = 0
    device: str = "cpu"
    # the network's: auto (bf16 on CUDA and on CPUs with AMX-BF16), bf16 or fp32
    precision: str = "auto"
    channels_last: bool = True  # the network's convolutions in NHWC
    # several ranks: run the interior tiles' forwards while the halo exchange is in flight
    overlap_exchange: bool = True
    # the step's correctors ({type, config} each: screamcast/step/correctors.py); null: the
    # checkpoint's (what training applied), [] for none
    correctors: list[dict] | None = None
    # the predicted state's grid-scale dissipation (screamcast/model/hyperdiffusion.py); null:
    # the checkpoint's model.hyperdiffusion (what training applied)
    hyperdiffusion: float | None = None
    # several ranks: how long a rank waits for the others at an exchange before it stops
    timeout_minutes: float = 10.0

    @property
    def window(self) -> str:
        """The overlap-add's tile window: cosine unless set (it beat uniform at every lead of
        the demo's rollouts)."""
        return self.halo_adjoint_window or "cosine"


@dataclass
class NudgingSection:
    """A correction applied after every step (``method``: a registered corrector, its typed
    settings checked by screamcast/rollout/nudging/registry.py ``method_settings`` when the
    rollout is planned: not by :meth:`InferenceConfig.validate`, below the registry)."""

    method: str = "relaxation"
    reference: str | None = _recorded(None, "reference")
    tau_hours: float = 6.0
    increment: str = "bicubic"
    time: str = "cubic"  # the reference between its samples: cubic or linear
    variables: list[str] = field(default_factory=list)  # default: the winds and temperature
    partial_reference: str = "nudge"  # a regional reference: nudge inside it, or refuse
    # a plug-in method's own settings (its registered dataclass's keys); the keys above that
    # are not every method's (tau_hours, increment, time, partial_reference) are the built-in
    # relaxation's, and a method that declares them reads them too
    config: dict = field(default_factory=dict)


@dataclass
class GuardSection:
    """The stop for a run that leaves physics (screamcast/rollout/guard.py): every step, each
    channel's global mean, spread and extremes against the checkpoint's training statistics."""

    action: str = "stop"  # stop, warn (once per channel and test) or off (non-finite stops)
    mean_sigmas: float = 1.0  # |global mean - training mean| <= this x training std
    spread_factor: float = 2.0  # spread (the std over the globe) <= this x training std
    extreme_margin: float = 0.5  # every value within the training range +- this x its width
    extreme_sigmas: float = 10.0  # statistics without extremes: |value - mean| <= this x std


@dataclass
class OutputSection:
    path: str | None = None
    steps: int = _recorded(24, "steps")
    resume: bool = False
    overwrite: bool = False
    progress: bool = True


@dataclass
class ScoringSection:
    climatology: str | None = None  # a store whose time mean the anomaly correlation uses
    # more aggregators against the truth, registered by name (screamcast.evaluation.registry)
    metrics: list[str] = field(default_factory=list)


@dataclass
class InferenceConfig:
    checkpoint: CheckpointSection = field(default_factory=CheckpointSection)
    initial_condition: InitialConditionSection = field(default_factory=InitialConditionSection)
    stores: StoresSection = field(default_factory=StoresSection)
    stepper: StepperSection = field(default_factory=StepperSection)
    nudging: NudgingSection = field(default_factory=NudgingSection)
    guard: GuardSection = field(default_factory=GuardSection)
    output: OutputSection = field(default_factory=OutputSection)
    scoring: ScoringSection = field(default_factory=ScoringSection)

    @classmethod
    def load(cls, path: str | Path | None = None, overrides=()) -> tuple[InferenceConfig, dict]:
        """From a YAML file and ``key=value`` overrides; also where each set key came from."""
        return strict.load(cls, path, overrides)

    @classmethod
    def from_keys(cls, settings: dict) -> InferenceConfig:
        """From ``{"section.key": value}`` (library callers: benchmarks, studies)."""
        config = cls()
        for key, value in settings.items():
            config.set(key, value)
        return config

    def set(self, key: str, value) -> None:
        """Set ``section.key`` (a flag's value), checked against the field's type."""
        section = key.partition(".")[0]
        doc = strict.to_dict(self)
        strict.set_key(doc, key, value)
        fresh = strict.from_dict(type(self), doc, "the command line")
        setattr(self, section, getattr(fresh, section))

    def check_reassembly(self) -> None:
        """The window needs the halo adjoint (the crop overlaps nothing); the cross-face flag's
        rule is :func:`check_reassembly_flags`."""
        s = self.stepper
        check_reassembly_flags(s.halo_adjoint, s.halo_adjoint_cross_face)
        if s.halo_adjoint_window and not s.halo_adjoint:
            raise ConfigError(
                "{stepper.halo_adjoint_window} requires {stepper.halo_adjoint}",
                "stepper.halo_adjoint_window",
                "stepper.halo_adjoint",
            )

    def validate(self) -> None:
        """Every rule on and between values; errors name the keys (:class:`ConfigError`)."""
        s, n, o = self.stepper, self.nudging, self.output
        self.check_reassembly()
        _choice("guard.action", self.guard.action, GUARD_ACTIONS)
        for key in ("mean_sigmas", "spread_factor", "extreme_margin", "extreme_sigmas"):
            if not getattr(self.guard, key) > 0:
                raise ConfigError(f"{{guard.{key}}} must be positive", f"guard.{key}")

        if o.steps < 1:
            raise ConfigError(f"{{output.steps}} must be >= 1, got {o.steps}", "output.steps")
        check_stepper_values(s.batch_size, s.precision, s.window)
        if s.tile is not None and (isinstance(s.tile, bool) or s.tile < 1):
            raise ConfigError(
                f"{{stepper.tile}} must be >= 1 (pixels a side; null: automatic), got {s.tile}",
                "stepper.tile",
            )
        if s.threads < 0:
            raise ConfigError(
                f"{{stepper.threads}} must be >= 0 (0: the idle cores), got {s.threads}",
                "stepper.threads",
            )
        nu = s.hyperdiffusion
        if nu is not None and (isinstance(nu, bool) or not 0 <= nu <= MAX_HYPERDIFFUSION):
            raise ConfigError(
                f"{{stepper.hyperdiffusion}} must be in [0, 1/64] (null: the checkpoint's), "
                f"got {nu!r}",
                "stepper.hyperdiffusion",
            )
        if not s.timeout_minutes > 0:
            raise ConfigError(
                f"{{stepper.timeout_minutes}} must be positive, got {s.timeout_minutes}",
                "stepper.timeout_minutes",
            )
        if n.variables and not n.reference:
            raise ConfigError(
                "{nudging.variables} needs {nudging.reference}",
                "nudging.variables",
                "nudging.reference",
            )
        if o.resume and o.overwrite:
            raise ConfigError(
                "{output.resume} and {output.overwrite} exclude each other: choose one",
                "output.resume",
                "output.overwrite",
            )
        for key in ("checkpoint.path", "initial_condition.data", "output.path"):
            section, _, name = key.partition(".")
            if getattr(getattr(self, section), name) is None:
                raise ConfigError("{" + key + "} is required", key)


def _choice(key: str, value, choices) -> None:
    if value not in choices:
        raise ConfigError(f"{{{key}}} must be one of {', '.join(choices)}, got {value!r}", key)


def recorded(config: InferenceConfig) -> dict:
    """``{attr: value}`` of the fields the output records."""
    out = {}
    for section in fields(config):
        value = getattr(config, section.name)
        for f in fields(value) if is_dataclass(value) else ():
            if "attr" in f.metadata:
                v = getattr(value, f.name)
                out[f.metadata["attr"]] = "" if v is None else (str(v) if isinstance(v, str) else v)
    return out


def resume_attrs() -> tuple[str, ...]:
    """The attrs of config fields that a resume must match."""
    out = []
    for section in fields(InferenceConfig):
        for f in fields(section.default_factory()):
            if f.metadata.get("resume"):
                out.append(f.metadata["attr"])
    return tuple(out)
