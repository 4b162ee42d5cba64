# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""data=store: a stage on a user's own ingested store in one try, its grid, variables, tile
and time ranges taken from the store."""

import pytest
from omegaconf import OmegaConf

from screamcast.config.training import largest_crop
from screamcast.data.store_defaults import fill_from_store, store_tile
from tests.rollout.test_levels import stores  # noqa: F401  (ingested EAM-layout stores)
from tests.train.test_loop import config


@pytest.mark.parametrize("n, tile", [(8, 4), (16, 8), (32, 16), (48, 16), (60, 15), (7, 1)])
def test_the_store_tile_is_at_most_16_with_more_than_one_a_face(n, tile):
    assert store_tile(n) == tile


@pytest.mark.parametrize(
    "cap, n, halo, levels, crop",
    [(64, 48, 8, 2, 64), (64, 8, 2, 2, 12), (64, 16, 4, 3, 24), (64, 20, 1, 3, 16)]
    + [(64, None, 2, 2, None)],
)
def test_the_pretraining_crop_is_64_or_the_face_with_its_halo(cap, n, halo, levels, crop):
    assert largest_crop(cap, n, halo, levels) == crop


def test_a_store_fills_what_the_preset_leaves_null(stores):  # noqa: F811
    """The EAM-layout store on layers (ne4pg2, faces of 8; T on 4 layers, U, V, PS, Q, PRECT;
    36 six-hourly times): the stage's crop follows the face, nothing else is left null."""
    cfg = config("data=store", f"data.url={stores['layers']}", "experiment=stage1_pretrain64")
    assert cfg.data.n is None and cfg.data.crop is None  # not resolvable before the store
    said = fill_from_store(cfg.data, cfg.rollout_steps)
    d = cfg.data
    assert (d.n, d.tile, d.halo, d.crop) == (8, 4, 2, 12)
    assert set(d.prognostic) >= {"T", "U", "V", "PS"} and d.static == []
    times = OmegaConf.to_container(d)["train_range"]
    assert d.valid_range == [times[1], 0] and times[0] == 0 and times[1] < 0
    assert said.startswith(f"from the store {stores['layers']}: data.n=8, data.prognostic=[")
    assert fill_from_store(d) is None  # nothing left to take


def test_given_settings_are_kept(stores):  # noqa: F811
    cfg = config("data=store", f"data.url={stores['layers']}", "data.prognostic=[T,PS]")
    cfg.data.tile = 8
    fill_from_store(cfg.data)
    assert list(cfg.data.prognostic) == ["T", "PS"] and cfg.data.tile == 8 and cfg.data.halo == 4
