# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The arrays the training crops read, one per channel, whatever the store's layout.

A channel of a native store is its zarr array (``(time, face, y, x)``), or one level of a 3-D
array (``(time, lev, face, y, x)``: the level index is put into every selection, so a crop
still reads only the chunks it touches). A column store (E3SM's ``ncol`` order) cannot be
cropped lazily: it is mapped onto the faces once, in memory (convert large ones first).
All three answer the same two calls: ``array[sel]`` and ``await array.getitem(sel)``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from screamcast.data import packing, raw_stack, stacked
from screamcast.data.channels import split
from screamcast.data.remote import StoreError

SPATIAL = ("time", "face", "y", "x")


def dimension_names(array: Any) -> tuple[str, ...]:
    """Dim names of a zarr v3 array (``dimension_names``) or v2 (``_ARRAY_DIMENSIONS``)."""
    names = getattr(array.metadata, "dimension_names", None)
    return tuple(names or array.attrs.get("_ARRAY_DIMENSIONS", ()))


class ChannelArray:
    """A zarr array, or one level of it (``level`` at ``axis``), indexed without that axis."""

    def __init__(self, array: Any, level: int | None = None, axis: int = 1):
        self.array, self.level, self.axis = array, level, axis
        self.async_array = array.async_array

    def _full(self, sel: tuple) -> tuple:
        if self.level is None:
            return sel
        return (*sel[: self.axis], self.level, *sel[self.axis :])

    def __getitem__(self, sel: tuple) -> np.ndarray:
        return self.array[self._full(sel)]

    async def getitem(self, sel: tuple) -> np.ndarray:
        return await self.async_array.getitem(self._full(sel))


class ReadUnit:
    """Channels one read serves: a channel array alone, or several levels of one array (a 3-D
    variable's levels, or a stacked store's channels) read once over their span and taken.

    ``getitem(sel)`` gives ``(channels, *box)``. ``whole_shards``: a sharded array is read in
    whole shards (the box widened to shard boundaries, then cut back): zarr reads a whole shard
    in one request, a part of one as one request per inner chunk, one after another."""

    def __init__(self, channels: list, whole_shards: bool = False):
        first = self.first = channels[0]
        self.levels = None if getattr(first, "level", None) is None else [c.level for c in channels]
        if self.levels is not None:
            self.array, self.axis = first.array, first.axis
        self.whole_shards = (
            whole_shards and self.levels is not None and self.array.shards is not None
        )
        self._raw: tuple | None = None  # (words view, decoder): built by the first raw read

    @property
    def decoder(self) -> raw_stack.SlotDecoder | None:
        """How a raw read's words are unpacked; None: its values are read as they are."""
        return self._words()[1]

    def _words(self) -> tuple:
        """A packed stack's stored words and how to unpack them (raw reads, device crops),
        or ``(None, None)``; made on first use, so that reading values never depends on it."""
        if self._raw is None:
            self._raw = (None, None)
            codec = packing.of(self.array) if self.levels is not None else None
            if codec is not None:
                words = raw_stack.raw_words(self.array)
                self._raw = (words, raw_stack.SlotDecoder.of(codec, self.levels))
        return self._raw

    def _selection(self, sel: tuple, array, picks: list[int]) -> tuple[tuple, tuple]:
        """The selection of ``array`` to read and the cut that gives the span of its channels
        ``picks`` back (a packed stack's words: the exact channels' high words too)."""
        lo, hi = min(picks), max(picks) + 1
        full = (*sel[: self.axis], slice(lo, hi), *sel[self.axis :])
        if not self.whole_shards:
            return full, tuple(slice(None) for s in full if isinstance(s, slice))
        shards, shape = array.shards, array.shape  # the words' channel axis holds C + E
        wide, cut = [], []
        for s, sh, size in zip(full, shards, shape, strict=True):
            if isinstance(s, slice):  # widened to shard boundaries, clipped to the array
                a = s.start // sh * sh
                wide.append(slice(a, min(-(-s.stop // sh) * sh, size)))
                cut.append(slice(s.start - a, s.stop - a))
            else:
                wide.append(s)
        return tuple(wide), tuple(cut)

    def _take(self, values: np.ndarray, sel: tuple, cut: tuple, picks: list[int]) -> np.ndarray:
        values = values[cut]
        axis = sum(isinstance(s, slice) for s in sel[: self.axis])  # the channel axis here
        picked = np.take(values, np.array(picks) - min(picks), axis=axis)
        return np.moveaxis(picked, axis, 0)  # (channels, *box)

    async def getitem(self, sel: tuple, shared: dict | None = None, raw: bool = False):
        """``(channels, *box)`` values; ``raw``: a packed stack's stored words instead, ``(
        decoder.slots, *box)`` float16 (other arrays: their values). ``shared``: reads already
        in flight by their selection (one dict per sample), so that two boxes in the same
        shards (a face's edge and its corner) fetch them once."""
        if self.levels is None:  # one channel of its own array (or in memory)
            return (await self.first.getitem(sel))[None]
        raw_array, decoder = self._words() if raw else (None, None)
        words = raw_array is not None
        array, picks = (raw_array, decoder.slots) if words else (self.array, self.levels)
        full, cut = self._selection(sel, array, picks)
        if shared is None:
            return self._take(await array.async_array.getitem(full), sel, cut, picks)
        key = (words, self.array.path)
        key += tuple((s.start, s.stop) if isinstance(s, slice) else s for s in full)
        if key not in shared:
            shared[key] = asyncio.ensure_future(array.async_array.getitem(full))
        return self._take(await shared[key], sel, cut, picks)


def read_units(
    arrays: dict[str, ChannelArray], names: list[str], whole_shards: bool = False
) -> list[tuple[list[str], ReadUnit]]:
    """``names`` grouped into :class:`ReadUnit` s, in first-seen order: the levels of one array
    (a 3-D variable, a stack) share one read."""
    groups: dict[tuple, list[str]] = {}
    for name in names:
        a = arrays[name]
        level = getattr(a, "level", None)
        key = (a.array.path, a.axis) if level is not None else (name,)
        groups.setdefault(key, []).append(name)
    return [
        (group, ReadUnit([arrays[n] for n in group], whole_shards)) for group in groups.values()
    ]


class InMemoryArray:
    """A numpy array with the same two calls (a column store's channel, mapped once)."""

    def __init__(self, values: np.ndarray):
        self.values = values

    def __getitem__(self, sel: tuple) -> np.ndarray:
        return np.asarray(self.values[sel])

    async def getitem(self, sel: tuple) -> np.ndarray:
        return self[sel]


def is_column_store(group: Any) -> bool:
    return any("ncol" in dimension_names(a) for _, a in group.arrays())


def channel_arrays(group: Any, names: list[str], url: str) -> dict[str, ChannelArray]:
    """``{channel: ChannelArray}`` of a native store's zarr group (per-variable or stacked)."""
    spec = group.attrs.get(stacked.ATTR)
    opened: dict[str, Any] = {}  # one zarr array per store array, however many channels
    out = {}
    for name in names:
        var, level = split(name)
        if spec:  # every channel is an index along the stack's channel axis
            where = stacked.stack_index(spec, var, level)
            if where is None:
                have = ", ".join(stacked.channel_names(sum(spec.values(), [])))
                raise StoreError(f"store {url} has no channel '{name}' (it has: {have})")
            if where[0] not in opened:
                opened[where[0]] = group[where[0]]
            array = opened[where[0]]
            out[name] = ChannelArray(array, where[1], stacked.channel_axis(dimension_names(array)))
            continue
        array = group[var]
        axis = 1
        if level is not None:
            dims = dimension_names(array)
            extra = [i for i, d in enumerate(dims) if d not in SPATIAL]
            axis = extra[0] if extra else 1
        out[name] = ChannelArray(array, level, axis)
    return out


def in_memory_arrays(
    url: str, storage_options, variables: list[str], static: list[str]
) -> dict[str, InMemoryArray]:
    """``{channel: InMemoryArray}`` of a column store, mapped onto the faces once."""
    from screamcast.data.store import open_store

    ds = open_store(url, storage_options, variables, static)
    return {n: InMemoryArray(ds[n].values) for n in [*variables, *static]}
