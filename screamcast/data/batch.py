# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The training batches, typed: what a loader yields and the losses take.

Named tuples, so that torch's collation, pinning and Fabric's moves to the device keep the
type (each field collated on its own); a sample is the same type without the batch axis.
"""

from __future__ import annotations

from typing import NamedTuple

import torch


class CropBatch(NamedTuple):
    """Training crops of ``S x S`` pixels (a window of an extended face) at time t, with the
    ``k`` steps after it (:class:`~screamcast.data.dataset.CubeCropDataset`)."""

    state: torch.Tensor  # (B, C, S, S): the prognostic variables at t
    target: torch.Tensor  # (B, k, C + D, S, S): the prognostic, then diagnostic, at t+1..t+k
    forcing: torch.Tensor  # (B, k + 1, Fc, S, S): the forcing channels at t..t+k
    static: torch.Tensor  # (B, F + K, S, S): the static variables, then the position's
    area: torch.Tensor  # (B, S, S): the cells' areas over their crop's mean
    # where the crops come from (the loader's; a batch made by hand may leave them out)
    time: torch.Tensor | None = None  # (B,): the store's time index of t
    face: torch.Tensor | None = None  # (B,): the crop's face
    origin: torch.Tensor | None = None  # (B, 2): its first row and column in the extended face


class CubeBatch(NamedTuple):
    """Whole cubes at time t with the ``k`` steps after it, for training through the global
    step (:class:`~screamcast.data.cube_samples.CubeSamples`)."""

    # (B, C, 6, n, n): the prognostic variables at t; (B, 2C, 6, n, n) for a network of two
    # input times, t's then t - dt's (State.inputs' order)
    state: torch.Tensor
    target: torch.Tensor  # (B, k, C + D, 6, n, n): at t+1..t+k
    start: torch.Tensor  # (B,): the store's time index of t (the trainer's times give the date)


def first_lead(batch: CropBatch | CubeBatch) -> CropBatch | CubeBatch:
    """``batch`` with its first lead only (the one-step scores)."""
    return batch._replace(target=batch.target[:, :1])
