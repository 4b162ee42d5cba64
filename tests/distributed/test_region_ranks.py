# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.distributed import run_two_ranks

SCRIPT = Path(__file__).with_name("ranks_regions.py")


@pytest.mark.distributed
def test_two_ranks_draw_whole_regions_of_their_own(tiny_store, tmp_path):
    """Under DDP each rank is given whole groups of crops (4 per region, the region fetched
    once by that rank alone), and keeps at most a window of regions in memory."""
    run_two_ranks(SCRIPT, str(tiny_store), str(tmp_path / "run"), cwd=tmp_path, timeout=240)
    got = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    for mine in got:
        assert len(mine["crops"]) == 8 * 2  # 8 steps x batch 2 per rank
        counts = Counter(tuple(c) for c in mine["crops"])
        assert all(n % 4 == 0 for n in counts.values()), counts  # whole groups of 4
        assert 0 < mine["cached"] <= 2  # the window (data.shuffle_regions), whatever the world
