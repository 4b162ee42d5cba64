# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's step and guard for one rank's part of the globe (all of it on one rank): the
stepper's prediction, the correctors training applied (or the inference config's), the
nudging, the declared bounds (:class:`screamcast.step.step.Step`); then the guard."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.rollout.guard import Guard
from screamcast.step.correctors import StepGeometry, TileSums, build_correctors
from screamcast.step.reduction import LOCAL, Reduction
from screamcast.step.step import Step

CORRECTORS_KEY = "stepper.correctors"


def effective_correctors(config, description) -> list[dict]:
    """The inference config's ``stepper.correctors``, or (null) those training recorded (the
    checkpoint's ``description``)."""
    given = config.stepper.correctors
    chosen = given if given is not None else description.correctors
    return [dict(entry) for entry in chosen]


def effective_hyperdiffusion(config, description) -> float:
    """The inference config's ``stepper.hyperdiffusion``, or (null) training's."""
    given = config.stepper.hyperdiffusion
    return float(given if given is not None else description.model["hyperdiffusion"])


def tile_sums(layout, region) -> TileSums:
    """Where the tiles of ``region`` (``(faces, rows, cols)`` pixel slices; None: the globe)
    sit among the layout's, for global means summed tile by tile."""
    T, m, n = layout.tile, layout.tiles_per_side, layout.n
    faces, rows, cols = region or (slice(0, 6), slice(0, n), slice(0, n))
    f, r, c = np.meshgrid(
        np.arange(faces.start, faces.stop),
        np.arange(rows.start // T, rows.stop // T),
        np.arange(cols.start // T, cols.stop // T),
        indexing="ij",
    )  # (F, rows, cols) each
    index = torch.as_tensor(((f * m + r) * m + c).ravel())  # (F rows cols,) global tiles
    return TileSums(T, index, layout.n_tiles)


def _geometry(plan, region, reduction: Reduction) -> StepGeometry:
    """This part's geometry; its global means summed tile by tile (the same on any number
    of ranks)."""
    area = plan.grid.area if region is None else plan.grid.area[region]  # (*space)
    tiles = tile_sums(plan.layout(), region)
    return StepGeometry(tuple(plan.prog + plan.diag), torch.as_tensor(area), reduction, tiles)


def check_correctors(plan) -> None:
    """Build the correctors once before anything is written: a bad entry fails naming it
    (:class:`~screamcast.step.correctors.CorrectorConfigError`)."""
    build_correctors(plan.correctors, _geometry(plan, None, LOCAL), CORRECTORS_KEY)


def build_step(plan, stepper, nudging=None, region=None, reduction: Reduction = LOCAL) -> Step:
    """``step(state, t1)`` of one state (fields ``(1, C, *space)``) on this rank's part
    ``region`` (None: the globe)."""
    geometry = _geometry(plan, region, reduction)
    correctors = build_correctors(plan.correctors, geometry, CORRECTORS_KEY)

    def predict(x: torch.Tensor, t0: np.ndarray, t1: np.ndarray) -> torch.Tensor:
        return stepper.step(x[0], t0[0], t1[0]).cpu()[None]  # (1, C + D, *space)

    return Step(predict, len(plan.prog), correctors, stepper.bounded, nudging)


def build_guard(plan, region=None, reduction: Reduction = LOCAL) -> Guard:
    """The guard on this rank's part, against the checkpoint's training statistics."""
    stats, names = plan.checkpoint.description.stats, plan.prog + plan.diag
    area = _geometry(plan, region, reduction).area
    return Guard.from_stats(names, stats, area, plan.config.guard, reduction)
