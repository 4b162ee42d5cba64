# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One set of checks for every store that meets the model's data: a nudging reference, a truth,
a climatology, and the data a checkpoint is rolled out on.

A second store is compared with the first, channel by channel: the grid (when both are cubes
of one face size: ``ne16pg1`` is not ``ne8pg2``), the level each 3-D channel stands for (its
coordinate value and, for pressure-weighted layers, the interfaces that bound it: ``T[2]`` is
an index, and the same index in another store can be another level), and the units. Calendars
are matched or refused by :func:`screamcast.data.calendar.in_model_calendar`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from screamcast.data.channels import split
from screamcast.data.remote import StoreError

_UNIT_SPELLINGS = {
    "m/s": "m s-1",
    "m s^-1": "m s-1",
    "k": "K",
    "kelvin": "K",
    "degk": "K",
    "deg_k": "K",
    "1/s": "s-1",
    "s^-1": "s-1",
    "pa": "Pa",
}


class IncompatibleStoreError(StoreError):
    """A store whose grid, levels or units are not the model's, named in the message."""


def canonical_units(units: str) -> str:
    """One spelling per unit (``m/s`` -> ``m s-1``, ``kelvin`` -> ``K``)."""
    u = " ".join(str(units).strip().split())
    return _UNIT_SPELLINGS.get(u.lower(), u)


def channel_levels(ds: xr.Dataset, names: Sequence[str]) -> dict[str, dict]:
    """``{channel: {"dim", "value"[, "bounds"]}}`` for the 3-D channels among ``names`` in
    ``ds`` (views made by :func:`~screamcast.data.channels.with_channels`): the level's
    coordinate value and, for layers, the interface indices that bound it."""
    out = {}
    for name in names:
        var, index = split(name)
        if index is None or name not in ds or "level" not in ds[name].attrs:
            continue
        dim = ds[name].attrs["level_dim"]
        entry = {"dim": str(dim), "value": float(ds[name].attrs["level"])}
        interfaces = ds[dim].attrs.get("interfaces") if dim in ds.coords else None
        if interfaces is not None:
            entry["bounds"] = [int(interfaces[index]), int(interfaces[index + 1])]
        out[name] = entry
    return out


def _describe(level: Mapping | None) -> str:
    if level is None:
        return "no level (a 2-D field)"
    bounds = f", interfaces {level['bounds'][0]}-{level['bounds'][1]}" if "bounds" in level else ""
    return f"{level['dim']} = {level['value']:g}{bounds}"


def check_levels(
    want: Mapping[str, Mapping] | None,
    have: Mapping[str, Mapping],
    names: Sequence[str],
    where: str,
    source: str,
) -> None:
    """Refuse when a channel among ``names`` is at another level in ``have`` (the store
    ``where``) than in ``want`` (``source``'s, e.g. the checkpoint's); ``want`` None (a
    checkpoint from before levels were recorded) checks nothing."""
    if want is None:
        return
    for name in names:
        a, b = want.get(name), have.get(name)
        if a is None and b is None:
            continue
        same = a is not None and b is not None
        same = same and np.isclose(a["value"], b["value"], rtol=1e-6, atol=0.0)
        same = same and ("bounds" not in a or "bounds" not in b or a["bounds"] == b["bounds"])
        if not same:
            var = split(name)[0]
            raise IncompatibleStoreError(
                f"{where}: '{name}' is at {_describe(b)}, but {source} has it at "
                f"{_describe(a)}: a channel index names a different level in each store; "
                f"give '{var}' on {source}'s levels"
            )


def align_levels(model: xr.Dataset, other: xr.Dataset, names: Sequence[str]) -> xr.Dataset:
    """``other`` with each 3-D channel among ``names`` taken at the model's level by value:
    ``T[1]`` of an output written on levels 0 and 7 of a store is that store's ``T[2]`` when
    the store holds levels 0, 3 and 7. Channels whose level ``other`` lacks are left as they
    are (then :func:`check_levels` names them)."""
    from screamcast.data.channels import vertical_dim, with_channels

    want = channel_levels(model, names)
    new = {}
    for name, level in want.items():
        var = split(name)[0]
        if var not in other:
            continue
        dim = vertical_dim(other[var])
        if dim is None or dim not in other.coords:
            continue
        hit = np.flatnonzero(np.isclose(other[dim].values, level["value"], rtol=1e-6, atol=0))
        if hit.size == 1:
            source = f"{var}[{int(hit[0])}]"
            new[name] = with_channels(other, [source])[source]
    return other.assign(new) if new else other


def check_units(model: xr.Dataset, other: xr.Dataset, names: Sequence[str], where: str) -> None:
    """Refuse a variable whose ``units`` attr differs from the model's (a truth in degC
    scored against an output in K is off by 273). Missing attrs pass."""
    for name in names:
        if name not in model or name not in other:
            continue
        want, have = model[name].attrs.get("units"), other[name].attrs.get("units")
        if want and have and canonical_units(have) != canonical_units(want):
            raise IncompatibleStoreError(
                f"{where}: variable '{name}' is in '{have}', the model's in '{want}': "
                "convert it first"
            )


def check_same_grid(model_grid: str, other: xr.Dataset, where: str) -> None:
    """A cube store of the model's face size must be on the model's grid: the same face size
    on another physics grid (``ne16pg1`` for ``ne8pg2``) puts every cell elsewhere."""
    grid = other.attrs.get("grid")
    if grid and grid != model_grid:
        raise IncompatibleStoreError(
            f"{where} is on grid {grid}, the model's data on {model_grid}: same face size, "
            "other cells; give it on the model's grid"
        )


def matched_store(
    model: xr.Dataset, other: xr.Dataset, names: Sequence[str], where: str
) -> xr.Dataset:
    """``other`` with its 3-D channels taken at the model's levels by value
    (:func:`align_levels`), refused when its grid (a cube of the model's face size), a level or
    a unit is not the model's data ``model``'s, for the channels ``names``."""
    other = align_levels(model, other, names)
    if "face" in other.dims and "face" in model.dims and other.sizes["y"] == model.sizes["y"]:
        check_same_grid(model.attrs["grid"], other, where)
    check_levels(
        channel_levels(model, names), channel_levels(other, names), names, where, "the model's data"
    )
    check_units(model, other, names, where)
    return other
