# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A dataclass tree from YAML and ``key=value`` overrides, every key checked.

A misspelt key (``nudging.tau_hour``) is an error naming it and the valid ones, never a
setting silently left at its default. Values are checked against the field's type (a string
for a number is refused); Hydra-style overrides (``nudging.tau_hours=3``) are parsed as YAML
scalars, so ``[u, v]`` is a list and ``null`` is None.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A bad setting. The message names config keys as ``{section.key}`` placeholders, so a
    command line can name the flag that set a key instead (:meth:`worded`)."""

    def __init__(self, template: str, *keys: str):
        self.template, self.keys = template, keys
        super().__init__(self.worded(lambda key: key))

    def worded(self, name_of) -> str:
        """The message with each key named by ``name_of(key)`` (a flag, or the key itself)."""
        message = self.template
        for key in self.keys:
            message = message.replace("{" + key + "}", name_of(key))
        return message


def _fields(cls) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


# a finite number in exponent notation (YAML 1.1 reads 1e-9 as a string, 1.0e-9 as a float);
# not inf, nan, 1_000 or padded text, which Python's float() would also take
_DOTLESS_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _check_value(value, hint, key: str, where: str):
    """``value`` if it is of type ``hint`` (ints pass for floats), else a ConfigError."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        hint = next(h for h in options if h is not type(None))
        origin = typing.get_origin(hint)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: {{{key}}} must be a list, got {value!r}", key)
        (item,) = typing.get_args(hint)
        return [_check_value(v, item, key, where) for v in value]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: {{{key}}} must be a mapping, got {value!r}", key)
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str) and _DOTLESS_FLOAT.fullmatch(value):
        return float(value)  # YAML 1.1 reads 1e-9 (no dot) as a string
    if hint is int and isinstance(value, bool) or not isinstance(value, hint):
        name = getattr(hint, "__name__", str(hint))
        raise ConfigError(f"{where}: {{{key}}} must be a {name}, got {value!r}", key)
    return value


def from_dict(cls, doc: dict | None, where: str, prefix: str = ""):
    """``cls`` (a dataclass) from a nested mapping; unknown keys and wrong types refused."""
    doc = doc or {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{where}: {{{prefix or 'the top level'}}} must be a mapping", prefix)
    fields, hints, values = _fields(cls), _hints(cls), {}
    for key, value in doc.items():
        full = f"{prefix}{key}"
        if key not in fields:
            valid = ", ".join(sorted(fields))
            kind = "section" if not prefix else "key"
            raise ConfigError(f"{where}: unknown {kind} '{full}' (valid: {valid})")
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            values[key] = from_dict(hint, value, where, f"{full}.")
        else:
            values[key] = _check_value(value, hint, full, where)
    return cls(**values)


def to_dict(config) -> dict:
    return dataclasses.asdict(config)


def load(cls, path: str | Path | None = None, overrides: list[str] = ()) -> tuple[Any, dict]:
    """``cls`` from the YAML file ``path`` (optional) and ``key=value`` ``overrides`` applied
    after it; also ``{key: where it was set}`` for every key the file or an override set."""
    doc, origin = {}, {}
    if path is not None:
        try:
            doc = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            raise ConfigError(f"config {path} cannot be read: {err}") from None
        origin = {key: str(path) for key in _leaves(doc)}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not key=value (e.g. nudging.tau_hours=3)")
        set_key(doc, key.strip(), yaml.safe_load(text))
        origin[key.strip()] = f"override {item}"
    return from_dict(cls, doc, str(path) if path else "the overrides"), origin


def set_key(doc: dict, key: str, value) -> None:
    """``doc[a][b] = value`` for ``key`` ``a.b``, creating the sections on the way."""
    *sections, last = key.split(".")
    for section in sections:
        doc = doc.setdefault(section, {})
        if not isinstance(doc, dict):
            raise ConfigError(f"{{{key}}}: '{section}' is a setting, not a section", key)
    doc[last] = value


def _leaves(doc: dict, prefix: str = ""):
    for key, value in doc.items():
        if isinstance(value, dict) and value and not key.endswith("storage_options"):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"
