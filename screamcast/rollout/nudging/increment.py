# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A block increment ``(6, m, m)`` on the model's cells ``(6, n, n)``, within each face.

``bicubic``: Catmull-Rom between block centres (no kink at the centres, quadratics exact
inside a face; the default); ``bilinear``; ``block``: one value per block (it prints the
reference's cells on the nudged fields, a lattice that grows with every step). Bicubic took the
demo's nudged u, v 3-6% closer to the truth at +48 h than bilinear, on three models
(docs/notes/2026-11-rollout-studies.md).
"""

from __future__ import annotations

import numpy as np
import torch


class Increment:
    def __init__(self, kind: str, factor: int):
        self.kind, self.factor = kind, factor
        self._weights: dict[tuple, torch.Tensor] = {}

    def to_cells(self, delta: torch.Tensor) -> torch.Tensor:
        """``delta (6, m, m)`` -> ``(6, n, n)``."""
        f = self.factor
        if self.kind == "block":
            return delta.repeat_interleave(f, 1).repeat_interleave(f, 2)
        if self.kind == "bicubic":
            key = ("cubic", delta.device, delta.dtype)
            if key not in self._weights:  # (n, m), built once
                w = cubic_weights(delta.shape[-1], f)
                self._weights[key] = torch.as_tensor(w, dtype=delta.dtype, device=delta.device)
            w = self._weights[key]
            return w @ delta @ w.T  # (6, m, m) -> (6, n, m) -> (6, n, n): along y, then x
        fine = torch.nn.functional.interpolate(
            delta[:, None], scale_factor=f, mode="bilinear", align_corners=False
        )  # (6, 1, n, n): block centres at (i + 1/2) f - 1/2, as the blocks' own
        return fine[:, 0]


def cubic_weights(m: int, f: int) -> np.ndarray:
    """``(m f, m)``: Catmull-Rom (Keys' cubic convolution, ``a = -1/2``) from ``m`` block
    centres to the ``m f`` cells, block ``i``'s centre at cell ``(i + 1/2) f - 1/2``; the
    values past a face's border are the line through its last two centres. So a linear
    increment comes back exactly everywhere and a quadratic one away from the border (torch's
    bicubic, ``a = -3/4``, returns constants only: a linear increment came back with a period-f
    ripple of 0.04 of its step per block)."""
    if m == 1:  # one block per face: the increment is that block's
        return np.ones((f, 1))
    t = (np.arange(m * f) + 0.5) / f - 0.5  # (m f,): each cell's position in block units
    i0 = np.floor(t).astype(int)
    s = t - i0
    taps = [  # Keys (1981), a = -1/2: weights of i0 - 1, i0, i0 + 1, i0 + 2
        0.5 * (-(s**3) + 2 * s**2 - s),
        0.5 * (3 * s**3 - 5 * s**2 + 2),
        0.5 * (-3 * s**3 + 4 * s**2 + s),
        0.5 * (s**3 - s**2),
    ]
    w = np.zeros((m * f, m))
    rows = np.arange(m * f)
    for k, tap in enumerate(taps):
        j = i0 - 1 + k  # (m f,) the centre this tap reads, maybe past the border
        low, high = j < 0, j > m - 1
        inside = ~(low | high)
        np.add.at(w, (rows[inside], j[inside]), tap[inside])
        # past the border: v_j = v_0 + j (v_1 - v_0), and mirrored at the far end
        np.add.at(w, (rows[low], 0), (1 - j[low]) * tap[low])
        np.add.at(w, (rows[low], 1), j[low] * tap[low])
        over = j[high] - (m - 1)
        np.add.at(w, (rows[high], m - 1), (1 + over) * tap[high])
        np.add.at(w, (rows[high], m - 2), -over * tap[high])
    return w
