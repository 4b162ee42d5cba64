# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The benchmark's wall time per stage, summed over every invocation in one work folder: a
benchmark run a stage at a time (``--stage``), or killed and resumed, still records what the
whole took (``stage_minutes.json`` in the work folder)."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path

STAGES = ("data", "train", "forecasts", "climate", "cost")


class Ledger:
    def __init__(self, work: Path):
        self.path = Path(work) / "stage_minutes.json"
        self.minutes: dict[str, float] = (
            json.loads(self.path.read_text()) if self.path.exists() else {}
        )

    @contextmanager
    def stage(self, name: str):
        """Adds the block's wall minutes to ``name``'s, written at once (even when it fails:
        a killed stage's minutes were spent)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            spent = (time.perf_counter() - t0) / 60.0
            self.minutes[name] = self.minutes.get(name, 0.0) + spent
            self.path.write_text(json.dumps(self.minutes, indent=1) + "\n")

    def total(self) -> float:
        return sum(self.minutes.values())
