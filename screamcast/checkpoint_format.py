# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a checkpoint holds: a typed, versioned description, its migrations, one check.

The file stays plain data (tensors, numbers, strings, lists, dicts), so it loads with
``torch.load(weights_only=True)``; :class:`ModelDescription` is the typed view of everything
inference needs besides the weights. Every format change bumps :data:`FORMAT_VERSION` and adds
a migration from the previous version, so a checkpoint written by any earlier screamcast keeps
loading (``tests/data/checkpoints/`` holds one of each format). How it is written to disk
without ever being lost: :mod:`screamcast.checkpoint_io`.

Format 0 (up to commit 9925a93): ``config``, ``stats``, ``variables``, ``grid``,
``time_step_minutes`` and ``screamcast_version`` at the top level, no version.
Format 1: those gathered under ``description`` (plus ``calendar``), and ``format_version``.
Format 2: ``grid.name``, E3SM's physics grid (``ne24pg2``). Format 0 and 1 checkpoints were
trained on the equiangular cube of face size ``n``; they migrate to ``ne<n/2>pg2``, the grid
that approximates (cell centres within 2% of a cell at n = 48).
Format 3: ``levels``, each 3-D channel's level (its store's coordinate value and, for layers,
the interface indices that bound it), checked against every store the model meets. Older
checkpoints migrate with ``levels`` None: unknown, not checked.
Format 4: ``network``, the model-only config inference builds from (the architecture, its
inputs, the outputs' rules, the step's correctors: :func:`network_of`); the training config
stays as ``config``, for the record, and inference no longer reads it. Older checkpoints
migrate with ``network`` taken from their training config.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from screamcast import checkpoint_io as cio

FORMAT_VERSION = 4


class IncompatibleCheckpointError(ValueError):
    """A checkpoint that cannot be used here: another format, variables, grid or model."""


@dataclass(frozen=True)
class Variables:
    prognostic: tuple[str, ...]
    diagnostic: tuple[str, ...]
    static: tuple[str, ...]


@dataclass(frozen=True)
class GridSpec:
    """The grid (E3SM physics grid name, face size) and the tiling the network was trained
    with."""

    n: int
    tile: int
    halo: int
    name: str


