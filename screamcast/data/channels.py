# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""3-D variables as channels: ``T_mid`` on 8 levels is the channels ``T_mid[0]`` .. ``T_mid[7]``.

A variable with one dim besides time and the horizontal ones (``lev``, ``ilev``, ``layer``:
whatever the store calls it) is a 3-D variable. Named once in a config it becomes one channel
per level, in the store's order (a subset with ``data.levels``, or ``name[a:b]`` in a list),
each a 2-D variable to the rest of the package: its own normalisation statistics, loss
weight, nudging and metrics. The rollout writes the channels back as the 3-D variable with its
vertical coordinate (:func:`level_coordinate`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

_CHANNEL = re.compile(r"^(?P<var>.+)\[(?P<level>\d+)\]$")
_SLICE = re.compile(r"^(?P<var>.+)\[(?P<lo>\d*):(?P<hi>\d*)\]$")
HORIZONTAL = {("face", "y", "x"), ("lat", "lon")}


class ChannelError(ValueError):
    """A 3-D variable, level or channel name the store cannot supply, named in the message."""


def split(name: str) -> tuple[str, int | None]:
    """``"T_mid[3]"`` -> ``("T_mid", 3)``; ``"ps"`` -> ``("ps", None)``."""
    m = _CHANNEL.match(name)
    return (m["var"], int(m["level"])) if m else (name, None)


def channel(var: str, level: int) -> str:
    return f"{var}[{level}]"


def vertical_dim(da: xr.DataArray, where: str = "store") -> str | None:
    """The level dim of a variable (``None`` for 2-D); two extra dims are refused."""
    horizontal = next((h for h in HORIZONTAL if set(h) <= set(da.dims)), ())
    extra = [d for d in da.dims if d != "time" and d not in horizontal]
    if len(extra) > 1:
        raise ChannelError(
            f"{where}: variable '{da.name}' has dims {da.dims}: more than one dim besides time "
            f"and the horizontal ones ({', '.join(extra)}); screamcast takes one level dim"
        )
    return extra[0] if extra else None


def expand(
    ds: xr.Dataset,
    names: Sequence[str],
    levels: Mapping[str, Sequence[int]] | None = None,
    where: str = "store",
) -> list[str]:
    """Config names -> channel names: a 3-D variable becomes one channel per level (all, the
    ``levels[name]`` subset or a ``name[a:b]`` slice), in order; 2-D names stay as they are."""
    levels = levels or {}
    out: list[str] = []
    for name in names:
        sliced = _SLICE.match(name)
        var = sliced["var"] if sliced else name
        if split(name)[1] is not None or var not in ds or vertical_dim(ds[var], where) is None:
            if sliced:
                raise ChannelError(f"{where}: '{name}' selects levels of a variable that has none")
            out.append(name)
            continue
        size = ds.sizes[vertical_dim(ds[var], where)]
        if sliced:
            lo, hi = int(sliced["lo"] or 0), int(sliced["hi"] or size)
            chosen = list(range(lo, min(hi, size)))
        else:
            chosen = [int(i) for i in levels.get(var, range(size))]
        bad = [i for i in chosen if not 0 <= i < size]
        if bad or not chosen:
            raise ChannelError(
                f"{where}: levels {bad or chosen} of '{var}' are not among its {size} levels"
            )
        out += [channel(var, i) for i in chosen]
    return out


def with_channels(ds: xr.Dataset, names: Sequence[str], where: str = "store") -> xr.Dataset:
    """``ds`` plus a 2-D variable for every channel name among ``names`` (a lazy view of one
    level, attrs kept, the level's coordinate value in attr ``level``)."""
    new = {}
    for name in names:
        var, level = split(name)
        if level is None or name in ds:
            continue
        if var not in ds:
            have = ", ".join(sorted(str(v) for v in ds.data_vars))
            raise ChannelError(f"{where} has no variable '{var}' (it has: {have})")
        dim = vertical_dim(ds[var], where)
        if dim is None:
            raise ChannelError(f"{where}: '{name}' names a level of '{var}', which has no levels")
        if not level < ds.sizes[dim]:
            raise ChannelError(
                f"{where}: '{name}': '{var}' has {ds.sizes[dim]} levels along '{dim}'"
            )
        da = ds[var].isel({dim: level}, drop=True)
        value = ds[dim].values[level] if dim in ds.coords else level
        new[name] = da.assign_attrs(level=float(value), level_dim=dim)
    return ds.assign(new) if new else ds


def level_coordinate(ds: xr.Dataset, var: str) -> tuple[str, np.ndarray, dict]:
    """``(dim, values, attrs)`` of a 3-D variable's vertical coordinate (indices if none)."""
    dim = vertical_dim(ds[var])
    if dim in ds.coords:
        return dim, np.asarray(ds[dim].values), dict(ds[dim].attrs)
    return dim, np.arange(ds.sizes[dim]), {}


def grouped(channels: Sequence[str]) -> dict[str, list[tuple[int, int | None]]]:
    """``{var: [(position in channels, level or None), ...]}`` in first-seen order: how the
    channels are written back as variables."""
    out: dict[str, list[tuple[int, int | None]]] = {}
    for i, name in enumerate(channels):
        var, level = split(name)
        out.setdefault(var, []).append((i, level))
    return out


def each_step(ds: xr.Dataset, names: Sequence[str], steps, where: str = "output"):
    """``(k, fields (V, 6, n, n))`` for each of ``steps`` of ``ds``'s ``names`` (3-D
    variables' levels as channels), one step in memory at a time."""
    ds = with_channels(ds, names, where)
    for k in steps:
        yield k, ds[list(names)].isel(time=k).to_array().values
