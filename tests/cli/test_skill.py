# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-skill`` on inputs unlike its run's: one worded line and exit 2, no traceback
(issue 42: it printed a StoreError's traceback)."""

import shutil

from screamcast.cli import skill


def test_a_missing_run_or_a_store_without_the_variables_is_one_line(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    assert skill.main(["experiment=pytest", f"run_dir={tmp_path / 'none'}"]) == 2
    assert f"{tmp_path / 'none' / 'best.pth'} does not exist" in capsys.readouterr().err
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(tiny_checkpoint, run / "best.pth")
    argv = ["data=held_suarez", f"data.url={tiny_store}", f"run_dir={run}"]
    assert skill.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: store") and "has no variable 'U'" in err
    assert "Traceback" not in err
