# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A toy loss plug-in (the test of "a new loss is one file and one config entry"): the
area-weighted mean absolute error in normalised units, counting its calls."""

import torch

from screamcast.train.losses import register_loss

CALLS = []


@register_loss("area_weighted_l1")
def area_weighted_l1(pred, target, area, scale) -> torch.Tensor:
    CALLS.append(tuple(pred.shape))
    return ((pred - target) / scale).abs().mul(area[:, None]).mean(dim=(0, 2, 3))  # (V,)
