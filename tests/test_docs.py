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


# top-level folders of the repository: a path a doc names there is one a clone must have
SHIPPED = ("benchmarks/", "tests/data/", "screamcast/", "configs/")


def test_every_checkpoint_and_store_the_docs_name_in_the_repository_is_tracked_and_opens():
    """A clean clone has each one (``.gitignore`` drops ``*.pth`` but these), and each opens:
    a checkpoint builds its network with its weights, a store reads as one."""
    import xarray as xr

    from screamcast import checkpoint_format as fmt
    from screamcast.data.stats import Stats
    from screamcast.model.pipeline import build_pipeline

    named = {
        m.group(0)
        for p in GUIDES
        for m in re.finditer(r"[\w./-]+\.(?:pth|zarr)\b", p.read_text())
        if m.group(0).startswith(SHIPPED)
    }
    assert any(n.endswith("emulator.pth") for n in named), named
    tracked = subprocess.run(
        ["git", "ls-files", *named], capture_output=True, text=True, cwd=ROOT
    ).stdout.split()
    missing = [n for n in named if not any(t == n or t.startswith(n + "/") for t in tracked)]
    assert not missing, f"named by the docs but not in the repository: {missing}"
    for name in sorted(named):
        if name.endswith(".pth"):
            ckpt = fmt.load(ROOT / name)
            desc = ckpt["description"]
            cfg = fmt.ModelDescription.from_dict(desc).config
            from omegaconf import OmegaConf

            pipeline = build_pipeline(OmegaConf.create(cfg), Stats.from_dict(desc["stats"]))
            pipeline.load_state_dict(ckpt["model"])
        else:
            assert xr.open_zarr(ROOT / name, consolidated=False).sizes["time"] >= 1


def _outside_pointers(guide: Path, tracked_names: set[str], written_names: set[str]) -> list[str]:
    """What ``guide`` points at outside the repository: a ``../`` path that does not land on a
    file of the clone, or a ``.md`` document neither in the repository nor one the package
    writes (``report.md``)."""
    text, found = guide.read_text(), []
    for path in re.findall(r"(?<![\w/.])((?:\.\./)+[\w./-]*)", text):
        target = (guide.parent / path).resolve()
        if ROOT not in target.parents or not target.exists():
            found.append(f"{guide.relative_to(ROOT)} -> {path}")
    for name in set(re.findall(r"[\w.-]+\.md\b", text)):
        if name not in tracked_names and name not in written_names:
            found.append(f"{guide.relative_to(ROOT)} -> {name} (not in the repository)")
    return found


def test_user_guides_point_at_nothing_outside_the_repository():
    """A reader of a clone has only the clone: no ``../shared/`` path, no design note kept
    beside the repository."""
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT)
    tracked_names = {Path(f).name for f in tracked.stdout.split()}
    source = " ".join(p.read_text() for p in (ROOT / "screamcast").rglob("*.py"))
    written_names = set(re.findall(r"[\"']([\w.-]+\.md)[\"']", source))  # report.md
    outside = [f for p in GUIDES for f in _outside_pointers(p, tracked_names, written_names)]
    assert not outside, outside
