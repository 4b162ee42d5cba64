# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The README's commands take arguments: ``bash ci/demo.sh --help`` failed inside pip with
``InvalidRequirement: Parse error at "'[--help]'"`` (the sourced bootstrap took the caller's
``$1`` as the pip extra)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_passes_its_arguments_to_the_rollout():
    venv = Path(sys.executable).parents[1]  # the suite's own environment, active or not
    env = os.environ | {"VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{os.environ['PATH']}"}
    run = subprocess.run(
        ["bash", "ci/demo.sh", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "usage: run_screamcast_nudged.py" in run.stdout and "--halo-adjoint" in run.stdout


def test_bootstrap_requires_its_argument():
    run = subprocess.run(
        ["bash", "-c", "source ci/bootstrap.sh --help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "usage: source ci/bootstrap.sh base|dev" in run.stderr
