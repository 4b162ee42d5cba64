# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A packed stack's stored float16 words, read as they are and unpacked on the device.

A stack packed per channel (:mod:`screamcast.data.packing`) is decoded by zarr on the CPU: the
float16 words become float32 values (twice the bytes) before the crops are cut. For crops cut
on the device (:mod:`screamcast.data.device_crops`) the loader instead reads the words through
a second view of the same array, whose codecs are the store's without the packing (so zarr
stops at the float16 words), and :class:`SlotDecoder` applies the packing's arithmetic on the
device: the same float32 operations, so the values are the store's bit for bit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
from zarr.core.array import Array, AsyncArray
from zarr.core.metadata import ArrayV3Metadata

from screamcast.data import packing

FILL_WORD = 0x7E00  # float16 NaN: the words' fill value (a chunk never written)


def raw_words(array) -> Array | None:
    """The float16 view of a packed stack's stored slots ``(.., C + E, ..)``: the channel axis
    holds every channel's word and then the exact channels' high words. None: not packed."""
    codec = packing.of(array)
    if codec is None:
        return None
    meta = json.loads(json.dumps(array.metadata.to_dict(), default=_plain))
    top = [c["name"] for c in meta["codecs"]]
    if packing.NAME in top and len(top) > 1 and top[0] == "sharding_indexed":
        return None  # packed around whole shards: not a layout the ingestion writes
    extra = len(codec.exact)  # the high words' slots
    meta["shape"][codec.axis] += extra
    meta["data_type"], meta["fill_value"] = "float16", "NaN"
    meta["chunk_grid"]["configuration"]["chunk_shape"][codec.axis] += extra
    for c in meta["codecs"]:  # the sharding codec's inner chunks hold the slots too
        inner = c.get("configuration", {})
        if "chunk_shape" in inner:
            inner["chunk_shape"][codec.axis] += extra
            inner["codecs"] = [x for x in inner["codecs"] if x["name"] != packing.NAME]
    meta["codecs"] = [x for x in meta["codecs"] if x["name"] != packing.NAME]
    raw = ArrayV3Metadata.from_dict(meta)
    return Array(AsyncArray(metadata=raw, store_path=array.async_array.store_path))


def _plain(value):
    """JSON for the metadata's enums and codec objects."""
    return value.to_dict() if hasattr(value, "to_dict") else str(value)


@dataclass(frozen=True)
class SlotDecoder:
    """Unpacks the words of channels ``levels`` of a packed stack, read as ``slots``: first
    each channel's own word, then the high words of those that are exact (float32)."""

    slots: tuple[int, ...]  # stored slots to read, in the order decode() takes them
    offset: tuple[float, ...]  # per channel taken
    scale: tuple[float, ...]
    exact: tuple[int, ...]  # positions among the channels taken that are float32

    @classmethod
    def of(cls, codec: packing.ChannelPacking, levels: list[int]) -> SlotDecoder:
        C = len(codec.offset)
        exact = [i for i, c in enumerate(levels) if c in codec.exact]
        high = [C + codec.exact.index(levels[i]) for i in exact]
        return cls(
            tuple(levels) + tuple(high),
            tuple(codec.offset[c] for c in levels),
            tuple(codec.scale[c] for c in levels),
            tuple(exact),
        )

    def decode(self, words: torch.Tensor, axis: int) -> torch.Tensor:
        """float16 words ``(.., slots, ..)`` (slots on ``axis``) -> float32 values ``(..,
        channels, ..)``: ``word * scale + offset`` in float32 as the codec computes it, and
        the exact channels' two halves put back together."""
        C = len(self.offset)
        words = words.movedim(axis, 0)  # (slots, ..)
        shape = (C,) + (1,) * (words.ndim - 1)
        scale = torch.tensor(self.scale, dtype=torch.float32, device=words.device).view(shape)
        offset = torch.tensor(self.offset, dtype=torch.float32, device=words.device).view(shape)
        values = words[:C].float() * scale + offset  # (C, ..)
        if self.exact:
            low = words[list(self.exact)].view(torch.int16).int() & 0xFFFF
            high = words[C:].view(torch.int16).int() & 0xFFFF
            joined = ((high << 16) | low).view(torch.float32)
            # a chunk never written holds the fill word in both halves: NaN, as zarr gives it
            fill = (low == FILL_WORD) & (high == FILL_WORD)
            values[list(self.exact)] = joined.masked_fill(fill, float("nan"))
        return values.movedim(0, axis)
