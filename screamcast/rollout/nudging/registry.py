# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The registry of nudging methods: name -> (settings dataclass, ``factory(settings, context)
-> Corrector``), as the step correctors are registered (ACE's typed plug-in configs).

A method's settings are its own dataclass, filled from ``nudging.config`` and from the
``nudging`` section's keys of the same names (``tau_hours``, ``increment``, ``time``,
``partial_reference``: the built-in relaxation's, which its flags set); a section key the
method does not declare, or a ``nudging.config`` key it does not know, is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields

from screamcast.registry import Registry
from screamcast.rollout.nudging.corrector import Corrector, CorrectorContext
from screamcast.rollout.nudging.errors import NudgingConfigError, NudgingError

CORRECTORS = Registry("nudging method", NudgingError)
# the nudging section's keys that are every method's: not a method's settings
COMMON = ("method", "reference", "variables", "config")


def register_corrector(name: str, config: type | None = None):
    """Register ``factory(settings, context) -> Corrector`` as ``name``, with ``config`` (a
    dataclass) as its settings; without one (a plug-in written before typed settings) the
    factory gets the ``nudging`` section itself, unchecked, as it did then."""

    def wrap(factory: Callable) -> Callable:
        CORRECTORS.register(name)((config, factory))
        return factory

    return wrap


def corrector_factory(method: str) -> Callable:
    """The factory registered as ``method`` (``name``, or ``module:name``)."""
    return CORRECTORS[method][1]


def _default(f):
    return f.default_factory() if f.default is MISSING else f.default


def method_settings(section):
    """The typed settings of the ``nudging`` section ``section``'s method, checked (the one
    check: the rollout's plan calls it before anything is read, nudged or not, and the
    corrector's build)."""
    try:
        config_type, _ = CORRECTORS[section.method]
    except NudgingError as err:
        raise NudgingConfigError(f"{{nudging.method}}: {err}", "nudging.method") from None
    if config_type is None:  # an untyped plug-in: the section, as before
        return section
    own = {f.name for f in fields(config_type)}
    shared = [f for f in fields(section) if f.name not in COMMON]
    values = {f.name: getattr(section, f.name) for f in shared if f.name in own}
    for f in shared:
        if f.name not in own and getattr(section, f.name) != _default(f):
            raise NudgingConfigError(
                f"{{nudging.{f.name}}} is not a setting of nudging method {section.method!r} "
                f"(its settings: {', '.join(sorted(own)) or 'none'})",
                f"nudging.{f.name}",
            )
    for key in sorted(section.config):
        if key not in own or key in values:
            where = f"set {{nudging.{key}}} itself" if key in values else "unknown"
            raise NudgingConfigError(
                f"nudging.config.{key}: {where} for nudging method {section.method!r} (its "
                f"settings: {', '.join(sorted(own)) or 'none'})",
                *([f"nudging.{key}"] if key in values else []),
            )
    try:
        return config_type(**values, **section.config)
    except TypeError as err:
        raise NudgingConfigError(f"nudging.config: {err}") from None


def build_corrector(section, context: CorrectorContext) -> Corrector:
    """The corrector of the ``nudging`` config section ``section``, checked to have every
    member of the protocol (``restrict`` included)."""
    _, factory = CORRECTORS[section.method]
    corrector = factory(method_settings(section), context)
    missing = [m for m in PROTOCOL if not hasattr(corrector, m)]
    if missing:
        if callable(getattr(corrector, "close", None)):
            corrector.close()  # its background reads
        raise NudgingError(
            f"nudging method {section.method!r} lacks {', '.join(missing)} of the corrector "
            "protocol (screamcast/rollout/nudging/corrector.py)"
        )
    return corrector


PROTOCOL = ("variables", "resume_attrs", "prepare", "apply", "misfit", "attrs", "close", "restrict")
