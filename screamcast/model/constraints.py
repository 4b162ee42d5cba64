# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Physical bounds of output variables, declared once and applied by the pipeline.

A variable's bound is part of what it is (a precipitation rate or a mixing ratio is never
negative; a temperature, a wind or a signed flux may be anything), so it is declared here by
name, not decided by where a variable sits in the output (the rollout used to clip every
diagnostic at zero, which would silently cut a signed one). The pipeline applies the bounds in
:meth:`~screamcast.model.pipeline.Pipeline.predict` (training's validation and skill, and the
rollout, all predict through it) and, with ``pipeline.do_precip_relu``, inside the forward
pass as a ReLU, so training sees them too.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Bounds:
    lower: float | None = None
    upper: float | None = None


# EAM/EAMxx and the analytic demo's names of non-negative outputs
NON_NEGATIVE = Bounds(lower=0.0)
VARIABLE_BOUNDS: dict[str, Bounds] = {
    "precip": NON_NEGATIVE,
    "PRECT": NON_NEGATIVE,
    "PRECC": NON_NEGATIVE,
    "PRECL": NON_NEGATIVE,
    "precip_total_surf_mass_flux": NON_NEGATIVE,
    "precip_liq_surf_mass_flux": NON_NEGATIVE,
    "precip_ice_surf_mass_flux": NON_NEGATIVE,
}


def bounded_outputs(outputs: list[str], precip_name: str | None = None) -> list[tuple[int, Bounds]]:
    """``[(output index, bounds)]`` of the bounded ``outputs``; ``precip_name`` (the
    config's name of the precipitation) is non-negative whatever it is called."""
    table = VARIABLE_BOUNDS | ({precip_name: NON_NEGATIVE} if precip_name else {})
    return [(i, table[v]) for i, v in enumerate(outputs) if v in table]


def clamp_(y: torch.Tensor, bounded: list[tuple[int, Bounds]]) -> torch.Tensor:
    """Clip the bounded channels of ``y (B, V, S, S)`` in place."""
    for i, b in bounded:
        y[:, i].clamp_(min=b.lower, max=b.upper)
    return y


def relu(y: torch.Tensor, bounded: list[tuple[int, Bounds]]) -> torch.Tensor:
    """``y (B, V, S, S)`` with its non-negative channels through a ReLU (differentiable, out
    of place: for training)."""
    zero = [i for i, b in bounded if b.lower == 0.0 and b.upper is None]
    if not zero:
        return y
    mask = torch.zeros(y.shape[1], dtype=torch.bool, device=y.device)
    mask[zero] = True
    return torch.where(mask.view(1, -1, 1, 1), torch.relu(y), y)
