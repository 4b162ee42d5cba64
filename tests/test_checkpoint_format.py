# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The typed, versioned checkpoint: old formats keep loading, newer ones are refused clearly."""

import shutil
from pathlib import Path

import pytest
import torch

from screamcast import checkpoint_format as fmt
from screamcast import checkpoint_io as cio

FIXTURES = Path(__file__).resolve().parent / "data" / "checkpoints"
FORMAT0 = FIXTURES / "format0_pytest_width4.pth"  # written by commit 9925a93 (README there)


def test_a_format0_checkpoint_migrates_to_a_typed_description():
    raw = cio.load_checkpoint(FORMAT0)
    assert "format_version" not in raw and "grid" in raw  # really the old layout
    ckpt = fmt.load_for_inference(FORMAT0)
    d = ckpt.description
    assert d.grid == fmt.GridSpec(n=16, tile=8, halo=4, name="ne8pg2")  # the approximating grid
    assert d.variables.prognostic == ("u", "v", "vorticity", "tracer", "temperature")
    assert d.variables.diagnostic == ("precip",) and d.time_step_minutes == 180.0
    # written before the decoder's option: nearest upsampling, no solar-time inputs; before
    # the grid-scale dissipation: none
    model = {"width": 4, "levels": 2, "blocks": 1, "upsample": "nearest", "hyperdiffusion": 0.0}
    assert d.model == model
    assert d.inputs == {
        "solar_time": False,
        "grid_metric": False,
        "insolation": True,
        "input_times": 1,
    }
    assert "u" in d.stats["mean"]
    assert d.calendar == "proleptic_gregorian" and len(ckpt.sha256) == 64
    from omegaconf import OmegaConf

    from screamcast.data.stats import Stats
    from screamcast.model.pipeline import build_pipeline

    pipeline = build_pipeline(OmegaConf.create(d.config), Stats.from_dict(d.stats))
    pipeline.load_state_dict(ckpt.weights)  # strict: every weight is there
    from screamcast.model.pipeline import pipeline_of

    pipeline_of(d, Stats.from_dict(d.stats)).load_state_dict(ckpt.weights)  # from network


def test_a_format0_checkpoint_rolls_out(tiny_store, tmp_path):
    from tests.rollout.test_run_nudged import args, cli, open_out

    assert cli.main(args(FORMAT0, tiny_store, tmp_path / "o.zarr", steps=2)) == 0
    assert open_out(tmp_path / "o.zarr").sizes["time"] == 3


def test_a_format0_run_resumes_and_saves_the_current_format(tiny_store, tmp_path):
    from screamcast.train.loop import train
    from tests.train.test_loop import config

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(FORMAT0, run / "latest.pth")
    old = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={run}", "model.width=4"]
    # today's defaults (bilinear upsampling, solar-time and grid-metric inputs) are another
    # architecture: refused, saying which settings the old run had
    said = "model.upsample=nearest data.solar_time=false data.grid_metric=false"
    with pytest.raises(fmt.IncompatibleCheckpointError, match=said):
        train(config(*old, "steps=4", "keep_every=0"))
    as_before = ["model.upsample=nearest", "data.solar_time=false", "data.grid_metric=false"]
    train(config(*old, *as_before, "steps=4", "keep_every=0"))
    raw = cio.load_checkpoint(run / "latest.pth")
    assert raw["format_version"] == fmt.FORMAT_VERSION and raw["step"] == 4
    assert raw["description"]["grid"] == {"n": 16, "tile": 8, "halo": 4, "name": "ne8pg2"}


def test_a_newer_format_is_refused_clearly(tmp_path):
    raw = fmt.load(FORMAT0)
    raw["format_version"] = fmt.FORMAT_VERSION + 1
    torch.save(raw, tmp_path / "future.pth")
    with pytest.raises(
        fmt.IncompatibleCheckpointError,
        match=f"format {fmt.FORMAT_VERSION + 1}, written by a newer",
    ):
        fmt.load_for_inference(tmp_path / "future.pth")


def test_the_one_compatibility_check_names_the_key():
    d = fmt.load_for_inference(FORMAT0).description
    d.check({"model": {"width": 4}, "grid": {"n": 16, "tile": 8}}, "a.pth", "x.yaml")
    with pytest.raises(
        fmt.IncompatibleCheckpointError, match=r"checkpoint a.pth has grid.halo=4, but x.yaml has 8"
    ):
        d.check({"grid": {"halo": 8}}, "a.pth", "x.yaml")
    with pytest.raises(fmt.IncompatibleCheckpointError, match="variables.static"):
        d.check({"variables": {"static": ["orography"]}}, "a.pth", "the config")


def test_pack_and_load_round_trip(tmp_path):
    d = fmt.load_for_inference(FORMAT0).description
    state = fmt.pack(d, model={"w": torch.ones(2)}, step=3)
    torch.save(state, tmp_path / "c.pth")
    back = fmt.load_for_inference(tmp_path / "c.pth")
    assert back.description == d and torch.equal(back.weights["w"], torch.ones(2))
    assert fmt.load(tmp_path / "c.pth")["step"] == 3


FORMAT3 = FIXTURES / "format3_global_width4_corrected.pth"  # written at 914b067 (README)


def test_a_format3_checkpoint_gets_its_model_only_config_from_its_training_config():
    """Format 4 reads the network from ``network`` only; a format-3 checkpoint's comes from
    its training config: the architecture with its dissipation, its inputs, its corrector."""
    assert cio.load_checkpoint(FORMAT3)["format_version"] == 3
    d = fmt.load_for_inference(FORMAT3).description
    model = {"width": 4, "levels": 2, "blocks": 1, "upsample": "bilinear", "hyperdiffusion": 0.002}
    assert d.model == model and d.network["pipeline"]["precip_name"] == "precip"
    assert d.correctors == [{"type": "mean_temperature", "config": {"variable": "temperature"}}]
    assert d.to_dict()["network"] == d.network  # what a format-4 checkpoint holds
    current = fmt.ModelDescription.from_dict(d.to_dict() | {"config": {}})
    assert current.model == model  # inference needs nothing of the training config


def test_a_format3_checkpoint_rolls_out_with_its_corrector_and_dissipation(tiny_store, tmp_path):
    import json

    import xarray as xr

    from screamcast.cli import rollout as cli
    from tests.rollout.test_run_nudged import args

    out = tmp_path / "o.zarr"
    assert cli.main(args(FORMAT3, tiny_store, out, steps=2)) == 0
    attrs = xr.open_zarr(out, consolidated=False).attrs
    assert json.loads(attrs["correctors"])[0]["type"] == "mean_temperature"
    assert attrs["hyperdiffusion"] == 0.002


def test_a_format4_checkpoint_from_before_two_input_times_takes_one(tmp_path):
    """A format-4 checkpoint's model-only config written before ``input_times`` existed is
    read as one input time, and checks against a config of one (it raised KeyError)."""
    raw = fmt.load(FIXTURES / "format3_global_width4_corrected.pth")  # migrated to format 4
    assert raw["format_version"] == 4
    del raw["description"]["network"]["inputs"]["input_times"]
    del raw["description"]["config"]["data"]["input_times"]
    torch.save(raw, tmp_path / "before.pth")
    d = fmt.load_for_inference(tmp_path / "before.pth").description
    assert d.inputs["input_times"] == 1
    d.check({"inputs": {"input_times": 1}}, "before.pth", "the config")
    with pytest.raises(fmt.IncompatibleCheckpointError, match="inputs.input_times=1"):
        d.check({"inputs": {"input_times": 2}}, "before.pth", "the config")
