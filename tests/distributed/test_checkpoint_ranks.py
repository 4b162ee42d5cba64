# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import json
from pathlib import Path

import pytest

from tests.distributed import run_two_ranks

SCRIPT = Path(__file__).with_name("ranks_checkpoint.py")


@pytest.mark.distributed
def test_rank0_failures_raise_on_every_rank(tmp_path):
    run_two_ranks(SCRIPT, str(tmp_path / "run"), cwd=tmp_path, timeout=120)
    lines = [
        json.loads(x)
        for r in (0, 1)
        for x in (tmp_path / f"rank{r}.jsonl").read_text().splitlines()
    ]
    got = {(r["scenario"], r["rank"]): r for r in lines}
    for rank in (0, 1):
        assert got[("save_ok", rank)]["ok"].endswith("latest.pth")
        assert got[("resume_ok", rank)]["ok"].endswith("latest.pth")
        assert got[("preempt", rank)]["ok"] == "True"
        for scenario, expected in [
            ("save_fails", "does not exist"),
            ("verify_fails", "CRC mismatch"),
            ("resume_fails", "no usable checkpoint"),
        ]:
            r = got[(scenario, rank)]
            assert "raised" in r and expected in r["raised"], r
            assert r["seconds"] < 5.0, r
    assert (tmp_path / "run" / "best.pth").exists()
    assert not list((tmp_path / "run").glob("*.tmp"))
