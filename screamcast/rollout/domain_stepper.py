# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One global step on one rank's faces: halo exchange -> local tiles -> forward -> reassembly
(with the cross-face adjoint exchange).

The single-rank operator (:class:`~screamcast.halo.HaloOperator`) restricted to a block of
faces, doing the same arithmetic in the same order: the halo ring is filled from the same
KNN sources (some of them received), the overlap-add of a face uses only its own tiles, and
the cross-face terms a rank receives are added in the single-rank scatter's order. So the
outputs equal one rank's bit for bit (tested with 2, 3 and 6 gloo ranks), and nothing of the
globe but a strip along each shared cube edge crosses between ranks.
"""

from __future__ import annotations

import numpy as np
import torch

from screamcast.grid.tiling import TileLayout
from screamcast.halo import _ACCUMULATE, add_windows
from screamcast.model.pipeline import Pipeline
from screamcast.rollout.domain import ExchangePlan
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.stepper import GlobalStepper, StepperConfig


class DomainStepper(GlobalStepper):
    """Steps the state of the faces ``plan.faces``: ``(C, F, n, n)`` -> ``(C + D, F, n, n)``."""

    def __init__(
        self,
        pipeline: Pipeline,
        layout: TileLayout,
        static: np.ndarray,
        config: StepperConfig,
        plan: ExchangePlan,
        exchange: Exchange,
    ):
        super().__init__(pipeline, layout, static, config)
        self.plan, self.exchange = plan, exchange
        F, m = len(plan.faces), layout.tiles_per_side
        own = slice(plan.faces.start * m * m, plan.faces.stop * m * m)
        self.static_tiles = self.static_tiles[own].clone()  # (F m m, K, S, S): only mine
        dev = dict(device=self.device)
        self.F = F
        self.ring_idx = torch.as_tensor(plan.ring_sources_local.T.copy(), dtype=torch.long, **dev)
        w = layout.ring_weights[plan.ring_slice].T.copy()  # (k, R_F)
        self._ring_w64 = torch.as_tensor(w, dtype=torch.float64, **dev)
        self._ring_w: dict[torch.dtype, torch.Tensor] = {}
        self.send_halo = {q: torch.as_tensor(v, **dev) for q, v in plan.send_halo.items()}
        self.send_adjoint = {q: torch.as_tensor(v, **dev) for q, v in plan.send_adjoint.items()}
        self.adjoint_own = torch.as_tensor(plan.adjoint_own, **dev)
        self.adjoint_order = torch.as_tensor(plan.adjoint_order, **dev)
        self.adjoint_index = torch.as_tensor(plan.adjoint_index, **dev)

    def ring_weights(self, dtype: torch.dtype) -> torch.Tensor:
        """This rank's rings' KNN weights ``(k, R_F)`` in ``dtype`` (cached: every step)."""
        if dtype not in self._ring_w:
            self._ring_w[dtype] = self._ring_w64.to(dtype)
        return self._ring_w[dtype]

    # -- the halo exchange and the local extended faces -------------------------------------
    def _halo(self, flat: torch.Tensor) -> torch.Tensor:
        """``flat (C, F n n)`` with the halo values received appended: ``(C, F n n + N)``."""
        send = {q: flat[:, idx] for q, idx in self.send_halo.items()}  # (C, N_q) each
        C = flat.shape[0]
        shape = {q: ((C, c), flat.dtype, flat.device) for q, c in self.plan.recv_halo.items()}
        got = self.exchange.swap(send, shape)
        return torch.cat([flat, *(got[q] for q in sorted(got))], dim=1)

    def extend(self, x: torch.Tensor) -> torch.Tensor:
        """``x (C, F, n, n)`` -> its extended faces ``(C, F, P, P)``, rings filled."""
        op, F = self.op, self.F
        C, n, H, P = x.shape[0], op.n, op.halo, op.padded
        ext = x.new_empty(C, F, P, P)
        ext[..., H : H + n, H : H + n] = x
        if H:
            flat = self._halo(x.reshape(C, F * n * n))  # (C, F n n + N)
            w = self.ring_weights(x.dtype)  # (k, R_F)
            shape = (C, w.shape[1])
            ring = torch.gather(flat, 1, self.ring_idx[0].expand(shape))
            if w.shape[0] == 2:  # as HaloOperator.extend: one lerp for the default k
                ring.lerp_(torch.gather(flat, 1, self.ring_idx[1].expand(shape)), w[1])
            else:
                ring.mul_(w[0])
                for j in range(1, w.shape[0]):
                    ring.addcmul_(torch.gather(flat, 1, self.ring_idx[j].expand(shape)), w[j])
            for part, slab in self._ring_slabs(ext, ring):
                slab.copy_(part)
        return ext

    def _ring_slabs(self, ext: torch.Tensor, ring: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
        """As :meth:`HaloOperator._ring_slabs` for ``F`` faces: ``ring (C, F R_f)``, ``ext (C,
        F, P, P)``."""
        C, F = ext.shape[:2]
        n, H, P = self.op.n, self.op.halo, self.op.padded
        top, mid, bottom = ring.view(C, F, -1).split([H * P, 2 * n * H, H * P], dim=2)
        mid = mid.view(C, F, n, 2, H)
        return [
            (top.view(C, F, H, P), ext[..., :H, :]),
            (mid[..., 0, :], ext[..., H : H + n, :H]),
            (mid[..., 1, :], ext[..., H : H + n, H + n :]),
            (bottom.view(C, F, H, P), ext[..., H + n :, :]),
        ]

    # -- tiles ---------------------------------------------------------------------------------
    def gather_tiles(self, x: torch.Tensor) -> torch.Tensor:
        """``x (C, F, n, n)`` -> this rank's tiles ``(F m m, C, S, S)``, face-major."""
        S, T, m = self.op.size, self.op.tile, self.op.m
        ext = self.extend(x)  # (C, F, P, P)
        win = ext.unfold(2, S, T).unfold(3, S, T)  # (C, F, m, m, S, S) view
        tiles = x.new_empty(self.F * m * m, x.shape[0], S, S)
        tiles.view(self.F, m, m, x.shape[0], S, S).copy_(win.permute(1, 2, 3, 0, 4, 5))
        return tiles

    @torch.no_grad()
    def predict_tiles(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, n, n)`` -> predictions on this rank's tile pixels ``(F m m, C + D, S, S)``."""
        tiles = self.gather_tiles(x.to(self.device))
        return self._forward(tiles, t0, t1)

    # -- reassembly ----------------------------------------------------------------------------
    def _crop(self, tiles: torch.Tensor) -> torch.Tensor:
        H, T, m, n = self.op.halo, self.op.tile, self.op.m, self.op.n
        C = tiles.shape[1]
        centre = tiles[:, :, H : H + T, H : H + T]  # (F m m, C, T, T)
        centre = centre.reshape(self.F, m, m, C, T, T).permute(3, 0, 1, 4, 2, 5)
        return centre.reshape(C, self.F, n, n)  # (C, F, m, T, m, T) -> field

    def _overlap_add(self, tiles: torch.Tensor) -> torch.Tensor:
        """As :meth:`HaloOperator._overlap_add` on this rank's faces: ``-> (C, F, P, P)``."""
        S, T, m, n, P = self.op.size, self.op.tile, self.op.m, self.op.n, self.op.padded
        C = tiles.shape[1]
        y = tiles.view(self.F, m, m, C, S, S).permute(3, 0, 1, 2, 4, 5)  # (C, F, m, m, S, S)
        ext = tiles.new_empty(C, self.F, P, P)
        ext[..., n:, :] = 0
        ext[..., :n, n:] = 0
        win = ext.unfold(2, S, T).unfold(3, S, T)  # (C, F, m, m, S, S) view into ext
        add_windows(win, y, S, T)
        return ext

    def _add_cross_face(self, ext: torch.Tensor) -> None:
        """``interior(ext) += W^T ring(ext)`` over the ranks: my rings' weighted values go to
        the owners of their sources; what I add (mine and received) in the single-rank order."""
        C = ext.shape[0]
        w = self.ring_weights(ext.dtype)  # (k, R_F)
        ring = ext.new_empty(C, w.shape[1])
        for part, slab in self._ring_slabs(ext, ring):
            part.copy_(slab)
        weighted = torch.mul(ring.unsqueeze(1), w).view(C, -1)  # (C, k R_F)
        send = {q: weighted[:, idx] for q, idx in self.send_adjoint.items()}
        shape = {q: ((C, c), ext.dtype, ext.device) for q, c in self.plan.recv_adjoint.items()}
        got = self.exchange.swap(send, shape)
        arrival = torch.cat([weighted[:, self.adjoint_own], *(got[q] for q in sorted(got))], 1)
        values = arrival[:, self.adjoint_order]  # (C, entries) in the single-rank order
        ext.view(C, -1).scatter_add_(1, self.adjoint_index.expand(C, -1), values)

    def step(self, x: torch.Tensor, t0, t1) -> torch.Tensor:
        """``x (C, F, n, n)`` at t -> ``(C + D, F, n, n)`` at t+1 on this rank's faces."""
        tiles = self.predict_tiles(x, t0, t1)  # (F m m, C + D, S, S)
        if not self.halo_adjoint:
            return self._crop(tiles)
        acc = _ACCUMULATE.get(tiles.dtype, tiles.dtype)
        faces = slice(self.plan.faces.start, self.plan.faces.stop)
        count = self.op.counts(acc, self.cross_face, self.window)[faces]  # (F, n, n)
        dtype, tiles = tiles.dtype, tiles.to(acc)
        if self.window != "uniform":
            tiles = tiles * self.op.window(self.window, acc)
        ext = self._overlap_add(tiles)  # (C, F, P, P)
        if self.cross_face and self.op.halo:
            self._add_cross_face(ext)
        n, H = self.op.n, self.op.halo
        return torch.div(ext[..., H : H + n, H : H + n], count).to(dtype)
