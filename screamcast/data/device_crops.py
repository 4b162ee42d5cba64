# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training crops cut on the device from the regions the loader read (``data.device_crops``).

The loader's workers only read (:mod:`~screamcast.data.region_windows`); here, in the
training process and on its device, each window's regions are unpacked (a packed stack's
float16 words, :class:`~screamcast.data.raw_stack.SlotDecoder`), their halo ring filled in
from the neighbour faces' boxes (the KNN sums of :func:`~screamcast.data.crops.assemble`, in
float64 as there), and the crops cut and batched with their forcing, position and area:
the :class:`~screamcast.data.batch.CropBatch` es the CPU path gives, in the same order, equal
to float32 rounding (the ring's sums are added in another order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from screamcast.data.batch import CropBatch
from screamcast.data.crops import plan_crop
from screamcast.data.dataset import CropDataset
from screamcast.data.forcing import forcing_fields, forcing_names
from screamcast.data.region_windows import RegionWindows, WindowItem


@dataclass
class RegionTable:
    """Where each pixel of a region (``size x size`` of an extended face) comes from in its
    flattened boxes (:meth:`LazyCropReads._read_words`' layout), and its position features."""

    inner_at: torch.Tensor  # (Ni,) flat pixels of the region on its own face: boxes' first Ni
    ring_at: torch.Tensor  # (Q,) flat pixels in the halo ring
    ring_src: torch.Tensor  # (Q, J) places of their KNN sources (0 where padded)
    ring_w: torch.Tensor  # (Q, J) float64 weights (0 where padded)
    position: torch.Tensor  # (K, size, size) float32 position features


def region_table(crops: CropDataset, face: int, ry: int, rx: int, device) -> RegionTable:
    """The :class:`RegionTable` of the region at ``(face, ry, rx)`` (numpy, then moved)."""
    size = crops.regions.size
    plan = plan_crop(crops.geo, face, ry, rx, size)
    h, w = (s.stop - s.start for s in plan.inner)
    rows, cols = np.mgrid[plan.inner_at[0], plan.inner_at[1]]  # (h, w) region pixels
    inner_at = (rows * size + cols).ravel()
    sizes = [h * w] + [(ys.stop - ys.start) * (xs.stop - xs.start) for _, ys, xs in plan.boxes]
    starts = np.cumsum(sizes)  # where each neighbour box begins (after the own face's)
    pairs: list[list] = [[] for _ in plan.ring_at]  # per ring pixel: (source, weight) pairs
    for start, rows, idx, wts in zip(
        starts, plan.box_rows, plan.box_index, plan.box_weights, strict=False
    ):
        for q, i, wt in zip(rows, idx + start, wts, strict=True):  # (k,) each
            pairs[q].extend(zip(i.tolist(), wt.tolist(), strict=True))
    J = max((len(p) for p in pairs), default=1)
    ring_src = np.zeros((len(pairs), J), np.int64)
    ring_w = np.zeros((len(pairs), J), np.float64)
    for q, p in enumerate(pairs):
        if p:
            ring_src[q, : len(p)], ring_w[q, : len(p)] = zip(*p, strict=True)
    win = (slice(None), face, slice(ry, ry + size), slice(rx, rx + size))
    as_tensor = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device)  # noqa: E731
    return RegionTable(
        as_tensor(inner_at),
        as_tensor(plan.ring_at),
        as_tensor(ring_src),
        as_tensor(ring_w),
        as_tensor(crops._position[win]),
    )


