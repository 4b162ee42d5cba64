# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The halo operator ``G`` in torch: gather tiles with halo, crop, and its (normalised) adjoint.

``G`` maps a global field ``(B, C, 6, n, n)`` to tiles ``(B * n_tiles, C, S, S)``
(``S = tile + 2 * halo``). It is applied in two cheap stages instead of one per-pixel gather:
each face is padded once into an *extended face* (interior copy + a ring filled from sparse
KNN weights), then tiles are ``unfold`` windows of the extended faces. The adjoint mirrors it:
overlap-add onto the extended faces, then one ``scatter_add_`` of the ring's cross-face part
into their interior.
Built once from a :class:`~screamcast.grid.tiling.TileLayout` and reused every step.
"""

from __future__ import annotations

import numpy as np
import torch

from screamcast.config.choices import WINDOWS
from screamcast.grid.tiling import TileLayout

_ACCUMULATE = {torch.bfloat16: torch.float32, torch.float16: torch.float32}


def accumulate_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype an overlap-add sums in: float32 for half-precision tiles (a bf16 sum of up to
    nine windows loses the last bits of the state), the tiles' own otherwise."""
    return _ACCUMULATE.get(dtype, dtype)


def interpolate_ring(
    values: torch.Tensor,
    index: torch.Tensor,
    weights: torch.Tensor,
    out: torch.Tensor | None = None,
    tmp: torch.Tensor | None = None,
) -> torch.Tensor:
    """The halo ring's KNN values ``(rows, R) = sum_j weights[j] * values[:, index[j]]`` from
    ``values (rows, N)``, ``index (k, R)``, ``weights (k, R)``, in one order for one rank and
    for a block of one (so they agree bit for bit); for the default ``k = 2`` one lerp instead
    of a multiply and an add. ``out``, ``tmp``: ``(rows, R)`` scratch buffers to fill."""
    shape = (values.shape[0], index.shape[1])
    ring = torch.gather(values, 1, index[0].expand(shape), out=out)
    if weights.shape[0] == 2:
        ring.lerp_(torch.gather(values, 1, index[1].expand(shape), out=tmp), weights[1])
    else:
        ring.mul_(weights[0])
        for j in range(1, weights.shape[0]):
            ring.addcmul_(torch.gather(values, 1, index[j].expand(shape), out=tmp), weights[j])
    return ring


def tile_window(kind: str, tile: int, halo: int) -> np.ndarray:
    """``(S, S)`` weights of a tile's pixels in the windowed overlap-add: 1 on the tile's own
    ``tile x tile`` centre, falling toward the outer edge across the halo, linearly or as a
    raised cosine (``(d + 1/2) / halo`` at the ``d``-th halo pixel from the outside, never
    zero); ``uniform`` is 1 everywhere (the plain average)."""
    if kind not in WINDOWS:
        raise ValueError(f"window must be one of {', '.join(WINDOWS)}, got {kind!r}")
    ramp = (np.arange(halo) + 0.5) / max(halo, 1)  # outermost halo pixel first
    if kind == "cosine":
        ramp = 0.5 * (1.0 - np.cos(np.pi * ramp))
    if kind == "uniform":
        ramp = np.ones(halo)
    one_d = np.concatenate([ramp, np.ones(tile), ramp[::-1]])  # (S,)
    return np.outer(one_d, one_d)


def add_windows(win: torch.Tensor, y: torch.Tensor, size: int, tile: int) -> None:
    """``win += y`` for overlapping windows ``win (..., m, m, S, S)`` (``unfold`` views with
    stride ``tile`` into the extended faces): each window split into blocks no longer than the
    stride, so for one block position the windows never overlap and each is one strided
    in-place op; the first block position covers ``[0, n)^2``, so it is a copy."""
    cuts = list(range(0, size, tile)) + [size]
    for r0, r1 in zip(cuts[:-1], cuts[1:], strict=True):
        for c0, c1 in zip(cuts[:-1], cuts[1:], strict=True):
            if r0 == c0 == 0:
                win[..., r0:r1, c0:c1] = y[..., r0:r1, c0:c1]
            else:
                win[..., r0:r1, c0:c1] += y[..., r0:r1, c0:c1]


