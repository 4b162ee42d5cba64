# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""screamcast-train's front door: mistakes answered before Hydra and torch are imported, a
refused start leaves no folder it made, init_from says what it loaded."""

import subprocess
import sys

from screamcast.train.metrics_log import CurrentRate
from tests.train.test_loop import ENV, _cli, config

PROBE = """
import sys
import screamcast.cli.train as t
sys.argv = ["screamcast-train", *sys.argv[1:]]
try:
    t.main()
except SystemExit as e:
    print("exit", e.code, "torch" in sys.modules)
"""


def test_a_misspelt_key_is_answered_before_torch_or_hydra_is_imported(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", PROBE, "optim.lrr=1e-3", f"run_dir={tmp_path}/r"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.strip() == "exit 2 False", run.stderr[-2000:]
    assert "error: unknown key 'optim.lrr' (known keys of optim: betas" in run.stderr
    assert not (tmp_path / "r").exists()


def test_a_refused_start_removes_only_a_run_dir_it_made(tiny_store, tmp_path):
    """A store that does not exist: exit 2; the new run_dir (with Hydra's folder) is gone; a
    run_dir the user had, with their file in it, is left as it was."""
    new = tmp_path / "new"
    cmd = _cli(tiny_store, new, "data.url=/nonexistent/store.zarr")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
    assert run.returncode == 2 and "error:" in run.stderr, run.stderr[-2000:]
    assert not new.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    cmd = _cli(tiny_store, mine, "data.url=/nonexistent/store.zarr")
    assert subprocess.run(cmd, capture_output=True, timeout=300, env=ENV).returncode == 2
    assert (mine / "notes.txt").read_text() == "mine"


def test_a_config_only_mistake_is_refused_by_key_before_any_store_is_read(tmp_path):
    """data.crop past the face: named by its keys, though the store does not exist."""
    run_dir = tmp_path / "r"
    cmd = [
        sys.executable, "-m", "screamcast.cli.train", "data.url=/nonexistent.zarr",
        "data.n=16", "data.crop=64", f"run_dir={run_dir}",
    ]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "error: data.crop=64 must be in 1..32 (the face data.n=16 + 2 * data.halo=8)" in (
        run.stderr
    )
    assert not run_dir.exists()


def test_init_from_says_what_it_loaded(tiny_store, tmp_path, capsys):
    from screamcast.train.loop import train

    base = ["experiment=pytest", f"data.url={tiny_store}", "steps=1", "keep_every=0"]
    first = train(config(*base, f"run_dir={tmp_path / 'a'}")) / "latest.pth"
    capsys.readouterr()
    train(config(*base, f"run_dir={tmp_path / 'b'}", f"init_from={first}"))
    said = capsys.readouterr().out
    assert f"init_from: loaded the weights of {first} (step 1; prognostic u, v," in said
    assert "optimizer, schedule and step start afresh" in said


def test_the_rate_is_the_current_one_not_the_average_since_start_up():
    """A slow start (the statistics pass, compilation) then 100 images a second: the rate
    reads 100 once the window has passed, not the average since start-up."""
    clock = [0.0]
    rate = CurrentRate(0, window=2.0)
    rate.clock = lambda: clock[0]
    rate.marks = [(0.0, 0)]
    clock[0] = 10.0
    rate.update(10)  # 10 images in the first 10 s
    for k in range(1, 41):
        clock[0] = 10.0 + 0.1 * k
        got = rate.update(10 + 10 * k)
    assert abs(got - 100.0) < 1e-6, got


def test_a_run_dir_another_start_holds_is_never_removed(tmp_path):
    """A job submitted twice: the refused start must not remove the directory (and lock) of
    the start that holds it."""
    from screamcast.train.run_dir import claim, remove_unstarted

    run_dir = tmp_path / "run"
    held = claim(run_dir)
    (run_dir / "hydra").mkdir()
    try:
        assert not remove_unstarted(run_dir) and (run_dir / ".lock").exists()
    finally:
        held.release()
    assert remove_unstarted(run_dir) and not run_dir.exists()
