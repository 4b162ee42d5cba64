# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Plug-ins registered by name: nudging methods, metrics, losses.

A config names a plug-in by its registered name, or as ``module:name``, which imports
``module`` (registering it) first: a new one is one module and one config entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


class Registry:
    def __init__(self, what: str, error: type[Exception] = ValueError):
        self.what, self.error = what, error  # for messages: "nudging method", "loss", ...
        self.entries: dict[str, Callable] = {}

    def register(self, name: str):
        """A decorator registering its argument under ``name``."""

        def wrap(entry: Callable) -> Callable:
            self.entries[name] = entry
            return entry

        return wrap

    def __getitem__(self, spec: str) -> Callable:
        """The entry ``spec`` names (``name`` or ``module:name``)."""
        module, sep, name = spec.rpartition(":")
        if sep:
            try:
                importlib.import_module(module)
            except ImportError as err:
                raise self.error(f"{self.what} {spec!r}: cannot import {module}: {err}") from None
        else:
            name = spec
        if name not in self.entries:
            raise self.error(
                f"{self.what} {spec!r} is not registered (registered: "
                f"{', '.join(sorted(self.entries)) or 'none'}; a plug-in is named module:name)"
            )
        return self.entries[name]
