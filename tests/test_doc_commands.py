# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Every command the guides show works as written (issue 56): each ```bash block of README.md
and docs/*.md is run here, in a fresh folder that sees the repository's scripts, configs,
benchmarks and package data, or it is marked just above its fence with
``<!-- not run by the tests: <what it needs that CI lacks> -->`` (a GPU, S3 credentials, a
day of training, files the reader brings)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"<!-- not run by the tests: (?P<why>.+?) -->\s*$")
FENCE = re.compile(r"^```(?:bash|sh)\s*$")
SHARED = ("scripts", "configs", "benchmarks", "screamcast")  # what the commands name


def blocks() -> list[tuple[str, int, str, str | None]]:
    """``(guide, line, commands, why not run or None)`` of every bash block."""
    out = []
    for guide in GUIDES:
        lines = guide.read_text().splitlines()
        for i, line in enumerate(lines):
            if not FENCE.match(line):
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            above = lines[i - 1] if i else ""
            mark = MARK.search(above)
            body = "\n".join(lines[i + 1 : end])
            out.append((guide.relative_to(ROOT).as_posix(), i + 1, body, mark and mark["why"]))
    return out


RUN = [b for b in blocks() if b[3] is None]


def test_every_block_is_run_or_says_what_it_needs():
    """A mark names what is missing; the blocks left are all run below."""
    marked = [b for b in blocks() if b[3] is not None]
    assert len(RUN) >= 2 and len(marked) >= 10
    for guide, line, _, why in marked:
        assert len(why.split()) >= 2, f"{guide}:{line}: say what it needs, got {why!r}"


EXIT = re.compile(r"#\s*exit (\d+)\b")  # a command's documented exit status: "# exit 2: why"


def commands_of(block: str) -> list[tuple[str, int]]:
    """``(command, the exit status the guide gives it, 0 by default)`` of a block, its
    continuation lines joined; comment lines dropped."""
    out, pending = [], ""
    for line in block.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = pending + line
        pending = ""
        status = EXIT.search(command)
        out.append((command, int(status.group(1)) if status else 0))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("guide, line, block, _", RUN, ids=[f"{b[0]}:{b[1]}" for b in RUN])
def test_the_block_runs_as_written(guide, line, block, _, tmp_path):
    for name in SHARED:
        (tmp_path / name).symlink_to(ROOT / name)
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for command, status in commands_of(block):
        done = subprocess.run(
            ["bash", "-uo", "pipefail", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        said = f"{guide}:{line}: {command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert done.returncode == status, said
        assert "Traceback" not in done.stderr, said
