# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The loader's side of device crops: a rank's windows of regions, each region read once.

With ``data.device_crops`` the data-loader workers no longer cut crops. A worker reads the
regions of one *window* (the ``shuffle_regions`` regions whose crops are shuffled together,
:mod:`~screamcast.data.region_sampler`) as the store holds them (a packed stack's float16
words, :mod:`~screamcast.data.raw_stack`) and hands them over with the window's crop origins;
the training process unpacks them, fills in the halo ring and cuts the crops on its device
(:mod:`~screamcast.data.device_crops`). The crops are the ones
:class:`~screamcast.data.dataset.CropDataset` would cut on the CPU, in the same order. A
window is read by one worker, so each region is read once; cutting on the CPU, a region
whose crops fall in batches of several workers is read by each of them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from screamcast.data.dataset import CropDataset


class WindowItem(NamedTuple):
    """One window's regions as read, and its crops in the order they are drawn."""

    # per read unit (time-dependent groups first, then static), ``(R, slots, [k + 1,] N)``:
    # each region's boxes flattened end to end (its own face's box first), zero-padded to the
    # window's longest; float16 words of a packed stack, float32 values otherwise
    words: list[torch.Tensor]
    regions: torch.Tensor  # (R, 4) int64: time, face, ry, rx (the region's first pixel)
    crops: torch.Tensor  # (M, 3) int64: region index, oy, ox (the crop's in the extended face)


class RegionWindows(torch.utils.data.Dataset):
    """Item ``w``: rank ``rank``'s window ``w`` of region crops (a :class:`WindowItem`)."""

    def __init__(self, crops: CropDataset, rank: int):
        if crops.regions is None or crops.in_memory:
            raise ValueError(
                f"store {crops.url}: device crops cut regions read lazily; set "
                "data.region_stride > 0 and data.in_memory=false, or data.device_crops=false"
            )
        self.crops, self.rank = crops, rank

    @property
    def per_window(self) -> int:
        """Crops in a window."""
        return self.crops.regions.window * self.crops.regions.per_region

    def __getitem__(self, key: int | tuple[int, int, int]) -> WindowItem:
        """Window ``key``, or ``(window, lo, hi)``: its crops ``lo .. hi - 1`` only (a run that
        starts or stops inside the window reads only the regions it uses)."""
        number, lo, hi = (key, 0, None) if isinstance(key, int) else key
        crops = self.crops
        rows = crops.sampler.window(crops.epoch, self.rank, number)[lo:hi]  # (M, 6)
        keys: dict[tuple, int] = {}  # (t, face, ry, rx) -> region index, first seen first
        index = np.empty((len(rows), 3), np.int64)
        for j, (t, face, oy, ox, _, _) in enumerate(rows.tolist()):
            key = (t, face, *crops.region_origin(oy, ox))
            index[j] = keys.setdefault(key, len(keys)), oy, ox
        crops._open()
        reads = [crops._read_words(*key, crops.regions.size) for key in keys]  # R x units
        words = [_padded([r[u] for r in reads]) for u in range(len(reads[0]))]
        regions = torch.tensor(list(keys), dtype=torch.int64)  # (R, 4)
        return WindowItem(words, regions, torch.from_numpy(index))


def _padded(parts: list[np.ndarray]) -> torch.Tensor:
    """``(R, slots, [k + 1,] N)``: the regions' reads ``(slots, [k + 1,] N_r)`` stacked, each
    zero-padded to the longest ``N``."""
    longest = max(p.shape[-1] for p in parts)
    out = np.zeros((len(parts), *parts[0].shape[:-1], longest), parts[0].dtype)
    for r, p in enumerate(parts):
        out[r, ..., : p.shape[-1]] = p
    return torch.from_numpy(out)
