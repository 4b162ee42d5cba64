# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.grid`` and the whole grid package run without torch (pure numpy)."""

import subprocess
import sys


def test_grid_package_and_cli_need_no_torch():
    code = (
        "import sys\n"
        "from screamcast.cli.grid import main\n"
        "import screamcast.grid.extended, screamcast.grid.regrid, screamcast.grid.ncol\n"
        "main(['--grid', 'ne4pg2', '--tile', '4', '--halo', '2'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "halo error inside faces         = 0.00e+00" in run.stdout


def test_bad_or_huge_requests_are_one_line_and_exit_2(capsys):
    """Each printed a traceback; ne100000pg2 tried to allocate 1.75 TiB (issue 42)."""
    import pytest

    from screamcast.cli.grid import check_bytes, main
    from screamcast.grid import PhysicsGrid, TileLayout

    cases = [
        (["--grid", "foo"], "grid name 'foo' is not an E3SM physics grid name"),
        (["--grid", "ne4pg2", "--tile", "3"], "tile=3 does not divide the face size n=8"),
        (["--grid", "ne4pg2", "--halo", "-1"], "halo must be an integer >= 0"),
        (["--grid", "ne100000pg2"], "--grid ne100000pg2: the checks hold ~"),
    ]
    for argv, message in cases:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and "Traceback" not in err
    # the estimate: 6 (n + 2 h)^2 pixels x (3 x 16 k + 96) bytes; ne4pg2, halo 2: 6 x 12^2
    assert check_bytes(TileLayout(PhysicsGrid.from_name("ne4pg2"), 4, 2)) == 864 * 192
