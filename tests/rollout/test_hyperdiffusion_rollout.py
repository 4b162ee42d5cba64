# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout applies the grid-scale dissipation training recorded (``model.hyperdiffusion``)
or the inference config's (``stepper.hyperdiffusion``), records it, and resumes only with it."""

from pathlib import Path

import numpy as np
import torch
import xarray as xr
from hydra import compose, initialize_config_dir

from screamcast.config import register
from screamcast.model.hyperdiffusion import laplacian

from .test_run_nudged import args, cli

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def roughness(path) -> float:
    """Mean |lap(lap(u))| of the last step: the grid-scale content the dissipation removes."""
    u = torch.as_tensor(xr.open_zarr(path)["u"].values[-1].astype(np.float64))  # (6, n, n)
    return float(laplacian(laplacian(u[:, None]))[..., 2:-2, 2:-2].abs().mean())


def test_the_inference_override_damps_records_and_must_match_on_resume(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    plain, damped = tmp_path / "plain.zarr", tmp_path / "damped.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, plain, steps=3)) == 0
    nu = "stepper.hyperdiffusion=0.015"
    assert cli.main(args(tiny_checkpoint, tiny_store, damped, nu, steps=3)) == 0
    assert xr.open_zarr(plain).attrs["hyperdiffusion"] == 0.0  # the checkpoint's
    assert xr.open_zarr(damped).attrs["hyperdiffusion"] == 0.015
    assert roughness(damped) < 0.9 * roughness(plain)  # 0.81 measured
    start = [xr.open_zarr(p)["u"].values[0] for p in (plain, damped)]
    np.testing.assert_array_equal(*start)  # the initial state is as read
    capsys.readouterr()
    assert cli.main(args(tiny_checkpoint, tiny_store, plain, nu, "--resume", steps=3)) == 2
    assert "hyperdiffusion: output has 0.0, this run 0.015" in capsys.readouterr().err
    bad = args(tiny_checkpoint, tiny_store, tmp_path / "bad.zarr", "stepper.hyperdiffusion=0.5")
    assert cli.main(bad) == 2
    assert "stepper.hyperdiffusion" in capsys.readouterr().err
    assert not (tmp_path / "bad.zarr").exists()


def test_a_run_trained_with_it_rolls_out_with_it(tiny_store, tmp_path):
    from screamcast.train.loop import train

    register()
    run = tmp_path / "run"
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        cfg = compose(
            "train",
            overrides=["experiment=pytest", f"data.url={tiny_store}", f"run_dir={run}",
                       "steps=2", "model.hyperdiffusion=0.004"],
        )  # fmt: skip
    train(cfg)
    out = tmp_path / "o.zarr"
    assert cli.main(args(run / "latest.pth", tiny_store, out, steps=1)) == 0
    assert xr.open_zarr(out).attrs["hyperdiffusion"] == 0.004
