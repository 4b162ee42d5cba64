# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The user guides: their generated tables in step with the code, no issue numbers, links
that resolve, each readable in minutes."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def test_the_generated_tables_are_in_step_with_the_code():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_tables.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_user_guides_cite_no_issue_numbers():
    cited = [
        f"{p.name}: {m.group(0)}"
        for p in GUIDES
        for m in re.finditer(r"\bissues? \d+", p.read_text())
    ]
    assert not cited, cited


def test_links_between_docs_resolve():
    broken = []
    for p in [*GUIDES, *sorted((ROOT / "docs" / "notes").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", p.read_text()):
            if "://" not in target and not (p.parent / target).exists():
                broken.append(f"{p.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_each_guide_is_read_in_minutes():
    """Under ~3,000 words (about 12 minutes); the lab book in docs/notes/ holds the rest."""
    long = {p.name: len(p.read_text().split()) for p in GUIDES}
    assert all(words < 3000 for words in long.values()), long
