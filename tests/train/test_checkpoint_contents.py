# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from screamcast import checkpoint_format as fmt
from screamcast.config import DataConfig, TrainConfig
from screamcast.data.stats import Stats
from screamcast.train.checkpoint_contents import (
    check_compatible,
    describe,
    match_parameter_layout,
)


def cfg(**data):
    secret = {"key": "AKIA-not-a-real-key", "secret": "hunter2", "anon": False}
    d = DataConfig(url="s3://bucket/tiny.zarr", n=16, storage_options=secret, **data)
    return OmegaConf.structured(TrainConfig(data=d))


def description(c) -> fmt.ModelDescription:
    stats = Stats({"u": 1.0}, {"u": 2.0}, {"u": 0.5})
    return describe(c, stats, 180.0, "ne8pg2", "noleap", {"T": [3, 7]})


def test_the_description_holds_what_inference_needs_and_no_secret():
    desc = description(cfg())
    assert desc.grid.n == 16 and desc.grid.name == "ne8pg2" and desc.calendar == "noleap"
    assert desc.time_step_minutes == 180.0 and desc.levels == {"T": [3, 7]}
    assert desc.stats["std"] == {"u": 2.0}
    said = str(desc.to_dict())
    assert "hunter2" not in said and "AKIA-not-a-real-key" not in said
    assert desc.config["data"]["storage_options"]["anon"] is False  # not a secret: kept


def test_another_architecture_or_grid_is_refused_naming_it():
    old = description(cfg())
    check_compatible(old, cfg(), "a.pth", "ne8pg2")  # the same config: accepted
    wider = cfg()
    wider.model.width = old.model["width"] * 2
    with pytest.raises(fmt.IncompatibleCheckpointError, match="model.width"):
        check_compatible(old, wider, "a.pth", "ne8pg2")
    with pytest.raises(fmt.IncompatibleCheckpointError, match="grid.name"):
        check_compatible(old, cfg(), "a.pth", "ne16pg2")


HS = Path(__file__).resolve().parents[2] / "benchmarks" / "held_suarez" / "emulator.pth"


def test_a_variables_mismatch_is_answered_with_variables_not_other_settings():
    """init_from the Held-Suarez emulator (U, V, T, PS; no solar time) with the tiny store's
    variables: only its variables, or training from scratch, can fix that."""
    hs = fmt.ModelDescription.from_dict(fmt.load(HS)["description"])
    with pytest.raises(fmt.IncompatibleCheckpointError) as refused:
        check_compatible(hs, cfg(), "hs.pth", "ne8pg2")
    said = str(refused.value)
    assert said.startswith("checkpoint hs.pth has variables.prognostic=['U[0]'"), said
    prognostic = ",".join(f'"{v}[{k}]"' for v in "UVT" for k in range(4))
    assert f"give its variables (data.prognostic=[{prognostic},PS] data.diagnostic=[] " in said
    assert "data.static=[]) and a store that has them" in said
    assert "train from scratch (no init_from, a new run_dir)" in said
    assert "upsample" not in said and "solar_time" not in said and "grid_metric" not in said


def test_a_grid_or_model_mismatch_is_answered_with_its_own_settings():
    old = description(cfg(tile=8, halo=4))
    bigger = cfg()
    bigger.data.n = 32
    with pytest.raises(fmt.IncompatibleCheckpointError) as refused:
        check_compatible(old, bigger, "a.pth", "ne8pg2")
    said = str(refused.value)
    assert "has grid.n=16, but the config has 32" in said
    assert "give a store on ne8pg2 (data.url) and data.n=16 data.tile=8 data.halo=4" in said
    assert "data.prognostic" not in said and "model." not in said
    other = cfg(solar_time=False)
    other.model.upsample, other.model.width = "nearest", old.model["width"] * 2
    with pytest.raises(fmt.IncompatibleCheckpointError) as refused:
        check_compatible(old, other, "a.pth", "ne8pg2")
    said = str(refused.value)
    want = f"give its settings: model.width={old.model['width']} model.upsample=bilinear "
    assert said.endswith(want + "data.solar_time=true"), said


def test_loaded_moments_take_their_parameters_layout():
    """A checkpoint from a channels_last run: moments contiguous again for a contiguous model."""
    conv = torch.nn.Conv2d(3, 4, 3)
    opt = torch.optim.AdamW(conv.parameters())
    conv(torch.randn(1, 3, 5, 5)).sum().backward()
    opt.step()
    p = conv.weight
    moment = opt.state[p]["exp_avg"]
    opt.state[p]["exp_avg"] = moment.to(memory_format=torch.channels_last)
    assert opt.state[p]["exp_avg"].stride() != p.stride()
    match_parameter_layout(opt)
    assert opt.state[p]["exp_avg"].stride() == p.stride()
    assert torch.equal(opt.state[p]["exp_avg"], moment)
