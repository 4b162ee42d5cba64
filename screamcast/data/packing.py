# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""float16 storage of a stack: half the bytes a training crop moves over the network.

A stack's inner chunks hold every channel (:mod:`screamcast.data.stacked`), so one zarr codec
can pack each channel about its own offset: ``stored = float16((x - offset[c]) / scale[c])``,
read back as ``stored * scale[c] + offset[c]`` in float32. The array's dtype stays float32:
every reader (crops, regions, the shard cache, xarray through :func:`unstack`) sees float32
values and never knows. zarr finds the codec through screamcast's ``zarr.codecs`` entry point
(so plain ``zarr`` and ``xarray`` open such a store wherever screamcast is installed; where it
is not, zarr fails naming ``screamcast.channel_packing``), or when this module is imported.

float16 keeps 11 significant bits, so the error is at most ``2**-11 |x - offset|`` (half a
unit in the last place), or ``2**-25 scale`` (float16's smallest step) near the offset.
Offsets and scales come from the first block written (:func:`choose`): a channel is packed
about its mean, or about zero when it is of one sign (up to rounding noise of a millionth of
its peak: E3SM writes humidity with a few -1e-12) and reaches within 10% of zero (humidity,
precipitation, cloud, a downward flux: they keep their relative precision, their zeros and
their sign). What each channel may lose is budgeted in :mod:`.precision`. Values beyond
1,024 times the first block's spread about the offset are refused at write time
(:func:`check_range`), naming the channel.

Channels float16 cannot hold within their budget (surface pressure's 1 Pa about 1000 hPa) are
``exact``: kept as float32, their 32 bits stored as two float16 words (the low half in the
channel's own slot, the high half in a slot appended after the C channels), so one chunk
still holds every channel and every reader still sees float32. Per channel, then, float16 or
float32.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from zarr.abc.codec import ArrayArrayCodec
from zarr.core.common import parse_named_configuration
from zarr.core.dtype import Float16
from zarr.registry import register_codec

from screamcast.data.precision import sign_definite

NAME = "screamcast.channel_packing"
HEADROOM = 1024.0  # the first block's spread maps to +-64 of float16's +-65,504
FLOAT16_MAX = 65504.0
ZERO_SCALE = 2.0**-24  # a channel zero in the first blocks: values to 3.9e-3, relative 2**-11
DTYPES = ("float16", "float32")


class PackingError(ValueError):
    """A value the packing cannot hold (beyond its range), named by channel."""


@dataclass(frozen=True)
class ChannelPacking(ArrayArrayCodec):
    """Per-channel affine to float16 along ``axis`` of each chunk (which holds every channel);
    the ``exact`` channels kept float32 (two float16 words each)."""

    is_fixed_size = True
    axis: int
    offset: tuple[float, ...]
    scale: tuple[float, ...]
    exact: tuple[int, ...]

    def __init__(self, *, axis: int, offset, scale, exact=()) -> None:
        if len(offset) != len(scale):
            raise ValueError(f"{NAME}: {len(offset)} offsets but {len(scale)} scales")
        exact = tuple(sorted(int(c) for c in exact))
        if any(not 0 <= c < len(offset) for c in exact) or len(set(exact)) != len(exact):
            raise ValueError(f"{NAME}: exact channels {list(exact)} not distinct in [0, C)")
        object.__setattr__(self, "axis", int(axis))
        object.__setattr__(self, "offset", tuple(float(v) for v in offset))
        object.__setattr__(self, "scale", tuple(float(v) for v in scale))
        object.__setattr__(self, "exact", exact)

    @classmethod
    def from_dict(cls, data: dict) -> ChannelPacking:
        _, configuration = parse_named_configuration(data, NAME)
        return cls(**configuration)

    def to_dict(self) -> dict:
        config = {"axis": self.axis, "offset": list(self.offset), "scale": list(self.scale)}
        if self.exact:  # stores without exact channels keep their metadata as before
            config["exact"] = list(self.exact)
        return {"name": NAME, "configuration": config}

    def dtypes(self) -> list[str]:
        """Each channel's storage: float16 or float32."""
        return ["float32" if c in self.exact else "float16" for c in range(len(self.offset))]

    def resolve_metadata(self, chunk_spec):
        shape = list(chunk_spec.shape)
        shape[self.axis] += len(self.exact)  # the exact channels' high words
        return replace(
            chunk_spec, shape=tuple(shape), dtype=Float16(), fill_value=np.float16("nan")
        )

    def _broadcast(self, ndim: int, axis: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(offset, scale)`` shaped ``(1, .., C, .., 1)`` against a chunk of ``ndim`` whose
        channels lie on ``axis`` (the codec's own by default)."""
        shape = [1] * ndim
        shape[self.axis if axis is None else axis] = len(self.offset)
        offset = np.asarray(self.offset, np.float32).reshape(shape)
        return offset, np.asarray(self.scale, np.float32).reshape(shape)

    async def _decode_single(self, chunk_array, chunk_spec):
        return chunk_array.__class__.from_numpy_array(
            self.decode_chunk(chunk_array.as_numpy_array())
        )

    async def _encode_single(self, chunk_array, chunk_spec):
        return chunk_array.__class__.from_numpy_array(
            self.encode_chunk(chunk_array.as_numpy_array())
        )

    def encode_chunk(self, x: np.ndarray) -> np.ndarray:
        """float32 ``(.., C, ..)`` -> stored float16 ``(.., C + E, ..)`` (E exact channels)."""
        with np.errstate(over="ignore"):  # an exact channel's packed value is overwritten
            stored = pack(x, *self._broadcast(x.ndim))
        if not self.exact:
            return stored
        words = np.moveaxis(x.astype(np.float32), self.axis, 0)[list(self.exact)].view(np.uint32)
        low = (words & 0xFFFF).astype(np.uint16).view(np.float16)  # (E, ..)
        high = (words >> 16).astype(np.uint16).view(np.float16)
        slots = np.moveaxis(stored, self.axis, 0)  # (C, ..)
        slots[list(self.exact)] = low
        return np.moveaxis(np.concatenate([slots, high]), 0, self.axis)  # (.., C + E, ..)

    def decode_chunk(self, stored: np.ndarray) -> np.ndarray:
        """Stored float16 ``(.., C + E, ..)`` -> float32 ``(.., C, ..)``."""
        C = len(self.offset)
        slots = np.moveaxis(stored, self.axis, 0)  # (C + E, ..)
        with np.errstate(invalid="ignore", over="ignore"):  # an exact channel's low word
            x = unpack(slots[:C], *self._broadcast(slots.ndim, 0))
        if self.exact:
            low = slots[list(self.exact)].view(np.uint16).astype(np.uint32)
            high = slots[C:].view(np.uint16).astype(np.uint32)
            x[list(self.exact)] = ((high << 16) | low).view(np.float32)
        return np.moveaxis(x, 0, self.axis)

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec) -> int:
        C = len(self.offset)
        return input_byte_length // (2 * C) * (C + len(self.exact))


register_codec(NAME, ChannelPacking)


def pack(x: np.ndarray, offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """float32 values -> stored float16 (``offset``, ``scale`` float32, broadcast)."""
    return ((x.astype(np.float32) - offset) / scale).astype(np.float16)


def unpack(stored: np.ndarray, offset: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Stored float16 -> float32 values."""
    return stored.astype(np.float32) * scale + offset


def choose(blocks, axis: int, constant: list | None = None) -> tuple[list[float], list[float]]:
    """``(offsets, scales)`` per channel (``axis``) from the first blocks (an array, or an
    iterable of them, read lazily: a channel is decided by the first block where it varies).
    About the mean, or about zero for a channel of one sign (:func:`sign_definite`) that
    reaches within 10% of zero;
    the scale puts the block's largest distance from the offset at 1/64 of float16's range.
    A channel constant ``c`` in every block given is packed about ``c`` for deviations up to
    64 |c| (or, for ``c = 0``, values up to 3.9e-3 at full relative precision: a zero field
    that later holds more is refused when written); its index is appended to ``constant``."""
    blocks = [blocks] if isinstance(blocks, np.ndarray) else blocks
    offsets: list[float | None] = []
    scales: list[float | None] = []
    seen: list[float] = []  # a constant channel's value so far
    for block in blocks:
        x = np.moveaxis(np.asarray(block, np.float64), axis, 0).reshape(block.shape[axis], -1)
        if not offsets:
            offsets, scales, seen = [None] * len(x), [None] * len(x), [np.nan] * len(x)
        for c, values in enumerate(x):  # (points,) of one channel
            v = values[np.isfinite(values)]
            if offsets[c] is not None or v.size == 0:
                continue
            lo, hi = float(v.min()), float(v.max())
            if lo == hi and (np.isnan(seen[c]) or seen[c] == lo):
                seen[c] = lo
                continue
            peak = max(abs(lo), abs(hi))
            near_zero = sign_definite(lo, hi) and min(abs(lo), abs(hi)) <= 0.1 * peak
            offsets[c] = 0.0 if near_zero else float(np.float32(v.mean()))
            spread = float(np.abs(v - offsets[c]).max())
            if not np.isnan(seen[c]):  # constant before this block: that value counts too
                spread = max(spread, abs(seen[c] - offsets[c]))
            scales[c] = spread * HEADROOM / FLOAT16_MAX
        if all(o is not None for o in offsets):
            break
    for c, o in enumerate(offsets):
        if o is None:  # constant (or never finite) in every block given
            value = 0.0 if np.isnan(seen[c]) else float(np.float32(seen[c]))
            offsets[c] = value
            scales[c] = abs(value) * HEADROOM / FLOAT16_MAX if value else ZERO_SCALE
            if constant is not None:
                constant.append(c)
    return offsets, scales


def round_trip(packing: ChannelPacking, x: np.ndarray, channels: slice) -> np.ndarray:
    """``x (t, C', ...)`` (channels ``channels`` of the stack, along axis 1) as the store
    gives them back: the codec's own arithmetic, so equal to a read bit for bit (an exact
    channel comes back as it went in)."""
    shape = (1, channels.stop - channels.start) + (1,) * (x.ndim - 2)
    offset = np.asarray(packing.offset[channels], np.float32).reshape(shape)
    scale = np.asarray(packing.scale[channels], np.float32).reshape(shape)
    with np.errstate(over="ignore"):
        back = unpack(pack(x, offset, scale), offset, scale)
    exact = [c - channels.start for c in packing.exact if channels.start <= c < channels.stop]
    back[:, exact] = x[:, exact]
    return back


def codec(offsets, scales, axis: int, exact=()) -> ChannelPacking:
    return ChannelPacking(axis=axis, offset=offsets, scale=scales, exact=exact)


def check_range(packing: ChannelPacking, stack: np.ndarray, names: list[str]) -> None:
    """Refuse, naming the channel, values the float16 packing would turn into infinities."""
    with np.errstate(over="ignore"):  # the overflow is what is looked for
        packed = pack(stack, *packing._broadcast(stack.ndim))  # (.., C, ..)
    over = np.isfinite(stack) & ~np.isfinite(packed)
    np.moveaxis(over, packing.axis, 0)[list(packing.exact)] = False  # float32: any value
    if over.any():
        c = int(np.argwhere(over)[0][packing.axis])
        lo = packing.offset[c] - FLOAT16_MAX * packing.scale[c]
        hi = packing.offset[c] + FLOAT16_MAX * packing.scale[c]
        raise PackingError(
            f"channel {names[c]}: values outside [{lo:.6g}, {hi:.6g}], the float16 packing's "
            "range (set from the store's first block); write it with dtype float32 "
            "(screamcast-ingest --dtype float32)"
        )


def of(array) -> ChannelPacking | None:
    """The packing codec of a zarr array (inside its shards or not), or None."""
    codecs = list(getattr(array.metadata, "codecs", ()))
    for c in codecs:
        codecs += list(getattr(c, "codecs", ()))  # a sharding codec's inner chain
        if isinstance(c, ChannelPacking):
            return c
    return None
