# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A production YAML (``--config``) is an inference config read strictly: a misspelt key is an
error naming it and the valid ones, never a setting silently left at its default."""

from pathlib import Path

import pytest

from tests.rollout.test_run_nudged import cli

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = ["--checkpoint", "c.pth", "--data", "d.zarr", "--output", "o.zarr"]


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "configs/production").glob("*.yaml"))
)
def test_every_production_config_is_read(name):
    config, _ = cli.parse(["--config", str(ROOT / "configs/production" / name), *REQUIRED])
    assert config.stepper.batch_size == 32 or config.stepper.batch_size > 0


def test_a_misspelt_key_fails_naming_it(tmp_path, capsys):
    good = (ROOT / "configs/production/multistep_nudged.yaml").read_text()
    assert "tau_hours: 6.0" in good
    config, _ = cli.parse(
        ["--config", str(ROOT / "configs/production/multistep_nudged.yaml"), *REQUIRED]
    )
    assert config.nudging.tau_hours == 6.0
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.replace("tau_hours: 6.0", "tau_hour: 1.0"))
    with pytest.raises(SystemExit) as exit_:
        cli.parse(["--config", str(bad), *REQUIRED])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown key 'nudging.tau_hour'" in err and "tau_hours" in err
    bad.write_text(good.replace("stepper:", "steper:"))
    with pytest.raises(SystemExit):
        cli.parse(["--config", str(bad), *REQUIRED])
    assert "unknown section 'steper'" in capsys.readouterr().err
    bad.write_text(good.replace("tile: 32", "tiles: 32"))
    with pytest.raises(SystemExit):
        cli.parse(["--config", str(bad), *REQUIRED])
    assert (
        "unknown key 'checkpoint.grid.tiles' (valid: halo, n, name, tile)"
        in capsys.readouterr().err
    )
    bad.write_text(good.replace("tau_hours: 6.0", "tau_hours: six"))  # the wrong type
    with pytest.raises(SystemExit):
        cli.parse(["--config", str(bad), *REQUIRED])
    assert "nudging.tau_hours must be a float, got 'six'" in capsys.readouterr().err


def test_a_config_key_that_sets_a_flag_takes_effect(tmp_path):
    good = (ROOT / "configs/production/multistep_nudged.yaml").read_text()
    changed = tmp_path / "c.yaml"
    changed.write_text(good.replace("tau_hours: 6.0", "tau_hours: 1.5"))
    assert cli.parse(["--config", str(changed), *REQUIRED])[0].nudging.tau_hours == 1.5
    # a key=value override wins over the file, and a flag over both
    over, origin = cli.parse(["--config", str(changed), *REQUIRED, "nudging.tau_hours=2"])
    assert over.nudging.tau_hours == 2.0 and origin["nudging.tau_hours"].startswith("override")
    flag, origin = cli.parse(
        ["--config", str(changed), "nudging.tau_hours=2", *REQUIRED, "--nudge-tau-hours", "3"]
    )
    assert flag.nudging.tau_hours == 3.0 and origin["nudging.tau_hours"] == "--nudge-tau-hours"


def test_errors_name_the_flag_or_the_key_that_set_a_value(tmp_path, capsys):
    """The same bad value is named as the user gave it: by its flag, or by its key and file."""
    assert cli.main([*REQUIRED, "--batch-size", "0"]) == 2
    assert "--batch-size must be >= 1" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("stepper: {batch_size: 0}\n")
    assert cli.main(["--config", str(config), *REQUIRED]) == 2
    assert f"stepper.batch_size ({config}) must be >= 1" in capsys.readouterr().err
    assert cli.main([*REQUIRED, "stepper.batch_size=0"]) == 2
    assert "stepper.batch_size (override stepper.batch_size=0) must be" in capsys.readouterr().err


def test_the_config_and_the_flag_form_give_identical_outputs(tmp_path):
    """configs/production/multistep_nudged.yaml against the same settings as flags, on a
    checkpoint of its architecture (the characterisation test's): the same bytes out."""
    import numpy as np
    import xarray as xr

    from screamcast.config.inference import InferenceConfig
    from tests.test_characterization_inference import make_checkpoint, make_inputs

    path = ROOT / "configs/production/multistep_nudged.yaml"
    config, _ = InferenceConfig.load(path)
    store, ref = make_inputs(tmp_path)
    ckpt = make_checkpoint(config.checkpoint.expected(), store, tmp_path / "ckpt.pth")
    common = ["--checkpoint", str(ckpt), "--data", str(store), "--reference", str(ref)]
    common += ["--steps", "3", "--no-progress"]
    a, b = tmp_path / "config.zarr", tmp_path / "flags.zarr"
    assert cli.main([*common, "--output", str(a), "--config", str(path)]) == 0
    flags = ["--halo-adjoint", "--halo-adjoint-window", "cosine", "--batch-size", "32"]
    flags += ["--nudge-tau-hours", "6", "--nudge-vars", "u,v,temperature"]
    assert cli.main([*common, "--output", str(b), *flags]) == 0
    x, y = (xr.open_zarr(p, consolidated=False, chunks=None) for p in (a, b))
    for v in x.data_vars:
        assert x[v].values.tobytes() == y[v].values.tobytes(), v
    assert _settings(x.attrs) == _settings(y.attrs)
    assert x.attrs["nudge_vars"] == "u,v,temperature" and x.attrs["halo_adjoint_window"] == "cosine"
    assert not np.array_equal(x.u.values[-1], x.u.values[0])


def _settings(attrs: dict) -> dict:
    """An output's attrs but its command and its timings (seconds and memory per rank)."""
    return {k: v for k, v in attrs.items() if k != "command" and not k.endswith("_per_rank")}
