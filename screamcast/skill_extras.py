# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Scores beside RMSE and bias, step by step: anomaly correlation, seams and tile imprint.

Both take one step at a time from :class:`~screamcast.evaluate.StepSkill` (``add(k, pred,
truth)`` with ``(V, 6, n, n)`` fields), so memory stays flat in the number of steps.

- :class:`AnomalyCorrelation`: the area-weighted correlation of the prediction's and the
  truth's anomalies from a climatology (a time-mean map per variable), for the rollout and for
  persistence, and the RMSE of the climatology itself (the reference a forecast must beat at
  long leads).
- :class:`ReferenceMisfit`: the RMSE of a nudged rollout against its nudging reference, at the
  reference's scales (needs no truth: a nudged rollout past the end of the data is scored).
- :class:`SeamSkill`: RMSE at tile seams (next to a tile boundary inside a face), face edges
  (the outermost ring) and interiors, and the **tile imprint**: the mean |error| at each
  tile-local position (averaged over every tile of the globe) and its spread (std over
  positions / mean), beside the **imprint floor**: the spread the same tiles would give in
  expectation if each were shifted by a random tile-local phase. An error that does not know
  the tiling has imprint ~ floor, not 0: a map averaged over a finite number of tiles keeps
  their roughness (the demo's 54 tiles: floor ~0.1). docs/rollout.md.
"""

from __future__ import annotations

import numpy as np

from screamcast.metrics import face_edge_mask, tile_seam_mask


class AnomalyCorrelation:
    """ACC against ``climatology (V, 6, n, n)`` for ``steps`` steps."""

    def __init__(self, climatology: np.ndarray, area: np.ndarray, variables: list[str], steps: int):
        self.clim = np.asarray(climatology, np.float64)
        self.w = area / area.sum()
        self.variables = variables
        nan = np.full((len(variables), steps), np.nan)
        self.acc, self.persistence_acc, self.climatology_rmse = nan.copy(), nan.copy(), nan.copy()
        self._initial: np.ndarray | None = None

    def _acc(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``(V,)`` area-weighted correlation of anomaly fields ``(V, 6, n, n)``."""
        ab = (a * b * self.w).sum(axis=(-3, -2, -1))
        aa = (a * a * self.w).sum(axis=(-3, -2, -1))
        bb = (b * b * self.w).sum(axis=(-3, -2, -1))
        return ab / np.sqrt(np.maximum(aa * bb, 1e-300))

    def add(self, k: int, pred: np.ndarray, truth: np.ndarray) -> None:
        truth_anom = np.asarray(truth, np.float64) - self.clim
        if self._initial is None:
            self._initial = truth_anom
        self.acc[:, k] = self._acc(np.asarray(pred, np.float64) - self.clim, truth_anom)
        self.persistence_acc[:, k] = self._acc(self._initial, truth_anom)
        self.climatology_rmse[:, k] = np.sqrt((truth_anom**2 * self.w).sum(axis=(-3, -2, -1)))

    def table(self) -> dict:
        return {
            v: {
                "acc": self.acc[i].tolist(),
                "persistence_acc": self.persistence_acc[i].tolist(),
                "climatology_rmse": self.climatology_rmse[i].tolist(),
            }
            for i, v in enumerate(self.variables)
        }


class ReferenceMisfit:
    """Per step and nudged variable, :meth:`~screamcast.rollout.nudging.Nudger.misfit`: how far
    the state sits from what it is nudged toward (``reference_rmse``)."""

    def __init__(self, nudger, times: np.ndarray):
        self.nudger, self.times = nudger, times
        self.rmse = np.full((len(nudger.variables), len(times)), np.nan)

    def add(self, k: int, pred: np.ndarray, truth: np.ndarray | None = None) -> None:
        self.rmse[:, k] = self.nudger.misfit(pred, self.times[k])

    def table(self) -> dict:
        return {
            v: {"reference_rmse": self.rmse[i].tolist()}
            for i, v in enumerate(self.nudger.variables)
        }


class SeamSkill:
    """RMSE by pixel class and the tile imprint, for tiles of ``tile`` pixels."""

    CLASSES = ("tile_seams", "face_edges", "interiors")

    def __init__(self, n: int, tile: int, area: np.ndarray, variables: list[str], steps: int):
        if n % tile:
            raise ValueError(f"tile={tile} does not divide the face size n={n}")
        edge = face_edge_mask(n)
        seam = tile_seam_mask(n, tile)
        masks = {"tile_seams": seam, "face_edges": edge, "interiors": ~(seam | edge)}
        # each class's area weights, normalised once (this runs every rollout step)
        self.weights = {c: np.where(m, area, 0.0) / area[m].sum() for c, m in masks.items()}
        self.n, self.tile, self.variables = n, tile, variables
        self.rmse = {c: np.full((len(variables), steps), np.nan) for c in self.CLASSES}
        # each class's persistence RMSE: storm tracks cross face edges, so a class is judged
        # against its own persistence, not the globe's
        self.persistence = {c: np.full((len(variables), steps), np.nan) for c in self.CLASSES}
        self._initial: np.ndarray | None = None  # the truth at step 0 (V, 6, n, n)
        self.imprint = np.full((len(variables), steps), np.nan)
        self.imprint_floor = np.full((len(variables), steps), np.nan)
        self.last_map: np.ndarray | None = None  # (V, tile, tile) mean |error|, last step

    def add(self, k: int, pred: np.ndarray, truth: np.ndarray) -> None:
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
        mean = tiles.mean(axis=(1, 2))
        scale = np.where(mean > 0, mean, np.nan)
        self.imprint[:, k] = tiles.std(axis=(1, 2)) / scale
        self.imprint_floor[:, k] = imprint_floor(blocks) / scale
        self.last_map = tiles

    def table(self) -> dict:
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


def tile_stack(field: np.ndarray, tile: int) -> np.ndarray:
    """``(V, 6, n, n) -> (V, tiles, tile, tile)``: every tile of the globe, face-major."""
    blocks = tile_blocks(field, tile)
    return blocks.reshape(field.shape[0], -1, tile, tile)  # (V, 6 m m, t, t)


def imprint_floor(stack: np.ndarray) -> np.ndarray:
    """``(V,)``: the std over tile-local positions that the map of ``stack (V, ..., t, t)``
    (any tile axes between) would have in expectation (root mean square) if each tile were
    rolled by an independent uniformly random phase. Rolled tiles are uncorrelated, so the
    map's expected variance over positions is the mean within-tile variance over the number
    of tiles ``N``: sqrt(mean_i Var_i / N)."""
    within = stack.var(axis=(-2, -1)).reshape(stack.shape[0], -1)  # (V, N)
    return np.sqrt(within.mean(axis=1) / within.shape[1])


def lattice_means(local: np.ndarray, period: int) -> np.ndarray:
    """``(..., t, t) -> (..., period, period)``: a tile map's means over the positions modulo
    ``period`` (``t`` a multiple of it), e.g. the nudging reference's ``period x period``
    blocks, which the tiles' origins share."""
    q = local.shape[-1] // period
    return local.reshape(*local.shape[:-2], q, period, q, period).mean(axis=(-4, -2))


def without_lattice(local: np.ndarray, period: int) -> np.ndarray:
    """A tile map ``(..., t, t)`` divided by its :func:`lattice_means`, tiled back: what is left
    when a lattice of that period is taken out."""
    q = local.shape[-1] // period
    return local / np.tile(lattice_means(local, period), (q, q))  # (..., t, t)


def equatorial_orbits(tiles_per_face: int) -> np.ndarray:
    """``(6 m m,)`` group ids for :func:`worst_position_null`: the tile at ``(ty, tx)`` of each
    equatorial face (0-3) in one group, each polar tile alone. A flow that repeats every 90
    degrees of longitude (the demo's Rossby-Haurwitz wave, R = 4) is the same on the four
    equatorial faces, so their errors are not independent samples of the tile map."""
    m2 = tiles_per_face**2
    polar = 4 * m2 + np.arange(2 * m2)  # (2 m m,): unique ids after the equatorial ones
    return np.concatenate([np.tile(np.arange(m2), 4), polar])  # face-major, as tile_stack


def worst_position_null(
    stack: np.ndarray,
    draws: int = 200,
    seed: int = 0,
    lattice: int = 0,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The worst tile-local position's mean over the overall mean (issue 19's imprint
    measure) when each tile of ``stack (V, N, t, t)`` is rolled by a random phase: its mean
    and 95th percentile over ``draws``, ``(V,)`` each. What that measure gives for an error
    that does not know the tiling; an observed value above the percentile is an imprint.
    ``lattice > 0``: of the map :func:`without_lattice` (dividing out a fitted lattice lowers
    the maximum of noise too, so the imprint without it needs this null, not the plain one).
    ``groups (N,)``: tiles with one id share their phase (e.g. :func:`equatorial_orbits`),
    for errors that repeat across tiles because the flow does."""
    rng = np.random.default_rng(seed)
    V, N, t, _ = stack.shape
    groups = np.arange(N) if groups is None else np.asarray(groups)  # (N,)
    yy, xx = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")  # (t, t)
    tiles = np.arange(N)[:, None, None]  # (N, 1, 1)
    out = np.empty((draws, V))
    for d in range(draws):
        sy, sx = rng.integers(0, t, (2, groups.max() + 1))[:, groups, None, None]  # (2, N, 1, 1)
        rolled = stack[:, tiles, (yy + sy) % t, (xx + sx) % t]  # (V, N, t, t)
        m = rolled.mean(axis=1)  # (V, t, t)
        if lattice:
            m = without_lattice(m, lattice)
        out[d] = m.max(axis=(1, 2)) / m.mean(axis=(1, 2))
    return out.mean(axis=0), np.quantile(out, 0.95, axis=0)


def time_mean_climatology(store, variables: list[str]) -> np.ndarray:
    """``(V, 6, n, n)``: each variable's time mean in a climatology store (static variables as
    they are), read one time at a time."""
    out = []
    for v in variables:
        da = store[v]
        if "time" not in da.dims:
            out.append(np.asarray(da.values, np.float64))
            continue
        total = np.zeros(da.shape[1:])
        for i in range(da.sizes["time"]):
            total += da.isel(time=i).values
        out.append(total / da.sizes["time"])
    return np.stack(out)
