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

from typing import Any

import numpy as np

from screamcast.data.channels import split

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
    """``{channel: ChannelArray}`` of a native store's zarr group."""
    out = {}
    for name in names:
        var, level = split(name)
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
