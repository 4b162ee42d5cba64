#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Check that every Python file starts with the SPDX licence header.

Usage: ``python ci/check_licenses.py [FILE_OR_DIR ...]`` (default: the repository's Python
folders). The header is the first two lines (after an optional shebang)::

    # SPDX-License-Identifier: Apache-2.0
    # Copyright <year> <holder>

Lists every offender and exits 1 if there is any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SPDX = "# SPDX-License-Identifier: Apache-2.0"
COPYRIGHT = re.compile(r"^# Copyright (\(c\) )?\d{4}(-\d{4})? \S.*$")
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = ("screamcast", "scripts", "tests", "ci", "benchmarks", "configs", "docs")
SKIP_DIRS = {".venv", "venv", ".git", "build", "dist", "__pycache__", ".eggs", "outputs"}


def header_problem(path: Path) -> str | None:
    """What is wrong with ``path``'s header, or None if it is fine."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        return f"cannot be read as UTF-8 text ({err})"
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if not lines or lines[0].strip() != SPDX:
        return f"first line is not '{SPDX}'"
    if len(lines) < 2 or not COPYRIGHT.match(lines[1].strip()):
        return "second line is not '# Copyright <year> <holder>'"
    return None


def python_files(targets: list[Path]) -> list[Path]:
    files: list[Path] = []
    for target in targets:
        if target.is_file():
            if target.suffix == ".py":
                files.append(target)
        elif target.is_dir():
            for path in sorted(target.rglob("*.py")):
                if not SKIP_DIRS.intersection(path.relative_to(target).parts):
                    files.append(path)
    return files


def main(argv: list[str]) -> int:
    if argv:
        targets = [Path(a) for a in argv]
    else:
        targets = [ROOT / d for d in DEFAULT_DIRS] + sorted(ROOT.glob("*.py"))
    offenders = [(p, why) for p in python_files(targets) if (why := header_problem(p))]
    for path, why in offenders:
        print(f"{path}: {why}")
    if offenders:
        print(f"{len(offenders)} file(s) without the SPDX licence header", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