class DeviceCrops:
    """Cuts :class:`~screamcast.data.batch.CropBatch` es from :class:`WindowItem` s on
    ``device``; keeps each region's table (at most ``6 x blocks^2`` of them)."""

    def __init__(self, crops: CropDataset, device):
        self.crops, self.device = crops, torch.device(device)
        crops._open()  # the read units (metadata only): their decoders and channel order
        self._tables: dict[tuple, RegionTable] = {}
        self.area = torch.from_numpy(crops.geo.area).to(self.device)  # (P, P), every face
        self.solar = torch.from_numpy(crops._solar).to(self.device)  # (4, T) float64

    def table(self, face: int, ry: int, rx: int) -> RegionTable:
        key = (face, ry, rx)
        if key not in self._tables:
            self._tables[key] = region_table(self.crops, face, ry, rx, self.device)
        return self._tables[key]

    def extended(self, item: WindowItem) -> list[torch.Tensor]:
        """Per group (time-dependent, then static): its variables over each region of the
        window, ``(R, V, [k + 1,] size, size)`` float32, halo ring filled in."""
        words, out = iter(item.words), []
        size = self.crops.regions.size
        for (names, _), (units, order) in zip(self.crops._groups(), self.crops._units, strict=True):
            parts = []
            for _, unit in units:  # (R, slots, [k + 1,] N) -> (R, channels, [k + 1,] N)
                w = next(words).to(self.device, non_blocking=True)
                parts.append(w.float() if unit.decoder is None else unit.decoder.decode(w, 1))
            values = torch.cat(parts, 1)[:, order]  # (R, V, [k + 1,] N)
            tables = [self.table(*r[1:].tolist()) for r in item.regions]
            pairs = zip(values, tables, strict=True)
            filled = torch.stack([self._fill(v, tab, size) for v, tab in pairs])
            self._check_finite(filled, names, item.regions)
            out.append(filled.unflatten(-1, (size, size)))
        return out

    @staticmethod
    def _fill(values: torch.Tensor, table: RegionTable, size: int) -> torch.Tensor:
        """``(..., size^2)`` region pixels from ``(..., N)`` box values: own-face pixels
        copied, ring pixels the float64 KNN sums (cast to float32, as on the CPU)."""
        out = values.new_empty((*values.shape[:-1], size * size))
        out[..., table.inner_at] = values[..., : table.inner_at.numel()]  # own face's box
        ring = (values[..., table.ring_src].double() * table.ring_w).sum(-1)  # (..., Q)
        out[..., table.ring_at] = ring.float()
        return out

    def _check_finite(self, filled, names, regions) -> None:
        """A non-finite value in a region: refused naming the store, variable and region (one
        check per window: a device sync)."""
        bad = ~torch.isfinite(filled).flatten(2).all(-1)  # (R, V)
        if not bad.any():
            return
        r, v = (int(i) for i in bad.nonzero()[0])
        size = self.crops.regions.size
        region = filled[r, v].unflatten(-1, (size, size)).cpu().numpy()  # ([k + 1,] size, size)
        self.crops._report_non_finite(names[v], region, *regions[r].tolist())  # raises

    def cut(self, picks: list[tuple[list[torch.Tensor], WindowItem, int]]) -> CropBatch:
        """The batch of crops ``picks``: (extended regions, their window, crop index)."""
        c = self.crops
        S, C, k, F = c.crop, len(c.prognostic), c.steps, len(c.static)
        parts, where = [], []
        for ext, item, j in picks:
            r, oy, ox = item.crops[j].tolist()
            t, face, ry, rx = item.regions[r].tolist()
            y, x = slice(oy - ry, oy - ry + S), slice(ox - rx, ox - rx + S)
            static = ext[1][r][..., y, x] if F else ext[0].new_zeros((0, S, S))  # (F, S, S)
            position = self.table(face, ry, rx).position[:, y, x]  # (K, S, S)
            parts.append((ext[0][r][..., y, x], torch.cat([static, position])))
            where.append((t, face, oy, ox))
        fields = torch.stack([p[0] for p in parts])  # (B, V, k + 1, S, S)
        static = torch.stack([p[1] for p in parts])  # (B, F + K, S, S)
        area = torch.stack([self.area[a : a + S, b : b + S] for _, _, a, b in where])  # (B, S, S)
        t, face, oy, ox = torch.tensor(where, device=self.device).T  # (B,) each
        return CropBatch(
            state=fields[:, :C, 0].contiguous(),  # (B, C, S, S)
            target=fields[:, :, 1:].transpose(1, 2).contiguous(),  # (B, k, C + D, S, S)
            forcing=self._forcing(static, t[:, None] + torch.arange(k + 1, device=t.device)),
            static=static,
            area=area / area.mean(dim=(1, 2), keepdim=True),
            time=t,
            face=face,
            origin=torch.stack([oy, ox], 1),  # (B, 2)
        )

    def _forcing(self, static: torch.Tensor, when: torch.Tensor) -> torch.Tensor:
        """``(B, k + 1, Fc, S, S)`` as :meth:`CropDataset._forcing`, on the device."""
        B, _, S, _ = static.shape
        names = forcing_names(self.crops.solar_time, self.crops.insolation)
        if not names:
            return static.new_empty((B, when.shape[1], 0, S, S))
        trig = static[:, self.crops._trig, None].double().transpose(0, 1)  # (4, B, 1, S, S)
        terms = self.solar[:, when, None, None]  # (4, B, k + 1, 1, 1)
        fields = forcing_fields(names, terms, trig)  # Fc x (B, k + 1, S, S)
        return torch.stack(fields, dim=2).float()


