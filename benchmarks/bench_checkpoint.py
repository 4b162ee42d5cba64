# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Crash-safe save of a ~200 MB state against ``fabric.save`` and ``torch.save`` + fsync.

Targets: no slower than ``fabric.save`` (which serialises the whole state into memory first),
and within 1.3x of a bare ``torch.save`` + fsync (the price of verification and the links).
All three write into the same run directory on disk.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import torch

from benchmarks.harness import ROOT, Result, interleaved_many
from screamcast import checkpoint_io as cio


def run(quick: bool = False, megabytes: int = 200):
    from lightning.fabric import Fabric

    fabric = Fabric(accelerator="cpu", devices=1)
    n = megabytes * 1_000_000 // 4
    state = {
        "model": {f"layer{i}.weight": torch.randn(n // 8) for i in range(8)},
        "step": 1000,
        "best_valid_loss": 0.1,
    }
    run_dir = Path(tempfile.mkdtemp(prefix="bench-ckpt-", dir=ROOT))
    try:

        def ours():
            cio.save_checkpoint_atomic(None, run_dir / "latest.pth", state, best=True)

        def fabric_save():
            fabric.save(run_dir / "fabric.pth", state)

        def torch_save():
            with open(run_dir / "torch.pth", "wb") as f:
                torch.save(state, f)
                f.flush()
                os.fsync(f.fileno())

        t = interleaved_many(
            {"ours": ours, "fabric": fabric_save, "torch": torch_save},
            repeats=2 if quick else 6,
            warmup=1,
        )
    finally:
        shutil.rmtree(run_dir)
    case = f"{megabytes}MB"
    return [
        Result("checkpoint", f"save_vs_fabric[{case}]", t["ours"], t["fabric"], 1.0, "fabric.save"),
        Result(
            "checkpoint", f"save_vs_torch[{case}]", t["ours"], t["torch"], 1.3, "torch.save+fsync"
        ),
    ], {"megabytes": megabytes, "repeats": 2 if quick else 6}
