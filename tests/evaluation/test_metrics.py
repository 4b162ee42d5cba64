# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.evaluation import metrics as m
from screamcast.grid import PhysicsGrid


def test_rmse_and_bias_known_answers():
    area = PhysicsGrid.for_face_size(8).area
    truth = np.zeros((6, 8, 8))
    assert m.area_weighted_rmse(truth + 3.0, truth, area) == pytest.approx(3.0)
    assert m.area_weighted_bias(truth - 2.0, truth, area) == pytest.approx(-2.0)
    pred = truth.copy()
    pred[0] = 1.0  # one face of six, equal areas per face: RMSE sqrt(1/6)
    assert m.area_weighted_rmse(pred, truth, area) == pytest.approx(np.sqrt(1 / 6))
    assert m.masked_rmse(pred, truth, area, np.arange(6)[:, None, None] == 0 + 0 * pred) == 1.0


def test_masks():
    seam = m.tile_seam_mask(8, 4)[0]
    assert seam[3, 2] and seam[4, 5] and not seam[2, 2] and not seam[0, 3]
    assert m.face_edge_mask(8)[2].sum() == 28
    assert not (m.tile_seam_mask(16, 4) & m.face_edge_mask(16)).any()


def test_edge_gradient_variance_ratio():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(6, 16, 16))
    assert m.edge_gradient_variance_ratio(truth, truth) == pytest.approx(1.0)
    assert m.edge_gradient_variance_ratio(2 * truth, truth) == pytest.approx(4.0)
    smooth = truth.copy()
    smooth[..., 1:-1] = (truth[..., :-2] + truth[..., 1:-1] + truth[..., 2:]) / 3
    assert m.edge_gradient_variance_ratio(smooth, truth) < 0.7
