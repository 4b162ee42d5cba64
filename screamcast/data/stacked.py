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

import logging
import threading
from collections.abc import Sequence

import numpy as np
import xarray as xr
from xarray.backends import BackendArray
from xarray.core import indexing

from screamcast.data import packing as packing_
from screamcast.data import precision

log = logging.getLogger(__name__)

ATTR = "stacked"
FIELDS, STATIC = "fields", "static_fields"
BUDGET = "precision_budget"  # a float16 stack's per-channel error budget (.precision)
CHANNEL, STATIC_CHANNEL = "channel", "static_channel"  # two sizes, so two dimension names


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


def compressor(itemsize: int):
    """zstd after a byte shuffle of the stored values (``itemsize``: 2 for float16): on a
    Held-Suarez run's fields 1.19x (float16) and 1.33x (float32) smaller, against 1.08x and
    1.09x for zarr's default zstd alone (docs/notes/2026-12-02-scale-out.md)."""
    from zarr.codecs import BloscCodec

    return BloscCodec(cname="zstd", clevel=5, shuffle="shuffle", typesize=itemsize)


def create_stack(
    group,
    spec: list[list],
    times: int | None,
    n: int,
    chunk: int,
    shard: int,
    packing: packing_.ChannelPacking | None = None,
):
    """The ``fields (time, channel, face, y, x)`` array of ``spec``'s channels, NaN-filled:
    inner chunks of every channel x ``chunk`` a side, shards ``shard`` a side per face and
    time; the group's ``stacked`` attr says which channels are which variable.
    ``times=None``: the static stack ``static_fields (channel, face, y, x)`` instead.
    ``packing``: stored as float16 about per-channel offsets (:mod:`screamcast.data.packing`;
    its axis is the channel axis: 1, or 0 for the static stack)."""
    C = spec[-1][2]
    c, s = shard_side(n, chunk, shard)
    lead, one = ((), ()) if times is None else ((times,), (1,))
    name = STATIC if times is None else FIELDS
    array = group.create_array(
        name,
        shape=(*lead, C, 6, n, n),
        chunks=(*one, C, 1, c, c),
        shards=(*one, C, 1, s, s),
        dtype="float32",
        fill_value=float("nan"),
        filters=[packing] if packing is not None else (),
        compressors=[compressor(2 if packing is not None else 4)],
        dimension_names=[*(["time", CHANNEL] if lead else [STATIC_CHANNEL]), "face", "y", "x"],
    )
    label_channels(group, array, spec, STATIC_CHANNEL if times is None else CHANNEL)
    group.attrs[ATTR] = {**group.attrs.get(ATTR, {}), name: spec}
    return array


def label_channels(group, array, spec: list[list], dim: str) -> None:
    """The stack's channel axis labelled for plain xarray: a ``dim`` coordinate of channel
    names (``T_mid[3]``) and ``<dim>_units``, each channel's variable's units ("" when its
    file gave none), named in the stack's ``coordinates`` attr. The package reads neither
    (the ``stacked`` attr says the same); :func:`unstack` drops them."""
    names = channel_names(spec)
    units = [
        attrs.get("units", "") for _, start, stop, _, attrs in spec for _ in range(start, stop)
    ]
    for key, values in ((dim, names), (f"{dim}_units", units)):
        label = group.create_array(key, shape=(len(values),), dtype=str, dimension_names=[dim])
        label[:] = np.array(values, dtype=str)
    array.attrs["coordinates"] = f"{dim}_units"


def stack_of(entries: list[list], fields: dict, timed: bool = True) -> np.ndarray:
    """``fields`` (``{variable: ([t,] [L,] 6, n, n)}``) as one ``([t,] C, 6, n, n)`` float32
    array in the channel order of ``entries`` (a stack's spec); ``timed``: a leading time."""
    first = np.asarray(next(iter(fields.values())))
    lead = (first.shape[0],) if timed else ()
    stack = np.empty((*lead, entries[-1][2], *first.shape[-3:]), "f4")  # ([t,] C, 6, n, n)
    for name, start, stop, _, _ in entries:  # ([t,] [L,] 6, n, n) -> ([t,] L, 6, n, n)
        channels = np.asarray(fields[name]).reshape(*lead, stop - start, *stack.shape[-3:])
        stack[..., start:stop, :, :, :] = channels
    return stack


def write_stack(group, fields: dict, t0: int | None = None) -> dict | None:
    """``fields`` (``{variable: array}``) into the group's stack in one write (every shard of
    these times written whole, once): times ``t0 ..`` of ``fields (t, [L,] 6, n, n)``, or with
    ``t0=None`` the static stack from ``fields (6, n, n)``. Returns a packed stack's error per
    channel (``{channel: [worst error, share of its budget]}``, :mod:`.precision`), or None."""
    name = STATIC if t0 is None else FIELDS
    entries, array = group.attrs[ATTR][name], group[name]
    stack = stack_of(entries, fields, timed=t0 is not None)
    packed = packing_.of(array)
    errors = None
    if packed is not None:  # refused before anything is written, naming the channel
        names = channel_names(entries)
        packing_.check_range(packed, stack, names)
        if t0 is not None and BUDGET in group.attrs:
            errors = _within_budget(packed, stack, names, group.attrs[BUDGET])
    array[slice(None) if t0 is None else slice(t0, t0 + stack.shape[0])] = stack
    return errors


