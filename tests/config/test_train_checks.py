# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training-config mistakes answered before anything is imported or opened, naming the key."""

import pytest
from omegaconf import OmegaConf

from screamcast.cli.hydra_config import CONFIGS
from screamcast.config.train_checks import TrainConfigError, check_overrides, check_settings
from screamcast.config.training import TrainConfig


@pytest.mark.parametrize(
    "override, said",
    [
        ("optim.lrr=1e-3", "unknown key 'optim.lrr' (known keys of optim: betas, ema_decay"),
        ("+optim.lrr=1e-3", "unknown key 'optim.lrr'"),
        ("++data.cropp=3", "unknown key 'data.cropp' (known keys of data: assume_grid"),
        ("stepz=3", "unknown key 'stepz' (known keys: accelerator, channels_last"),
        ("global_unroll.cubs=2", "unknown key 'global_unroll.cubs'"),
        ("data=held_suaerz", "data=held_suaerz: no such option (configs/data/ has: demo, "),
        ("experiment=stage9", "experiment=stage9: no such option"),
    ],
)
def test_a_misspelt_key_or_option_is_refused_listing_the_valid_ones(override, said):
    with pytest.raises(TrainConfigError) as err:
        check_overrides([override], CONFIGS)
    assert said in str(err.value)


def test_valid_overrides_pass():
    good = [
        "experiment=stage1_pretrain64",
        "data=held_suarez",
        "optim.lr=1e-3",
        "+data.levels.T_mid=[0,1]",  # a dict takes any key below it
        "hydra.run.dir=x",
        "run_dir=runs/x",
        "experiment=null",
    ]
    check_overrides(good, CONFIGS)


def cfg(**data):
    c = OmegaConf.structured(TrainConfig)
    for key, value in data.items():
        OmegaConf.update(c, key, value)
    return c


@pytest.mark.parametrize(
    "settings, said",
    [
        ({"data.n": 16, "data.crop": 64}, "data.crop=64 must be in 1..32 (the face data.n=16"),
        ({"data.n": 16, "data.tile": 5}, "data.tile=5 does not divide the face size data.n=16"),
        ({"data.n": 16, "data.halo": 9}, "data.halo=9 is more than half the face size"),
        ({"data.tile": 0}, "data.tile=0: must be >= 1"),
        ({"steps": 0}, "steps=0: must be >= 1"),
        ({"data.train_range": [0]}, "data.train_range=[0]: expected [first, end]"),
        ({"data.crop": 30}, "data.crop=30 must be divisible by 2**model.levels = 4"),
    ],
)
def test_settings_that_need_no_store_are_refused_naming_the_key(settings, said):
    with pytest.raises(TrainConfigError) as err:
        check_settings(cfg(**settings))
    assert said in str(err.value)


def test_the_edges_of_each_range_pass():
    check_settings(cfg(**{"data.n": 16, "data.tile": 16, "data.halo": 8, "data.crop": 32}))
    check_settings(cfg(**{"data.n": 16, "data.tile": 4, "data.halo": 0, "data.crop": 4}))


def test_data_store_without_its_url_is_refused_naming_the_key():
    from tests.train.test_loop import config

    with pytest.raises(TrainConfigError, match="give data.url=<the ingested store>"):
        check_settings(config("data=store", "experiment=stage1_pretrain64"))
