# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("ranks_checkpoint.py")


@pytest.mark.distributed
def test_rank0_failures_raise_on_every_rank(tmp_path):
    try:  # a hang in a barrier must fail the test, not stall CI
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), str(tmp_path / "run")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"two-rank run hung: {err.stdout!r} {err.stderr!r}")
    assert proc.returncode == 0, proc.stderr[-3000:]
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
