# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stacked layout: every channel of a store in one array, sharded, so a crop is few reads.

A crop needs every channel at the same ``(time, face, box)``. One array per variable makes
that one request per channel per chunk (336 requests per crop for 40 channels on the
production-shaped benchmark); one ``fields (time, channel, face, y, x)`` array whose inner
chunks hold every channel of a ``c x c`` box, in shards of ``s x s`` per face and time, makes it
one request per shard when a region read covers whole shards (docs/performance.md,
``benchmarks/crop_layouts.py``). Static variables go in ``static_fields (channel, face, y, x)``.

The group attr ``stacked`` says which channels are which variable (``{array: [[name, start,
stop, level dim or None, attrs], ...]}``); :func:`unstack` gives xarray users the usual dataset
back (3-D variables along their level dim), lazily, and :func:`stack_index` gives the dataset
where a channel lies.
"""

from __future__ import annotations

from collections.abc import Sequence

import xarray as xr

ATTR = "stacked"
FIELDS, STATIC = "fields", "static_fields"
CHANNEL = "channel"


def stack_spec(variables: Sequence[tuple[str, int, str | None, dict]]) -> list[list]:
    """``[[name, start, stop, level_dim, attrs], ...]`` of ``(name, channels, level_dim,
    attrs)`` in order: the channels of one variable are contiguous in the stack."""
    out, start = [], 0
    for name, count, level_dim, attrs in variables:
        out.append([name, start, start + count, level_dim, dict(attrs)])
        start += count
    return out


def channel_names(spec: list[list]) -> list[str]:
    """The stack's channels by name: ``ps``, ``T_mid[0]`` ... (a 3-D variable's levels)."""
    names = []
    for name, start, stop, level_dim, _ in spec:
        names += [name] if level_dim is None else [f"{name}[{i}]" for i in range(stop - start)]
    return names


def shard_side(n: int, chunk: int, shard: int) -> tuple[int, int]:
    """``(inner chunk side, shard side)`` for a face of ``n``: the chunk at most the face, the
    shard a multiple of it (zarr's rule) and at most the face rounded up to chunks."""
    c = min(chunk, n)
    whole = -(-n // c) * c  # the face in whole chunks
    s = min(max(shard // c, 1) * c, whole)
    return c, s


def create_stack(group, spec: list[list], times: int, n: int, chunk: int, shard: int):
    """The ``fields (time, channel, face, y, x)`` array of ``spec``'s channels, NaN-filled:
    inner chunks of every channel x ``chunk`` a side, shards ``shard`` a side per face and
    time; the group's ``stacked`` attr says which channels are which variable."""
    C = spec[-1][2]
    c, s = shard_side(n, chunk, shard)
    array = group.create_array(
        FIELDS,
        shape=(times, C, 6, n, n),
        chunks=(1, C, 1, c, c),
        shards=(1, C, 1, s, s),
        dtype="float32",
        fill_value=float("nan"),
        dimension_names=["time", CHANNEL, "face", "y", "x"],
    )
    group.attrs[ATTR] = {FIELDS: spec}
    return array


def unstack(ds: xr.Dataset) -> xr.Dataset:
    """A stacked store's dataset as one variable per store variable (lazy views of the stack):
    2-D ``(time, face, y, x)``, 3-D ``(time, <level dim>, face, y, x)`` with the level
    coordinate the store holds. A dataset without the ``stacked`` attr is returned as is."""
    spec = ds.attrs.get(ATTR)
    if not spec:
        return ds
    new = {}
    for array, entries in spec.items():
        stack = ds[array]
        for name, start, stop, level_dim, attrs in entries:
            if level_dim is None:
                da = stack.isel({CHANNEL: start}, drop=True)
            else:
                da = stack.isel({CHANNEL: slice(start, stop)}, drop=True).rename(
                    {CHANNEL: level_dim}
                )
                if level_dim in ds.coords:
                    da = da.assign_coords({level_dim: ds[level_dim]})
            new[name] = da.assign_attrs(attrs)
    out = ds.drop_vars([*spec, *([CHANNEL] if CHANNEL in ds.coords else [])]).assign(new)
    out.attrs = {k: v for k, v in ds.attrs.items() if k != ATTR}
    return out


def stack_index(spec: dict, var: str, level: int | None) -> tuple[str, int] | None:
    """``(array, channel index)`` of ``var`` (at ``level`` for a 3-D one) in a stacked store;
    None when the stack does not hold it."""
    for array, entries in spec.items():
        for name, start, stop, level_dim, _ in entries:
            if name != var:
                continue
            if level_dim is None:
                return (array, start) if level is None else None
            if level is not None and 0 <= level < stop - start:
                return array, start + level
            return None
    return None
