# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""screamcast-launch: a failure on several ranks ends in each distinct error once, naming its
ranks, with no launcher traceback (issue 56)."""

import subprocess
import sys

import pytest

from screamcast.cli.launch import main, resolve, summary


@pytest.mark.distributed
def test_a_failure_on_two_ranks_is_one_line(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "screamcast.cli.launch", "--nproc-per-node", "2"]
        + ["screamcast-rollout", "--checkpoint", str(tmp_path / "none.pth")]
        + ["--data", str(tmp_path / "ic.zarr"), "--output", str(tmp_path / "o.zarr")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    # the launcher stops the other rank once one fails: on a loaded machine it may stop it
    # before it wrote the same error (then only the rank that wrote it is named)
    said = f"--checkpoint {tmp_path / 'none.pth'} does not exist"
    assert lines in [[f"error ({who} of 2): {said}"] for who in ("every rank", "rank 0", "rank 1")]


def test_distinct_errors_are_listed_once_each_with_their_ranks(tmp_path):
    (tmp_path / "rank0.txt").write_text("error: a\n")
    (tmp_path / "rank1.txt").write_text("error: b\nerror: b\n")
    (tmp_path / "rank2.txt").write_text("error: a\n")
    assert summary(tmp_path, 4) == ["error (rank 0, 2 of 4): a", "error (rank 1 of 4): b"]
    assert summary(tmp_path, 3)[0] == "error (rank 0, 2 of 3): a"


def test_commands_resolve_to_this_python():
    assert resolve("screamcast-rollout") == (sys.executable, ["-m", "screamcast.cli.rollout"])
    assert resolve("scripts/train.py") == (sys.executable, ["scripts/train.py"])
    with pytest.raises(ValueError, match="not found"):
        resolve("no-such-command-here")


@pytest.mark.parametrize("n", ["0", "-1"])
def test_no_ranks_per_node_is_refused_before_anything_starts(n, capsys, tmp_path):
    """``--nproc-per-node 0`` (or less) ends at once in exit 2 and one line naming the flag:
    no launcher started (torch's would fail on an assertion of its own)."""
    assert main(["--nproc-per-node", n, "screamcast-rollout", "--output", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: --nproc-per-node must be >= 1\n"
