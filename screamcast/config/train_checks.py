# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training-config mistakes found before anything is imported, opened or built: a misspelt
key or group option on the command line, and the settings that need no store (crop, tile,
halo, face size, time ranges), each named by its key.

A user's first tries of a stage on their own store failed one key at a time, each after
30-60 s of imports and store reads; these checks answer in a second.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

from screamcast.config.training import DataConfig, TrainConfig

GROUPS = ("data", "model", "pipeline", "optim", "scheduler", "experiment")


class TrainConfigError(ValueError):
    """A training setting refused before the run started; the message names the key."""


def check_overrides(overrides: list[str], configs: Path) -> None:
    """Refuse an override whose key the schema lacks (with or without ``+``/``++``), or a
    group option with no file in ``configs/<group>/``, listing the valid ones."""
    for override in overrides:
        key, eq, value = override.lstrip("+~").partition("=")
        if not eq or key.startswith("hydra.") or key.startswith("hydra/"):
            continue
        if key in GROUPS:
            _check_option(key, value, configs)
            continue
        _check_key(key)


def _check_option(group: str, option: str, configs: Path) -> None:
    options = sorted(p.stem for p in (configs / group).glob("*.yaml"))
    if option not in options and option != "null":
        raise TrainConfigError(
            f"{group}={option}: no such option (configs/{group}/ has: {', '.join(options)})"
        )


def _check_key(key: str) -> None:
    """Walk ``key``'s dotted parts through the schema's dataclasses; a dict or untyped field
    takes any key below it."""
    node: type = TrainConfig
    parts = key.split(".")
    for i, part in enumerate(parts):
        fields = {f.name: f for f in dataclasses.fields(node)}
        if part not in fields:
            section = ".".join(parts[:i])
            where = f" of {section}" if section else ""
            raise TrainConfigError(
                f"unknown key '{key}' (known keys{where}: {', '.join(sorted(fields))})"
            )
        hint = typing.get_type_hints(node)[part]
        if not dataclasses.is_dataclass(hint):
            return
        node = hint


def check_settings(cfg) -> None:
    """The settings that need no store: crop, tile and halo against each other and the face
    size, the time ranges' form, the step counts (those still null are checked once they are
    taken from the store)."""
    d = cfg.data
    if d.prognostic is None and d.url == DataConfig.url:  # data=store's url: ??? keeps the
        raise TrainConfigError(  # schema's demo path (Hydra merges a missing value as none)
            "data=store takes your store: give data.url=<the ingested store>"
        )
    for key, value, low in (
        ("data.tile", d.tile, 1),
        ("data.halo", d.halo, 0),
        ("data.crop", d.crop, 1),
        ("data.n", d.n, 1),
        ("steps", cfg.steps, 1),
        ("rollout_steps", cfg.rollout_steps, 1),
    ):
        if value is not None and value < low:
            raise TrainConfigError(f"{key}={value}: must be >= {low}")
    if None not in (d.n, d.tile, d.halo, d.crop):  # null: taken from the store first
        _check_face(d.n, d.tile, d.halo, d.crop)
    step = 2 ** int(cfg.model.levels)
    if d.crop is not None and d.crop % step:
        raise TrainConfigError(
            f"data.crop={d.crop} must be divisible by 2**model.levels = {step} (the network "
            "halves it model.levels times)"
        )
    for key in ("train_range", "valid_range"):
        if getattr(d, key) is None:
            continue
        value = list(getattr(d, key))
        if len(value) != 2 or not all(isinstance(v, int) for v in value):
            raise TrainConfigError(
                f"data.{key}={value}: expected [first, end] time indices (< 0 from the end, "
                "0 as end: to the end), e.g. data.{key}=[0,-48]"
            )


def _check_face(n: int, tile: int, halo: int, crop: int) -> None:
    tiles = [t for t in range(1, n + 1) if n % t == 0]
    if n % tile:
        raise TrainConfigError(
            f"data.tile={tile} does not divide the face size data.n={n} (tiles that do: "
            f"{', '.join(map(str, tiles))})"
        )
    if halo > n // 2:
        raise TrainConfigError(
            f"data.halo={halo} is more than half the face size data.n={n} (at most {n // 2})"
        )
    padded = n + 2 * halo
    if crop > padded:
        raise TrainConfigError(
            f"data.crop={crop} must be in 1..{padded} (the face data.n={n} + 2 * data.halo="
            f"{halo}); a crop of data.tile + 2 * data.halo = {tile + 2 * halo} fits"
        )