class DeviceBatches:
    """A rank's training batches for steps ``start .. stop - 1`` cut on ``device``: what a
    ``DataLoader`` over :class:`CropDataset` with ``StepBatches`` gives, but its workers only
    read whole windows of regions (:class:`RegionWindows`)."""

    def __init__(self, crops: CropDataset, rank: int, steps: tuple, batch: int, device, **loader):
        self.windows = RegionWindows(crops, rank)
        start, stop = steps
        self.steps, self.batch = stop - start, batch
        self.cutter = DeviceCrops(crops, device)
        pin = self.cutter.device.type == "cuda"  # host-to-device copies that need not wait
        if loader.get("num_workers"):  # a window is large: one in hand per worker, pinned
            loader["prefetch_factor"] = 1
        self.loader = torch.utils.data.DataLoader(
            self.windows,
            batch_size=None,
            sampler=window_parts(start * batch, stop * batch, self.windows.per_window),
            pin_memory=pin,
            **loader,
        )

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        pending: list = []  # (extended regions, window, crop index) in the order drawn
        made = 0
        for item in self.loader:
            ext = self.cutter.extended(item)
            pending += [(ext, item, j) for j in range(len(item.crops))]
            while len(pending) >= self.batch and made < self.steps:
                yield self.cutter.cut(pending[: self.batch])
                pending, made = pending[self.batch :], made + 1


def window_parts(first: int, stop: int, per: int) -> list[tuple[int, int, int]]:
    """``(window, lo, hi)``: the crops ``first .. stop - 1`` of a rank's stream, window by
    window (``per`` crops each)."""
    return [
        (w, max(first - w * per, 0), min(stop - w * per, per))
        for w in range(first // per, -(-stop // per))
    ]


def device_crops(data, train_set, device, say=print) -> bool:
    """Whether ``data.device_crops`` applies: crops of regions read lazily; ``say`` tells
    which way the crops are cut, and why not on the device."""
    if not data.device_crops:
        return False
    if not isinstance(train_set, CropDataset):
        say("note: data.device_crops applies to crop training; this objective reads whole cubes")
        return False
    if train_set.regions is None or train_set.in_memory:
        lazily = "data.region_stride > 0, data.in_memory=false"
        say(f"note: data.device_crops cuts crops of regions read lazily ({lazily}): cut on the CPU")
        return False
    where = torch.device(device)
    slower = " (on a CPU the workers cut faster: data.device_crops=false)"
    say(
        f"device crops: workers read regions, crops cut on {where}" + slower * (where.type == "cpu")
    )
    return True
