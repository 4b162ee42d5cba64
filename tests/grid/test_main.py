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