class HaloOperator:
    """Gather / crop / adjoint for one :class:`TileLayout` on one device."""

    def __init__(self, layout: TileLayout, device: torch.device | str | None = None):
        self.layout = layout
        self.device = torch.device(device or "cpu")
        n, H, T = layout.n, layout.halo, layout.tile
        self.n, self.halo, self.tile, self.size, self.padded = n, H, T, layout.size, layout.padded
        self.m = layout.tiles_per_side
        self.n_tiles = layout.n_tiles
        as_long = dict(dtype=torch.long, device=self.device)
        self.n_ring = int(layout.ring_positions.size)  # R: ring pixels of all 6 faces
        self.ring_idx = torch.as_tensor(layout.ring_sources.T.copy(), **as_long)  # (k, R)
        # The same sources as flat indices into the (6, P, P) extended faces: the cross-face
        # transpose adds straight into the overlap-add's interior, with no extra copy.
        f, y, x = np.unravel_index(layout.ring_sources.T, (6, n, n))
        ext_idx = (f * layout.padded + y + H) * layout.padded + x + H  # (k, R)
        self._ring_idx_ext = torch.as_tensor(ext_idx.reshape(-1), **as_long)  # (k * R,)
        self._ring_weights_f64 = torch.as_tensor(layout.ring_weights.T.copy(), dtype=torch.float64)
        self._ring_weights: dict[torch.dtype, torch.Tensor] = {}
        self._counts: dict[tuple[torch.dtype, bool, str], torch.Tensor] = {}
        self._windows: dict[tuple[str, torch.dtype], torch.Tensor] = {}
        self._scratch: dict[tuple, torch.Tensor] = {}

    def _scratch_buffer(self, tag: str, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A reused buffer for intermediates that never leave this object.

        On CPU, allocating the ~20 MB of intermediates per call costs more in page faults than
        the copies themselves; reusing buffers keeps gather and adjoint near memcpy speed. Not
        for concurrent use of one operator from several threads.
        """
        key = (tag, shape, dtype)
        if key not in self._scratch:
            self._scratch[key] = torch.empty(shape, dtype=dtype, device=self.device)
        return self._scratch[key]

    def to(self, device: torch.device | str) -> HaloOperator:
        return self if torch.device(device) == self.device else HaloOperator(self.layout, device)

    def ring_weights(self, dtype: torch.dtype) -> torch.Tensor:
        """IDW weights ``(k, R)`` in ``dtype`` on this device (cached)."""
        if dtype not in self._ring_weights:
            self._ring_weights[dtype] = self._ring_weights_f64.to(device=self.device, dtype=dtype)
        return self._ring_weights[dtype]

    def _check(self, x: torch.Tensor) -> tuple[int, int]:
        if x.dim() != 5 or tuple(x.shape[2:]) != (6, self.n, self.n):
            raise ValueError(
                f"HaloOperator: expected a field (batch, channel, 6, {self.n}, {self.n}), "
                f"got {tuple(x.shape)}"
            )
        return x.shape[0], x.shape[1]

    def _tiles_shape(self, tiles: torch.Tensor) -> tuple[int, int]:
        S = self.size
        if tiles.dim() != 4 or tiles.shape[0] % self.n_tiles or tuple(tiles.shape[2:]) != (S, S):
            raise ValueError(
                f"HaloOperator: expected tiles (batch * {self.n_tiles}, channel, {S}, {S}), "
                f"got {tuple(tiles.shape)}"
            )
        return tiles.shape[0] // self.n_tiles, tiles.shape[1]

    def _ring_slabs(self, ext: torch.Tensor, ring: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
        """Pairs of views (ring part, extended-face part) for the four slabs of every ring.

        The ring of a face in row-major (``ring_mask``) order is: ``H`` full rows, then ``n``
        rows of ``H`` left and ``H`` right pixels, then ``H`` full rows; four strided copies
        move it in or out of the extended faces (faster than a gather or scatter on the
        ring's flat positions). ``ring``: ``(B*C, 6 * R_f)``; ``ext``: ``(B, C, 6, P, P)``.
        """
        B, C = ext.shape[:2]
        n, H, P = self.n, self.halo, self.padded
        top, mid, bottom = ring.view(B, C, 6, -1).split([H * P, 2 * n * H, H * P], dim=3)
        mid = mid.view(B, C, 6, n, 2, H)
        return [
            (top.view(B, C, 6, H, P), ext[..., :H, :]),
            (mid[..., 0, :], ext[..., H : H + n, :H]),
            (mid[..., 1, :], ext[..., H : H + n, H + n :]),
            (bottom.view(B, C, 6, H, P), ext[..., H + n :, :]),
        ]

    def extend(self, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Each face with a ring of width ``halo``: ``(B, C, 6, n, n) -> (B, C, 6, P, P)``.

        Training crops with halo are windows of this array, so they see exactly the halo values
        the rollout's tiles see. ``out``: a ``(B, C, 6, P, P)`` tensor or view to fill.
        """
        B, C = self._check(x)
        n, H, P = self.n, self.halo, self.padded
        ext = x.new_empty(B, C, 6, P, P) if out is None else out
        ext[..., H : H + n, H : H + n] = x
        if H:
            flat = x.reshape(B * C, 6 * n * n)  # (BC, 6*n*n)
            shape = (B * C, self.n_ring)
            ring = interpolate_ring(
                flat,
                self.ring_idx,  # (k, R)
                self.ring_weights(x.dtype),  # (k, R)
                out=self._scratch_buffer("ring", shape, x.dtype),  # (BC, R)
                tmp=self._scratch_buffer("ring_tmp", shape, x.dtype),
            )
            for part, slab in self._ring_slabs(ext, ring):
                slab.copy_(part)
        return ext

    def gather(self, x: torch.Tensor) -> torch.Tensor:
        """``tiles = G x``: ``(B, C, 6, n, n) -> (B * n_tiles, C, S, S)``, batch-major."""
        B, C = self._check(x)
        S, T, m, P = self.size, self.tile, self.m, self.padded
        ext = self.extend(x, self._scratch_buffer("ext", (B, C, 6, P, P), x.dtype))
        win = ext.unfold(3, S, T).unfold(4, S, T)  # (B, C, 6, m, m, S, S) view
        win = win.permute(0, 2, 3, 4, 1, 5, 6)  # (B, 6, m, m, C, S, S)
        # One strided copy into a fresh tensor. Not ``reshape``: with one tile per face
        # (m = 1) and C = 1 the windows are already contiguous, reshape returns a view of the
        # scratch buffer, and the next gather or overlap-add overwrites the caller's tiles.
        tiles = x.new_empty(B * 6 * m * m, C, S, S)
        tiles.view(B, 6, m, m, C, S, S).copy_(win)
        return tiles  # (B * n_tiles, C, S, S)

    def crop(self, tiles: torch.Tensor) -> torch.Tensor:
        """Each tile's centre back in place, halo ignored: ``-> (B, C, 6, n, n)``."""
        B, C = self._tiles_shape(tiles)
        H, T, m, n = self.halo, self.tile, self.m, self.n
        centre = tiles[:, :, H : H + T, H : H + T]  # (B*n_tiles, C, T, T)
        centre = centre.reshape(B, 6, m, m, C, T, T).permute(0, 4, 1, 2, 5, 3, 6)
        return centre.reshape(B, C, 6, n, n)  # (B, C, 6, m, T, m, T) -> field

    def _overlap_add(self, tiles: torch.Tensor) -> torch.Tensor:
        """Sum the tiles into extended faces: ``(B * n_tiles, C, S, S) -> (B, C, 6, P, P)``.

        No ``fold``: each window is split into blocks no longer than the stride ``T``; for one
        block position the blocks of different tiles never overlap, so each is one strided
        in-place op on the extended faces (a handful of them, no loop over tiles). The first
        block position covers ``[0, n)^2`` of the extended faces, so it is a copy, and only the
        strips it leaves are zeroed.
        """
        B, C = self._tiles_shape(tiles)
        S, T, m, n, P = self.size, self.tile, self.m, self.n, self.padded
        y = tiles.view(B, 6, m, m, C, S, S).permute(0, 4, 1, 2, 3, 5, 6)  # (B,C,6,m,m,S,S)
        ext = self._scratch_buffer("ext", (B, C, 6, P, P), tiles.dtype)
        ext[..., n:, :] = 0
        ext[..., :n, n:] = 0
        win = ext.unfold(3, S, T).unfold(4, S, T)  # (B, C, 6, m, m, S, S) view into ext
        add_windows(win, y, S, T)
        return ext

    def _add_cross_face(self, ext: torch.Tensor) -> None:
        """``interior(ext) += W^T ring(ext)``: the ring's values back through the KNN weights.

        One ``scatter_add_`` of all ``k * R`` weighted ring values into the extended faces'
        interior (the sources never lie in the ring, so nothing read is written).
        """
        B, C = ext.shape[:2]
        shape = (B * C, self.n_ring)
        ring = self._scratch_buffer("ring", shape, ext.dtype)  # (BC, R)
        for part, slab in self._ring_slabs(ext, ring):
            part.copy_(slab)
        w = self.ring_weights(ext.dtype)  # (k, R)
        k = w.shape[0]
        weighted = self._scratch_buffer("ring_weighted", (B * C, k, shape[1]), ext.dtype)
        torch.mul(ring.unsqueeze(1), w, out=weighted)  # (BC, k, R)
        index = self._ring_idx_ext.expand(B * C, k * shape[1])
        ext.view(B * C, -1).scatter_add_(1, index, weighted.view(B * C, -1))

    def transpose(self, tiles: torch.Tensor, cross_face: bool = True) -> torch.Tensor:
        """Unnormalised ``G^T tiles`` (``cross_face=False``: intra-face entries of G only)."""
        n, H = self.n, self.halo
        ext = self._overlap_add(tiles)  # (B, C, 6, P, P)
        if cross_face and H:
            self._add_cross_face(ext)
        return ext[..., H : H + n, H : H + n].clone(
            memory_format=torch.contiguous_format
        )  # (B, C, 6, n, n), never aliases the scratch

    def window(self, kind: str, dtype: torch.dtype) -> torch.Tensor:
        """:func:`tile_window` as a ``(S, S)`` tensor on this device, cached."""
        key = (kind, dtype)
        if key not in self._windows:
            w = tile_window(kind, self.tile, self.halo)
            self._windows[key] = torch.as_tensor(w, dtype=dtype, device=self.device)
        return self._windows[key]

    def counts(self, dtype: torch.dtype, cross_face: bool, window: str = "uniform") -> torch.Tensor:
        """``D = diag(G_m^T w)`` as a ``(6, n, n)`` field: the sum of the window weights that
        reach each pixel (>= 1: every pixel is a tile centre, where the window is 1)."""
        key = (dtype, cross_face, window)
        if key not in self._counts:
            ones = torch.ones(1, 1, 6, self.n, self.n, dtype=dtype, device=self.device)
            tiles = self.gather(ones)
            if window != "uniform":
                tiles = tiles * self.window(window, dtype)
            self._counts[key] = self.transpose(tiles, cross_face)[0, 0]
        return self._counts[key]

    def adjoint(
        self, tiles: torch.Tensor, cross_face: bool = False, window: str = "uniform"
    ) -> torch.Tensor:
        """Normalised overlap-add ``D^-1 G_m^T W tiles``: the average of every prediction of a
        pixel, each weighted by its tile's ``window`` (:func:`tile_window`; uniform: 1).

        ``cross_face=False`` drops the halo pixels that lie on another face; ``True`` scatters
        them back through the transpose of the KNN interpolation. Half-precision tiles are
        accumulated in float32 and returned in their own dtype.
        """
        acc = accumulate_dtype(tiles.dtype)
        n, H = self.n, self.halo
        count = self.counts(acc, cross_face, window)  # before the scratch buffers are filled
        dtype, tiles = tiles.dtype, tiles.to(acc)
        if window != "uniform":
            tiles = tiles * self.window(window, acc)  # (B * n_tiles, C, S, S) * (S, S)
        ext = self._overlap_add(tiles)  # (B, C, 6, P, P)
        if cross_face and H:
            self._add_cross_face(ext)
        out = torch.div(ext[..., H : H + n, H : H + n], count)  # copy and normalise in one pass
        return out.to(dtype)
