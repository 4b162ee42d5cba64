# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""data=store: a stage on a user's own ingested store in one try, its grid, variables, tile
and time ranges taken from the store."""

import pytest
from omegaconf import OmegaConf

from screamcast.config.training import largest_crop
from screamcast.data.store_defaults import fill_from_store, store_tile_halo
from tests.rollout.test_levels import stores  # noqa: F401  (ingested EAM-layout stores)
from tests.train.test_loop import config


@pytest.mark.parametrize(
    "n, levels, tile, halo",
    [(8, 2, 4, 2), (16, 2, 8, 4), (32, 2, 16, 8), (48, 2, 16, 8), (60, 2, 12, 6), (60, 3, 12, 6)]
    + [(90, 2, 10, 5), (120, 2, 12, 6)],
)
def test_the_store_tile_is_at_most_16_with_more_than_one_a_face_and_a_crop_that_halves(
    n, levels, tile, halo
):
    """ne30pg2 (60): 15 + 2 * 7 = 29 does not halve; 12 + 2 * 6 = 24 does."""
    assert store_tile_halo(n, levels) == (tile, halo)
    assert (tile + 2 * halo) % 2**levels == 0 and n % tile == 0 and tile < n


def test_an_odd_face_without_a_tile_that_halves_is_refused_naming_the_keys():
    with pytest.raises(ValueError, match="data.tile, data.halo: no tile of at most 16 dividing"):
        store_tile_halo(45, 2)


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
