# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a rollout nudges when the config names nothing: the winds and the temperature, all
levels, under whatever name the checkpoint's store gave them.

E3SM nudges winds and temperature (its ``Nudge_Uprof``/``Nudge_Tprof``); the stores the package
ingests spell them differently (EAMxx ``u``/``v``/``T_mid``, EAM ``U``/``V``/``T``, the
Held-Suarez store's ``U``/``V``/``T``, the demo's ``u``/``v``/``temperature``), so the default
is resolved once, in the plan, from the table below against the checkpoint's own channels.
"""

from __future__ import annotations

from collections.abc import Sequence

from screamcast.data.channels import split

# quantity -> the variable names it goes by in the stores the package ingests
KNOWN_NAMES: dict[str, tuple[str, ...]] = {
    "zonal wind": ("u", "U", "ua", "uwnd"),
    "meridional wind": ("v", "V", "va", "vwnd"),
    "temperature": ("temperature", "T_mid", "T", "ta", "air_temperature"),
}


class NoDefaultNudgingError(ValueError):
    """None of the checkpoint's channels is a wind or a temperature the table knows."""


def default_nudged(prognostic: Sequence[str]) -> list[str]:
    """The prognostic channels (``U[0]``, ``T_mid[3]``, ``ps`` ...) that are winds or
    temperature, every level, in the checkpoint's order; refuses when there are none."""
    known = {name for names in KNOWN_NAMES.values() for name in names}
    chosen = [c for c in prognostic if split(c)[0] in known]
    if not chosen:
        raise NoDefaultNudgingError(
            "{nudging.variables}: none of the checkpoint's prognostic channels "
            f"({', '.join(prognostic)}) is a wind or temperature by a known name "
            f"({', '.join(sorted(known))}); name the channels to nudge"
        )
    return chosen


def summary(variables: Sequence[str]) -> str:
    """``U[0..3], V[0..3], T[0..3]``: the nudged channels, each variable's levels as a range
    where they are consecutive."""
    groups: dict[str, list[int | None]] = {}
    for c in variables:
        var, level = split(c)
        groups.setdefault(var, []).append(level)
    parts = []
    for var, levels in groups.items():
        numbers = [lv for lv in levels if lv is not None]
        if not numbers:
            parts.append(var)
        elif numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
            parts.append(f"{var}[{numbers[0]}..{numbers[-1]}]")
        else:
            parts += [f"{var}[{lv}]" for lv in numbers]
    return ", ".join(parts)
