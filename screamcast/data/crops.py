# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Crops of the extended faces cut straight from a store: what to read, and how to fill in.

An extended face is a face plus the ring of width ``halo`` that
:class:`~screamcast.halo.HaloOperator` builds. A crop that reaches into the ring needs, besides
its own face's box, the bounding box of its ring pixels' KNN sources on each neighbour face:
:func:`plan_crop` says which boxes, :func:`assemble` fills the crop from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from screamcast.grid.extended import ExtendedFaceGeometry


@dataclass(frozen=True)
class CropPlan:
    """What to read for one window: its own face's box, and per neighbour face a box + gather."""

    face: int
    inner: tuple[slice, slice]  # face-coordinate box read from the crop's own face
    inner_at: tuple[slice, slice]  # where it lands in the crop
    ring_at: np.ndarray  # (Q,) flat positions in the (S, S) crop of its ring pixels
    boxes: tuple[tuple[int, slice, slice], ...]  # (face, ys, xs) of KNN sources
    box_rows: tuple[np.ndarray, ...]  # per box: (Qb,) the ring pixels with a source in it
    box_index: tuple[np.ndarray, ...]  # per box: (Qb, k) flat positions into it (0 if none)
    box_weights: tuple[np.ndarray, ...]  # per box: (Qb, k) the KNN weights, 0 where not its own


def plan_crop(geo: ExtendedFaceGeometry, face: int, oy: int, ox: int, size: int) -> CropPlan:
    L = geo.layout
    n, H = L.n, L.halo
    y0, y1 = max(oy - H, 0), min(oy + size - H, n)
    x0, x1 = max(ox - H, 0), min(ox + size - H, n)
    inner = (slice(y0, y1), slice(x0, x1))
    inner_at = (slice(y0 + H - oy, y1 + H - oy), slice(x0 + H - ox, x1 + H - ox))
    rows = geo.ring_row[face, oy : oy + size, ox : ox + size]  # (S, S)
    mask = rows >= 0
    src = L.ring_sources[rows[mask]]  # (Q, k) flat into (6, n, n)
    sf, sy, sx = src // (n * n), (src // n) % n, src % n
    weights = L.ring_weights[rows[mask]]  # (Q, k)
    boxes, box_rows, index, box_weights = [], [], [], []
    for g in np.unique(sf):
        sel = sf == g  # (Q, k)
        ys = slice(int(sy[sel].min()), int(sy[sel].max()) + 1)
        xs = slice(int(sx[sel].min()), int(sx[sel].max()) + 1)
        width = xs.stop - xs.start
        own = np.flatnonzero(sel.any(axis=1))  # only these pixels take a share of this box
        boxes.append((int(g), ys, xs))
        box_rows.append(own)
        index.append(np.where(sel, (sy - ys.start) * width + (sx - xs.start), 0)[own])
        box_weights.append(np.where(sel, weights, 0.0)[own])
    ring_at = np.flatnonzero(mask)
    return CropPlan(
        face,
        inner,
        inner_at,
        ring_at,
        tuple(boxes),
        tuple(box_rows),
        tuple(index),
        tuple(box_weights),
    )


def assemble(plan: CropPlan, inner: np.ndarray, boxes: list[np.ndarray], size: int) -> np.ndarray:
    """Fill a ``(..., S, S)`` crop from the inner box and the neighbour boxes of ``plan``."""
    lead = inner.shape[:-2]
    out = np.empty((*lead, size, size), dtype=np.float32)
    out[(..., *plan.inner_at)] = inner
    if plan.boxes:
        ring = np.zeros((*lead, plan.ring_at.size), dtype=np.float64)
        for box, rows, idx, w in zip(
            boxes, plan.box_rows, plan.box_index, plan.box_weights, strict=True
        ):  # each box adds only to its own pixels: the same sums, a quarter of the work
            ring[..., rows] += (box.reshape(*lead, -1)[..., idx] * w).sum(-1)  # (..., Qb, k)
        out.reshape(*lead, size * size)[..., plan.ring_at] = ring
    return out
