# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A production YAML (``--config``) is read strictly: a misspelt key is an error naming it and
the valid ones, never a setting silently left at its default."""

from pathlib import Path

import pytest

from tests.rollout.test_run_nudged import cli

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = ["--checkpoint", "c.pth", "--data", "d.zarr", "--output", "o.zarr"]


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "configs/production").glob("*.yaml"))
)
def test_every_production_config_is_read(name):
    args = cli.parse(["--config", str(ROOT / "configs/production" / name), *REQUIRED])
    assert args.batch_size == 32 or args.batch_size > 0


def test_a_misspelt_key_fails_naming_it(tmp_path, capsys):
    good = (ROOT / "configs/production/multistep_nudged.yaml").read_text()
    assert "nudge_tau_hours: 6.0" in good
    args = cli.parse(
        ["--config", str(ROOT / "configs/production/multistep_nudged.yaml"), *REQUIRED]
    )
    assert args.nudge_tau_hours == 6.0
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.replace("nudge_tau_hours: 6.0", "nudge_tau_hour: 1.0"))
    with pytest.raises(SystemExit) as exit_:
        cli.parse(["--config", str(bad), *REQUIRED])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown key 'rollout.nudge_tau_hour'" in err and "nudge_tau_hours" in err
    bad.write_text(good.replace("model:", "modle:"))
    with pytest.raises(SystemExit):
        cli.parse(["--config", str(bad), *REQUIRED])
    assert "unknown section 'modle'" in capsys.readouterr().err
    bad.write_text(good.replace("tile: 32", "tiles: 32"))
    with pytest.raises(SystemExit):
        cli.parse(["--config", str(bad), *REQUIRED])
    assert "unknown key 'grid.tiles' (valid: halo, n, name, tile)" in capsys.readouterr().err


def test_a_config_key_that_sets_a_flag_takes_effect(tmp_path):
    good = (ROOT / "configs/production/multistep_nudged.yaml").read_text()
    changed = tmp_path / "c.yaml"
    changed.write_text(good.replace("nudge_tau_hours: 6.0", "nudge_tau_hours: 1.5"))
    assert cli.parse(["--config", str(changed), *REQUIRED]).nudge_tau_hours == 1.5
    # a flag given on the command line wins over the file
    flag = cli.parse(["--config", str(changed), *REQUIRED, "--nudge-tau-hours", "3"])
    assert flag.nudge_tau_hours == 3.0
