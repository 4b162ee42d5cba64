# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Figures of one panel (or one group of panels) per variable, laid out in a grid of a few
columns rather than one tall column, and each variable labelled with its units."""

from __future__ import annotations

import math

import numpy as np

LAST_STEP_VARIABLES = 18  # the last-step figure shows at most this many variables
LAST_STEP_CELLS = 128  # ... each face averaged down to at most this many cells a side


def with_units(name: str, units: dict | None) -> str:
    """``"T[3] (K)"``, or the name alone when the output has no ``units`` for it."""
    u = (units or {}).get(name)
    return f"{name} ({u})" if u else name


def panel_grid(plt, count: int, per_item: int, size: tuple[float, float], max_columns: int):
    """A figure of ``count`` items of ``per_item`` panels each (side by side), as many items a
    row as fit ``max_columns`` panels; panels of ``size`` inches. Returns the figure and one
    list of axes per item; the cells past the last item are hidden."""
    items_per_row = max(1, min(count, max_columns // per_item))
    rows = math.ceil(count / items_per_row)
    columns = items_per_row * per_item
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(size[0] * columns, size[1] * rows),
        constrained_layout=True,
        squeeze=False,
    )
    flat = axes.ravel()
    groups = [list(flat[i * per_item : (i + 1) * per_item]) for i in range(count)]
    for ax in flat[count * per_item :]:
        ax.set_visible(False)
    return fig, groups


def shrunk(field: np.ndarray, cells: int = LAST_STEP_CELLS) -> np.ndarray:
    """``(..., a, b)`` block-averaged so that neither side is over ``cells`` (a picture of a
    large grid, kept for a figure without holding the full fields)."""
    a, b = field.shape[-2:]
    s = max(1, math.ceil(max(a, b) / cells))
    if s == 1:
        return np.array(field, dtype=np.float32)
    a2, b2 = a // s * s, b // s * s
    blocks = np.asarray(field[..., :a2, :b2], np.float32)
    return blocks.reshape(*field.shape[:-2], a2 // s, s, b2 // s, s).mean(axis=(-3, -1))
