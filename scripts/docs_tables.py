# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Regenerate the tables of the user guides that come from code: ``python scripts/docs_tables.py``
(``--check``: exit 1 if a guide is out of step, as the test does)."""

from __future__ import annotations

import sys
from pathlib import Path

from screamcast.cli.rollout_flags import options_table

ROOT = Path(__file__).resolve().parents[1]
TABLES = {ROOT / "docs" / "rollout.md": ("options", options_table)}


def with_table(text: str, name: str, table: str) -> str:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def main(argv: list[str]) -> int:
    stale = []
    for path, (name, make) in TABLES.items():
        text = path.read_text()
        fresh = with_table(text, name, make())
        if fresh != text:
            stale.append(str(path.relative_to(ROOT)))
            if "--check" not in argv:
                path.write_text(fresh)
    if stale and "--check" in argv:
        print(f"out of step: {', '.join(stale)} (run python scripts/docs_tables.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
