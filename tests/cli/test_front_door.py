# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a new user meets first (issue 56): the demo takes the rollout's flags and leaves no
partial output when it fails, the commands' help reads as plain text under their own names,
training's help lists the groups it takes, and the skill table says what its columns are."""

import subprocess
import sys
from pathlib import Path

from screamcast.cli import rollout

ROOT = Path(__file__).resolve().parents[2]


def test_a_failed_demo_removes_its_new_output_and_says_how_to_go_on(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo_out" / "rollout_003.zarr"
    argv = ["--checkpoint", "c.pth", "--output", str(out), "--guard", "warn"]
    monkeypatch.setattr("screamcast.cli.demo.demo_arguments", lambda: argv[:4])
    seen = []

    def failing(args):
        import zarr

        seen.append(args)
        group = zarr.open_group(out, mode="w")  # a partial output, as a stopped run leaves it
        group.attrs["stopped"] = {"step": 1}
        return 2

    monkeypatch.setattr(rollout, "_main", failing)
    assert rollout.main(["--demo", "--guard", "warn"]) == 2
    assert seen == [argv] and not out.exists()
    err = capsys.readouterr().err
    assert "partial output" in err and "bash ci/demo.sh --guard warn" in err
    monkeypatch.setattr(rollout, "_main", lambda args: 2)  # a config error: no guard hint
    assert rollout.main(["--demo", "--steps", "0"]) == 2
    assert "--guard warn" not in capsys.readouterr().err


def test_the_demos_own_flag_gives_way_to_the_users():
    demo = ["--checkpoint", "c.pth", "--steps", "48", "--halo-adjoint"]
    assert rollout.with_flags(demo, ["--steps", "4"]) == [
        "--checkpoint", "c.pth", "--halo-adjoint", "--steps", "4"
    ]  # fmt: skip
    assert rollout.with_flags(demo, ["--halo-adjoint"]) == demo
    assert "--demo" in (ROOT / "ci" / "demo.sh").read_text()


def test_an_existing_output_is_never_removed_by_a_failed_demo(tmp_path, monkeypatch):
    out = tmp_path / "kept.zarr"
    out.mkdir()
    monkeypatch.setattr("screamcast.cli.demo.demo_arguments", lambda: ["--output", str(out)])
    monkeypatch.setattr(rollout, "_main", lambda args: 2)
    assert rollout.main(["--demo"]) == 2 and out.exists()


def test_the_rollouts_help_is_plain_text_under_the_name_it_was_run_by():
    for command in (
        ["screamcast-rollout"],
        [sys.executable, "scripts/ace/run_screamcast_nudged.py"],
    ):
        exe = (
            command[0]
            if command[0] != "screamcast-rollout"
            else str(Path(sys.executable).parent / "screamcast-rollout")
        )
        done = subprocess.run([exe, *command[1:], "--help"], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)  # fmt: skip
        assert done.returncode == 0
        name = Path(command[-1]).name
        assert done.stdout.startswith(f"usage: {name}")
        for markup in ("``", ":mod:", ":func:", ":class:"):
            assert markup not in done.stdout
        assert "--demo" in done.stdout


def test_trainings_help_lists_only_the_groups_it_takes():
    done = subprocess.run([sys.executable, "scripts/train.py", "--help"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "production" not in done.stdout
    listed = {line.split(":")[0].strip() for line in done.stdout.splitlines() if ": " in line}
    groups = {p.name for p in (ROOT / "configs").iterdir() if p.is_dir()} - {"production"}
    assert groups <= listed
    for group in groups:
        for option in (ROOT / "configs" / group).glob("*.yaml"):
            assert option.stem in done.stdout, (group, option.stem)


def test_the_skill_table_labels_its_columns_with_hours_and_units(capsys):
    metrics = {"T": {"rmse": {1: 0.1, 2: 0.2, 4: 0.3}, "persistence_rmse": {1: 1, 2: 2, 4: 3}}}
    rollout.print_table(metrics, 4, 6.0, {"T": "K"})
    out = capsys.readouterr().out
    assert "(1 step = 6 h)" in out and "T [K]" in out
    assert "6 h" in out and "24 h" in out and "variable [units]" in out
