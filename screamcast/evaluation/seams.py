# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Scores by pixel class (tile seams, face edges, interiors) and the tile imprint.

- RMSE at tile seams (next to a tile boundary inside a face), face edges (the outermost ring)
  and interiors, each beside its own persistence RMSE (storm tracks cross face edges).
- The **tile imprint**: the mean |error| at each tile-local position (averaged over every tile
  of the globe) and its spread (std over positions / mean), beside the **imprint floor**: the
  spread the same tiles would give in expectation if each were shifted by a random tile-local
  phase. An error that does not know the tiling has imprint ~ floor, not 0: a map averaged
  over a finite number of tiles keeps their roughness (the demo's 54 tiles: floor ~0.1).
"""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.metrics import face_edge_mask, tile_seam_mask


class SeamSkill:
    """RMSE by pixel class and the tile imprint, for tiles of ``tile`` pixels."""

    CLASSES = ("tile_seams", "face_edges", "interiors")

    per_step = True

    def __init__(
        self,
        n: int,
        tile: int,
        area: np.ndarray,
        variables: list[str],
        steps: int,
        truth: TruthSource | None = None,
    ):
        if n % tile:
            raise ValueError(f"tile={tile} does not divide the face size n={n}")
        edge = face_edge_mask(n)
        seam = tile_seam_mask(n, tile)
        masks = {"tile_seams": seam, "face_edges": edge, "interiors": ~(seam | edge)}
        # each class's area weights, normalised once (this runs every rollout step); a class
        # with no pixels (no tile seams on tiles of a whole face) keeps NaN scores
        self.weights = {
            c: np.where(m, area, 0.0) / area[m].sum() for c, m in masks.items() if m.any()
        }
        self.n, self.tile, self.variables, self.truth = n, tile, variables, truth
        self.rmse = {c: np.full((len(variables), steps), np.nan) for c in self.CLASSES}
        # each class's persistence RMSE: storm tracks cross face edges, so a class is judged
        # against its own persistence, not the globe's
        self.persistence = {c: np.full((len(variables), steps), np.nan) for c in self.CLASSES}
        self._initial: np.ndarray | None = None  # the truth at step 0 (V, 6, n, n)
        self.imprint = np.full((len(variables), steps), np.nan)
        self.imprint_floor = np.full((len(variables), steps), np.nan)
        self.last_map: np.ndarray | None = None  # (V, tile, tile) mean |error|, last step

    def record(self, step: int, time, fields: np.ndarray) -> None:
        self.score(step, fields, self.truth.at(step))

    def score(self, k: int, pred: np.ndarray, truth: np.ndarray) -> None:
        """Step ``k`` of ``pred`` against ``truth``, both on the cube ``(V, 6, n, n)``."""
        error = np.asarray(pred, np.float64) - truth  # (V, 6, n, n)
        squared = error * error
        if k == 0:
            self._initial = np.array(truth, np.float64)
        change = (self._initial - truth) ** 2 if self._initial is not None else None
        for c, w in self.weights.items():
            self.rmse[c][:, k] = np.sqrt((squared * w).sum(axis=(-3, -2, -1)))
            if change is not None:
                self.persistence[c][:, k] = np.sqrt((change * w).sum(axis=(-3, -2, -1)))
        if k == 0:  # the initial condition: no error, no imprint
            self.imprint[:, 0] = self.imprint_floor[:, 0] = 0.0
            return
        blocks = tile_blocks(np.abs(error), self.tile)  # (V, 6, m, m, t, t), a view
        tiles = blocks.mean(axis=(1, 2, 3))  # (V, t, t)
        self.last_map = tiles
        if self.n == self.tile:  # one tile a face: its map is the face's, no tile imprint
            return
        mean = tiles.mean(axis=(1, 2))
        scale = np.where(mean > 0, mean, np.nan)
        self.imprint[:, k] = tiles.std(axis=(1, 2)) / scale
        self.imprint_floor[:, k] = imprint_floor(blocks) / scale

    def summary(self) -> dict:
        return {
            v: {f"rmse_{c}": self.rmse[c][i].tolist() for c in self.CLASSES}
            | {f"persistence_rmse_{c}": self.persistence[c][i].tolist() for c in self.CLASSES}
            | {
                "tile_imprint": self.imprint[i].tolist(),
                "tile_imprint_floor": self.imprint_floor[i].tolist(),
            }
            for i, v in enumerate(self.variables)
        }


def tile_blocks(field: np.ndarray, tile: int) -> np.ndarray:
    """``(V, 6, n, n) -> (V, 6, m, m, tile, tile)`` (face, tile row, tile column, y, x): a view,
    no copy (this runs every rollout step)."""
    V, n = field.shape[0], field.shape[-1]
    m = n // tile
    blocks = field.reshape(V, 6, m, tile, m, tile)  # (V, face, ty, y, tx, x)
    return blocks.transpose(0, 1, 2, 4, 3, 5)


def imprint_floor(stack: np.ndarray) -> np.ndarray:
    """``(V,)``: the std over tile-local positions that the map of ``stack (V, ..., t, t)``
    (any tile axes between) would have in expectation (root mean square) if each tile were
    rolled by an independent uniformly random phase. Rolled tiles are uncorrelated, so the
    map's expected variance over positions is the mean within-tile variance over the number
    of tiles ``N``: sqrt(mean_i Var_i / N)."""
    within = stack.var(axis=(-2, -1)).reshape(stack.shape[0], -1)  # (V, N)
    return np.sqrt(within.mean(axis=1) / within.shape[1])