@dataclass(frozen=True)
class ModelDescription:
    """Everything inference needs besides the weights."""

    variables: Variables
    grid: GridSpec
    config: dict = field(hash=False)  # the resolved training config, for the record only
    stats: dict = field(hash=False)  # normalisation statistics (Stats.to_dict())
    time_step_minutes: float | None = None
    calendar: str = "proleptic_gregorian"
    screamcast_version: str = "unknown"
    # {channel: {"dim", "value"[, "bounds"]}} of the 3-D channels (None: from before format 3)
    levels: dict | None = field(default=None, hash=False)
    # what inference builds the model from (:func:`network_of`; migrated for older formats)
    network: dict | None = field(default=None, hash=False)

    def __post_init__(self):
        if self.network is None:  # described in code from a training config
            object.__setattr__(self, "network", network_of(self.config))

    @property
    def model(self) -> dict:
        """The architecture (width, levels, blocks, upsample, hyperdiffusion)."""
        return dict(self.network["model"])

    @property
    def inputs(self) -> dict:
        """What the network takes besides the variables: ``solar_time``, ``grid_metric``,
        ``insolation``, ``input_times`` (2: the state one step earlier too)."""
        return dict(self.network["inputs"])

    @property
    def correctors(self) -> list[dict]:
        """The step's correctors training applied (``{type, config}`` each)."""
        return [dict(entry) for entry in self.network["correctors"]]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["variables"] = {k: list(v) for k, v in d["variables"].items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelDescription:
        v = d["variables"]
        return cls(
            variables=Variables(*(tuple(v[k]) for k in ("prognostic", "diagnostic", "static"))),
            grid=GridSpec(
                *(int(d["grid"][k]) for k in ("n", "tile", "halo")), str(d["grid"]["name"])
            ),
            config=dict(d["config"]),
            stats=dict(d["stats"]),
            time_step_minutes=d.get("time_step_minutes"),
            calendar=d.get("calendar", "proleptic_gregorian"),
            screamcast_version=d.get("screamcast_version", "unknown"),
            levels=None if d.get("levels") is None else dict(d["levels"]),
            network=d.get("network"),
        )

    def check(self, want: Mapping[str, Mapping[str, Any]], source: str, what: str) -> None:
        """Refuse when a value differs from ``want`` (``{"model": {...}, "grid": {...},
        "variables": {...}}``), naming the first key that differs, the checkpoint ``source``
        and the ``what`` it is compared with."""
        have = {
            "model": self.model,
            "inputs": self.inputs,
            "grid": asdict(self.grid),
            "variables": {k: list(v) for k, v in asdict(self.variables).items()},
        }
        for section, values in want.items():
            for key, value in values.items():
                mine = have[section][key]
                if (list(mine) if isinstance(mine, (list, tuple)) else mine) != (
                    list(value) if isinstance(value, (list, tuple)) else value
                ):
                    raise IncompatibleCheckpointError(
                        f"checkpoint {source} has {section}.{key}={mine}, but {what} has {value}"
                    )


def _from_format0(raw: dict) -> dict:
    keys = ("config", "stats", "variables", "grid", "time_step_minutes", "screamcast_version")
    old = {k: raw.pop(k) for k in keys if k in raw}
    old["grid"] = {k: old["grid"][k] for k in ("n", "tile", "halo")}
    old["grid"]["name"] = _approximating_grid(old["grid"]["n"])
    raw["description"] = ModelDescription.from_dict(old).to_dict()
    raw["format_version"] = 1
    return raw


def _approximating_grid(n: int) -> str:
    return f"ne{n // 2}pg2" if n % 2 == 0 else f"ne{n}pg1"


def _from_format1(raw: dict) -> dict:
    grid = raw["description"]["grid"]
    grid.setdefault("name", _approximating_grid(int(grid["n"])))
    raw["format_version"] = 2
    return raw


def _from_format2(raw: dict) -> dict:
    raw["description"]["levels"] = None  # not recorded: unknown
    raw["format_version"] = 3
    return raw


def _from_format3(raw: dict) -> dict:
    raw["description"]["network"] = network_of(raw["description"]["config"])
    raw["format_version"] = 4
    return raw


MIGRATIONS: dict[int, Callable[[dict], dict]] = {
    0: _from_format0,
    1: _from_format1,
    2: _from_format2,
    3: _from_format3,
}

# the model-only config: ``network``'s sections and the training config's keys they hold
NETWORK = {
    "model": ("model", ("width", "levels", "blocks", "upsample", "hyperdiffusion")),
    "inputs": ("data", ("solar_time", "grid_metric", "insolation", "input_times")),
    "pipeline": ("pipeline", ("do_precip_relu", "precip_name")),
}


def network_of(config: Mapping) -> dict:
    """The model-only config of a resolved training config (a plain mapping, as the
    checkpoint holds it; the settings it predates filled in first)."""
    config = {k: dict(v) if isinstance(v, Mapping) else v for k, v in config.items()}
    for section, defaults in ARCHITECTURE_DEFAULTS.items():
        config[section] = defaults | config.get(section, {})
    out = {name: {k: config[part][k] for k in keys} for name, (part, keys) in NETWORK.items()}
    out["correctors"] = [dict(entry) for entry in config.get("correctors") or []]
    return out


# Model settings added after checkpoints existed, and what a checkpoint without them was
# trained with: filled in here, the one place old checkpoints are handled (not by the model).
ARCHITECTURE_DEFAULTS = {
    "data": {"solar_time": False, "grid_metric": False, "insolation": True, "input_times": 1},
    "model": {"upsample": "nearest", "hyperdiffusion": 0.0},
    "pipeline": {"do_precip_relu": False, "precip_name": "precip"},
}


def _architecture_defaults(raw: dict) -> dict:
    """The settings a checkpoint predates filled into its training config and into its
    model-only config (a format-4 checkpoint's ``network`` written before them)."""
    description = raw.get("description", {})
    config = description.get("config")
    if isinstance(config, dict):
        for section, defaults in ARCHITECTURE_DEFAULTS.items():
            if isinstance(config.get(section), dict):
                for key, value in defaults.items():
                    config[section].setdefault(key, value)
    network = description.get("network")
    if isinstance(network, dict):
        for name, (part, keys) in NETWORK.items():
            if isinstance(network.get(name), dict):
                for key in set(keys) & set(ARCHITECTURE_DEFAULTS[part]):
                    network[name].setdefault(key, ARCHITECTURE_DEFAULTS[part][key])
    return raw


def migrate(raw: dict, source: str = "checkpoint") -> dict:
    """``raw`` (as loaded) brought to :data:`FORMAT_VERSION`, one migration at a time, with
    the settings it predates filled in (:data:`ARCHITECTURE_DEFAULTS`)."""
    version = int(raw.get("format_version", 0))
    if version > FORMAT_VERSION:
        raise IncompatibleCheckpointError(
            f"{source} has checkpoint format {version}, written by a newer screamcast "
            f"({raw.get('description', {}).get('screamcast_version', '?')}); this one "
            f"reads formats up to {FORMAT_VERSION}: upgrade screamcast"
        )
    while version < FORMAT_VERSION:
        raw = MIGRATIONS[version](raw)
        version = raw["format_version"]
    return _architecture_defaults(raw)


def load(path: str | os.PathLike, map_location: Any = "cpu") -> dict:
    """The whole checkpoint (weights, optimizer, counters, description), verified (CRC) and
    migrated to the current format; for resuming training."""
    return migrate(cio.load_checkpoint(path, map_location), str(path))


@dataclass(frozen=True)
class InferenceCheckpoint:
    description: ModelDescription
    weights: dict[str, torch.Tensor] = field(hash=False)
    sha256: str = ""  # of the file's bytes: outputs record which checkpoint made them


def load_for_inference(path: str | os.PathLike) -> InferenceCheckpoint:
    """The description, weights and sha256 of a checkpoint, reading the file once."""
    raw, sha256 = cio.read_verified(path)
    raw = migrate(raw, str(path))
    return InferenceCheckpoint(ModelDescription.from_dict(raw["description"]), raw["model"], sha256)


def pack(description: ModelDescription, **state: Any) -> dict:
    """A checkpoint in the current format: ``state`` (model, optimizer, scheduler, counters,
    rng: modules and optimizers become state dicts when saved) plus the description."""
    return state | {"description": description.to_dict(), "format_version": FORMAT_VERSION}
