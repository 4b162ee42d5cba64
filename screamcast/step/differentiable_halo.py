# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The halo operator's gather and normalised overlap-add with gradients, for training through
the global step.

:class:`~screamcast.halo.HaloOperator` computes in reused buffers (fast, and not something
autograd can record). Both maps are linear, so their gradients are the operator's own
transposes: the gather ``G`` (halo copies inside a face, KNN interpolation across an edge)
has ``G^T`` (:meth:`~screamcast.halo.HaloOperator.transpose`), and the reassembly
``A = D^-1 G_m^T W`` has ``A^T = W G_m D^-1`` (``G_m``: the gather without its cross-face
entries unless the reassembly adds them). The forward values are the rollout's, bit for bit.
"""

from __future__ import annotations

import torch

from screamcast.halo import HaloOperator


def _gather_masked(op: HaloOperator, x: torch.Tensor) -> torch.Tensor:
    """``G_m x``: the tiles of ``x (B, C, 6, n, n)`` with every halo pixel that lies on
    another face zero -> ``(B * n_tiles, C, S, S)``."""
    B, C = x.shape[:2]
    n, H, S, T, m, P = op.n, op.halo, op.size, op.tile, op.m, op.padded
    ext = x.new_zeros(B, C, 6, P, P)
    ext[..., H : H + n, H : H + n] = x
    win = ext.unfold(3, S, T).unfold(4, S, T).permute(0, 2, 3, 4, 1, 5, 6)  # (B,6,m,m,C,S,S)
    return win.reshape(B * 6 * m * m, C, S, S)


class _Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, op):
        ctx.op = op
        return op.gather(x.detach())  # (B * n_tiles, C, S, S)

    @staticmethod
    def backward(ctx, grad):
        return ctx.op.transpose(grad.contiguous(), cross_face=True), None  # (B, C, 6, n, n)


class _Reassemble(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tiles, op, cross_face, window):
        ctx.op, ctx.cross_face, ctx.window = op, cross_face, window
        return op.adjoint(tiles.detach(), cross_face=cross_face, window=window)

    @staticmethod
    def backward(ctx, grad):
        op = ctx.op
        scaled = grad / op.counts(grad.dtype, ctx.cross_face, ctx.window)  # D^-1 g
        tiles = op.gather(scaled.contiguous()) if ctx.cross_face else _gather_masked(op, scaled)
        if ctx.window != "uniform":
            tiles = tiles * op.window(ctx.window, tiles.dtype)  # W G_m D^-1 g
        return tiles, None, None, None


def gather(op: HaloOperator, x: torch.Tensor) -> torch.Tensor:
    """``G x`` with its gradient: ``(B, C, 6, n, n) -> (B * n_tiles, C, S, S)``."""
    return _Gather.apply(x, op)


def reassemble(
    op: HaloOperator, tiles: torch.Tensor, halo_adjoint: bool, cross_face: bool, window: str
) -> torch.Tensor:
    """The step's reassembly with its gradient: ``(B * n_tiles, C, S, S) -> (B, C, 6, n, n)``
    (tile centres only, or the normalised overlap-add)."""
    if not halo_adjoint:
        return op.crop(tiles)  # views: autograd records them as they are
    return _Reassemble.apply(tiles, op, cross_face, window)
