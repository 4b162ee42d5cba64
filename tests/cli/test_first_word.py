# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Every command answers --help and a bad flag before the heavy libraries are imported (torch,
xarray, Dask, scikit-learn, JAX): on a busy 2-core machine those imports took 13-30 s before
the first word; the timings are benchmarks/first_word.py's."""

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {  # the installed commands (pyproject.toml's [project.scripts])
    ep.name: ep.value
    for ep in entry_points(group="console_scripts")
    if ep.value.startswith("screamcast.")
}
HEAVY = ("torch", "xarray", "dask", "sklearn", "jax", "lightning", "matplotlib")

PROBE = """
import importlib, sys
module, function = sys.argv[1].split(":")
sys.argv = [sys.argv[1], *sys.argv[2:]]
try:
    code = getattr(importlib.import_module(module), function)()  # as sys.exit(main()) takes it
except SystemExit as e:
    code = e.code
heavy = [m for m in {heavy!r} if m in sys.modules]
print("PROBE", code, ",".join(heavy) or "-")
"""


def probe(target: str, *argv: str) -> tuple[str, str]:
    """``(exit code, heavy modules imported)`` of a command run with ``argv``."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), target, *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = next(x for x in run.stdout.splitlines() if x.startswith("PROBE"))
    _, code, heavy = line.split()
    return code, heavy


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_help_comes_before_the_heavy_imports(command):
    code, heavy = probe(SCRIPTS[command], "--help")
    assert code in ("0", "None"), code
    assert heavy == "-", f"{command} --help imported {heavy}"


@pytest.mark.parametrize("command", sorted(set(SCRIPTS) - {"screamcast-train"}))
def test_a_bad_flag_is_refused_before_the_heavy_imports(command):
    code, heavy = probe(SCRIPTS[command], "--no-such-flag")
    assert code == "2", code
    assert heavy == "-", f"{command} --no-such-flag imported {heavy}"


@pytest.mark.parametrize(
    "command, argv, said",
    [
        (
            "screamcast-rollout",
            ["--checkpoint", "none.pth", "--data", "x", "--output", "o"],
            "error: --checkpoint none.pth does not exist",
        ),
        (
            "screamcast-evaluate",
            ["out.zarr", "--truth", "t.zarr"],
            "error: output out.zarr does not exist",
        ),
    ],
)
def test_a_missing_input_is_named_before_the_heavy_imports(command, argv, said, tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), SCRIPTS[command], *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert said in run.stderr
    assert run.stdout.split()[1:] == ["2", "-"], run.stdout


def test_the_rollout_refuses_an_abbreviated_flag(capsys):
    """--nudge-tau had been taken silently as --nudge-tau-hours."""
    from screamcast.cli import rollout

    with pytest.raises(SystemExit) as stop:
        rollout.parse(["--checkpoint", "c.pth", "--data", "d", "--nudge-tau", "3"])
    assert stop.value.code == 2 and "--nudge-tau" in capsys.readouterr().err


def test_help_texts_show_no_rest_markup():
    from screamcast.cli.help_text import plain

    assert plain("``a`` (:mod:`screamcast.x`, :func:`~y.z`)") == "`a` (screamcast.x, y.z)"
    for command in ("screamcast-export", "screamcast-ingest", "screamcast-grid"):
        module, _ = SCRIPTS[command].split(":")
        run = subprocess.run(
            [sys.executable, "-m", module, "--help"], capture_output=True, text=True
        )
        assert "usage:" in run.stdout and "``" not in run.stdout and ":mod:" not in run.stdout, (
            command
        )