def _within_budget(packed, stack: np.ndarray, names: list[str], budget: list) -> dict:
    """``{channel: [worst error, share of its budget]}`` of ``stack (t, C, 6, n, n)`` as the
    store gives it back; a channel over its budget is written and warned about, naming it
    (its worst error goes into the ingestion's summary), never refused part way."""
    budgets = precision.from_attrs(budget)
    back = packing_.round_trip(packed, stack, slice(0, len(names)))
    report = precision.worst(stack, back, budgets, axis=1)
    over = precision.over(report, names, budgets)
    if over:
        log.warning(
            "float16 holds this block beyond the error budget set by the store's first blocks "
            "(docs/ingest.md): %s; written (the summary lists each channel's worst error)",
            "; ".join(over),
        )
    return {n: [r["error"], r["used"]] for n, r in zip(names, report, strict=True)}


def as_stored(group, fields: dict) -> dict:
    """``fields`` (``{variable: (t, [L,] 6, n, n)}``) as the group's stack will give them back:
    themselves, or through its float16 packing (so statistics describe what is read)."""
    packed = packing_.of(group[FIELDS])
    if packed is None:
        return fields
    out = {}
    for name, start, stop, _, _ in group.attrs[ATTR][FIELDS]:
        x = np.asarray(fields[name])
        channels = x.reshape(x.shape[0], stop - start, *x.shape[-3:])  # (t, L, 6, n, n)
        out[name] = packing_.round_trip(packed, channels, slice(start, stop)).reshape(x.shape)
    return out


class _StackChannels(BackendArray):
    """One variable's channels of a stack, read through a one-entry cache that every variable
    of the stack shares: reading all variables at one time (``ds[names].isel(time=t)``)
    decodes the stack's chunks once, not once per variable (each chunk holds every channel)."""

    def __init__(self, stack: xr.Variable, axis: int, channels: int | slice, cache: dict):
        self.stack, self.axis, self.channels, self.cache = stack, axis, channels, cache
        shape = list(stack.shape)
        if isinstance(channels, int):
            del shape[axis]
        else:
            shape[axis] = channels.stop - channels.start
        self.shape, self.dtype = tuple(shape), stack.dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._read
        )

    def _read(self, key: tuple) -> np.ndarray:
        if isinstance(self.channels, int):
            rest, chosen = key, self.channels
        else:
            rest = key[: self.axis] + key[self.axis + 1 :]
            chosen = np.arange(self.channels.start, self.channels.stop)[key[self.axis]]
        full = (*rest[: self.axis], slice(None), *rest[self.axis :])  # every channel
        tag = tuple((k.start, k.stop, k.step) if isinstance(k, slice) else k for k in rest)
        with self.cache["lock"]:
            if self.cache.get("key") != tag:
                self.cache.update(key=tag, block=np.asarray(self.stack[full].values))
            block = self.cache["block"]
        axis = sum(not isinstance(k, int | np.integer) for k in rest[: self.axis])
        return np.take(block, chosen, axis=axis)


def unstack(ds: xr.Dataset) -> xr.Dataset:
    """A stacked store's dataset as one variable per store variable (lazy views of the stack,
    read through a shared one-block cache): 2-D ``(time, face, y, x)``, 3-D ``(time, <level
    dim>, face, y, x)`` with the level coordinate the store holds. A dataset without the
    ``stacked`` attr is returned as is."""
    spec = ds.attrs.get(ATTR)
    if not spec:
        return ds
    new = {}
    for array, entries in spec.items():
        stack = ds[array].variable
        axis = channel_axis(stack.dims)
        cache = {"lock": threading.Lock()}
        for name, start, stop, level_dim, attrs in entries:
            one = level_dim is None
            lazy = _StackChannels(stack, axis, start if one else slice(start, stop), cache)
            dims = list(stack.dims)
            if one:
                del dims[axis]
            else:
                dims[axis] = level_dim
            da = xr.DataArray(xr.Variable(dims, indexing.LazilyIndexedArray(lazy), attrs))
            if not one and level_dim in ds.coords:
                da = da.assign_coords({level_dim: ds[level_dim]})
            new[name] = da
    labels = [c for c in ds.coords if {CHANNEL, STATIC_CHANNEL} & set(ds[c].dims)]
    out = ds.drop_vars([*spec, *labels])  # the channels are variables now
    out = out.assign(new)
    out.attrs = {k: v for k, v in ds.attrs.items() if k != ATTR}
    return out


def channel_axis(dims) -> int:
    """Where a stack's channels lie among ``dims``."""
    return next(i for i, d in enumerate(dims) if d in (CHANNEL, STATIC_CHANNEL))


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
