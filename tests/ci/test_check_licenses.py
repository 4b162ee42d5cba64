# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ci" / "check_licenses.py"
GOOD = "# SPDX-License-Identifier: Apache-2.0\n# Copyright 2026 The screamcast authors\nx = 1\n"


def run(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True
    )


def test_lists_every_offender_and_fails(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.py").write_text(GOOD)
    (tmp_path / "pkg" / "shebang.py").write_text("#!/usr/bin/env python3\n" + GOOD)
    (tmp_path / "pkg" / "none.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "no_copyright.py").write_text("# SPDX-License-Identifier: Apache-2.0\n")
    (tmp_path / "pkg" / "wrong.py").write_text(
        "# SPDX-License-Identifier: MIT\n# Copyright 2026 A\n"
    )
    (tmp_path / "pkg" / "notes.txt").write_text("not python\n")
    result = run(tmp_path / "pkg")
    assert result.returncode == 1
    lines = sorted(result.stdout.splitlines())
    assert len(lines) == 3, result.stdout
    assert "no_copyright.py: second line is not" in lines[0]
    assert "none.py: first line is not" in lines[1]
    assert "wrong.py: first line is not" in lines[2]
    assert "3 file(s) without the SPDX licence header" in result.stderr


def test_clean_tree_passes(tmp_path):
    (tmp_path / "a.py").write_text(GOOD)
    assert run(tmp_path / "a.py").returncode == 0


def test_the_repository_itself_is_clean():
    result = run()
    assert result.returncode == 0, result.stdout
