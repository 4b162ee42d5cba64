# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Crops drawn a region at a time, shuffled across regions: fewer reads, the same distribution.

A lazily read crop fetches every chunk it touches; drawn independently, each crop pays for its
own chunks (several times its own bytes, docs/performance.md). Here a sample's origin is still
uniform over times, faces and positions, but crops come in groups that share one fetched
*region* of an extended face at one time: the region is read once and cut ``per_region``
times. The origins of a face are split into ``regions x regions`` blocks of (about) ``stride``
origins a side; a group picks a block with probability proportional to its origins and its
crops uniformly inside it, so every origin keeps probability ``1 / (T 6 span^2)`` exactly (the
edge and corner origins included). The crops of ``window`` groups are shuffled together, so a
batch mixes regions and times instead of being a cluster of neighbours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RegionPlan:
    span: int  # crop origins per axis of an extended face: padded - crop + 1
    crop: int
    stride: int  # the most origins a region holds per axis
    per_region: int  # crops cut from one fetched region
    window: int  # regions whose crops are shuffled together

    @classmethod
    def balanced(cls, span: int, crop: int, stride: int, per_region: int, window: int):
        """Blocks of equal size (within one origin): ``stride`` rounded so that no block is a
        sliver (33 origins in blocks of 16 would leave one of 1)."""
        if min(span, crop, stride, per_region, window) < 1:
            raise ValueError(
                f"region sampling needs positive sizes, got span={span}, crop={crop}, "
                f"stride={stride}, per_region={per_region}, window={window}"
            )
        blocks = math.ceil(span / min(stride, span))
        return cls(span, crop, math.ceil(span / blocks), per_region, window)

    @property
    def starts(self) -> np.ndarray:
        """``(blocks,)`` the first origin of each block along an axis."""
        return np.arange(0, self.span, self.stride)

    @property
    def counts(self) -> np.ndarray:
        """``(blocks,)`` origins per block along an axis."""
        return np.minimum(self.stride, self.span - self.starts)

    @property
    def size(self) -> int:
        """The side of the largest region: its block's origins plus one crop."""
        return self.stride + self.crop - 1

    def amplification(self) -> float:
        """Pixels fetched per pixel of crop delivered, for the largest region (before chunk
        rounding): ``size^2 / (per_region crop^2)``."""
        return self.size**2 / (self.per_region * self.crop**2)

    def draw(self, rng: np.random.Generator, t_lo: int, t_hi: int) -> np.ndarray:
        """``(window * per_region, 6)`` rows ``(t, face, oy, ox, ry, rx)`` in shuffled order:
        each crop's origin and its region's (the region spans ``ry .. ry + counts + crop -
        1``)."""
        starts, counts = self.starts, self.counts
        weight = np.outer(counts, counts).ravel().astype(np.float64)  # origins per block
        block = rng.choice(weight.size, size=self.window, p=weight / weight.sum())  # (W,)
        by, bx = np.divmod(block, starts.size)
        t = rng.integers(t_lo, t_hi, self.window)  # (W,)
        face = rng.integers(0, 6, self.window)  # (W,)
        m = self.per_region
        # origins uniform inside each block: (W, m) offsets below the block's counts
        oy = starts[by][:, None] + (rng.random((self.window, m)) * counts[by][:, None]).astype(int)
        ox = starts[bx][:, None] + (rng.random((self.window, m)) * counts[bx][:, None]).astype(int)
        rows = np.stack(
            [
                np.repeat(t, m),
                np.repeat(face, m),
                oy.ravel(),
                ox.ravel(),
                np.repeat(starts[by], m),
                np.repeat(starts[bx], m),
            ],
            axis=1,
        )  # (W m, 6)
        return rows[rng.permutation(len(rows))]


def region_plan(data, padded: int) -> RegionPlan | None:
    """The plan a :class:`~screamcast.config.DataConfig` asks for (``region_stride > 0``), or
    None: every crop drawn and read on its own."""
    stride = getattr(data, "region_stride", 0)
    if not stride:
        return None
    span = padded - data.crop + 1
    return RegionPlan.balanced(span, data.crop, stride, data.region_crops, data.shuffle_regions)
