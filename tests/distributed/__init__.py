# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Two-rank scripts (Fabric re-launches each for rank 1) and how the tests run them."""

import subprocess
import sys
from pathlib import Path

import pytest


def run_two_ranks(script: Path, *args: str, cwd: Path, timeout: int) -> None:
    """Run ``script`` (it starts its own second rank); a hang in a barrier fails the test
    instead of stalling CI, a non-zero exit fails it with the ranks' stderr."""
    try:
        proc = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"two-rank run hung: {err.stdout!r} {err.stderr!r}")
    assert proc.returncode == 0, proc.stderr[-3000:]
