# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A run_dir that holds checkpoints, given again with another config, is a resume: said at the
start, with the keys that differ from the run's config.yaml."""

import shutil

from screamcast.train.loop import train
from screamcast.train.run_dir import record_config, resume_note
from tests.train.test_loop import config

BASE = ["experiment=pytest", "model.width=4", "keep_every=0"]


def test_reusing_a_run_dir_with_other_settings_says_it_resumes(tiny_store, tmp_path, capsys):
    run, copy = tmp_path / "run", tmp_path / "copy.zarr"
    shutil.copytree(tiny_store, copy)
    train(config(*BASE, f"data.url={tiny_store}", f"run_dir={run}", "steps=2", "optim.lr=2e-3"))
    capsys.readouterr()
    train(config(*BASE, f"data.url={copy}", f"run_dir={run}", "steps=3", "optim.lr=1e-3"))
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"{run} holds checkpoints: this run resumes from {run}/latest.pth")
    assert f"differs from {run}/config.yaml in data.url ({tiny_store} -> {copy}), " in first
    assert "optim.lr (0.002 -> 0.001), steps (2 -> 3);" in first
    assert "resumed from" in out and "at step 2" in out


def test_the_same_settings_or_a_fresh_run_dir_say_nothing(tiny_store, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    cfg = config(*BASE, f"data.url={tiny_store}", f"run_dir={run}", "steps=2")
    record_config(cfg, run)
    assert resume_note(cfg, run) is None  # no checkpoint: a fresh run
    (run / "latest.pth").write_bytes(b"")
    assert resume_note(cfg, run) is None  # the same config
    quieter = config(*BASE, f"data.url={tiny_store}", f"run_dir={run}", "steps=2", "log_every=7")
    assert resume_note(quieter, run) is None  # how it reports is not the run
    longer = config(*BASE, f"data.url={tiny_store}", f"run_dir={run}", "steps=5")
    assert "in steps (2 -> 5);" in resume_note(longer, run)


def test_a_data_store_rerun_of_the_same_command_says_nothing(tmp_path):
    """data=store: the recorded config holds the store's values and the channels (T_mid[0]
    ..), the rerun's the nulls and the bare names; the same command is not 'a config that
    differs'. A variable really dropped still is."""
    from omegaconf import OmegaConf

    from tests.train.test_loop import config

    run = tmp_path / "run"
    run.mkdir()
    (run / "latest.pth").write_bytes(b"")
    given = config("data=store", "data.url=scream.zarr", f"run_dir={run}")
    given.data.prognostic = ["T_mid", "ps"]
    resolved = config("data=store", "data.url=scream.zarr", f"run_dir={run}")
    for key, value in {"n": 8, "tile": 4, "halo": 2, "train_range": [0, -2]}.items():
        OmegaConf.update(resolved, f"data.{key}", value)
    resolved.data.prognostic, resolved.data.static = ["T_mid[0]", "T_mid[1]", "ps"], []
    record_config(resolved, run)
    assert resume_note(given, run) is None
    given.data.prognostic = ["T_mid"]
    assert "data.prognostic" in resume_note(given, run)
