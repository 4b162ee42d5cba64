# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Two gloo ranks under Lightning Fabric exercising checkpoint_io's collective failures.

Run by tests/distributed/test_checkpoint_ranks.py as ``python ranks_checkpoint.py RUN_DIR``;
Fabric re-launches it for rank 1. Each rank appends one JSON line per scenario to its own
``rank<r>.jsonl`` beside RUN_DIR (two ranks printing to one stdout interleave).
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

import torch
from lightning.fabric import Fabric

from screamcast import checkpoint_io as cio
from screamcast.train.run_state import PreemptionFlag


def report(fabric, scenario, fn):
    t0 = time.monotonic()
    try:
        result = fn()
        outcome = {"ok": str(result)}
    except cio.CheckpointError as err:
        outcome = {"raised": f"{type(err).__name__}: {err}"}
    line = {"rank": fabric.global_rank, "scenario": scenario, "seconds": time.monotonic() - t0}
    with open(REPORT_DIR / f"rank{fabric.global_rank}.jsonl", "a") as f:
        f.write(json.dumps(line | outcome) + "\n")


REPORT_DIR = Path(".")


def main(run_dir: Path) -> None:
    global REPORT_DIR
    REPORT_DIR = run_dir.parent
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp", num_nodes=1)
    fabric.launch()
    state = {"w": torch.full((10,), float(fabric.global_rank)), "best_valid_loss": 1.0}
    run_dir.mkdir(parents=True, exist_ok=True)

    report(
        fabric,
        "save_ok",
        lambda: cio.save_checkpoint_atomic(fabric, run_dir / "latest.pth", state, best=True),
    )
    report(fabric, "resume_ok", lambda: cio.choose_resume_checkpoint(run_dir, fabric))

    # rank 0 fails to write (its directory is missing); rank 1 must not wait forever
    report(
        fabric,
        "save_fails",
        lambda: cio.save_checkpoint_atomic(fabric, run_dir / "missing" / "latest.pth", state),
    )

    # rank 0's verification fails (a corrupt write is simulated at the verify step)
    real_verify = cio.verify_checkpoint
    if fabric.global_rank == 0:

        def corrupt(path):
            raise cio.CorruptCheckpointError(f"{path}: CRC mismatch in record data/0")

        cio.verify_checkpoint = corrupt
    report(
        fabric,
        "verify_fails",
        lambda: cio.save_checkpoint_atomic(fabric, run_dir / "latest.pth", state, best=True),
    )
    cio.verify_checkpoint = real_verify

    # only a corrupt latest.pth and no steps_*.pth: resume selection fails on rank 0
    bad_dir = run_dir / "bad"
    if fabric.global_rank == 0:
        bad_dir.mkdir(exist_ok=True)
        (bad_dir / "latest.pth").write_bytes(b"PK\x03\x04 truncated")
    fabric.barrier()
    report(fabric, "resume_fails", lambda: cio.choose_resume_checkpoint(bad_dir, fabric))

    # preemption: only rank 1 gets the signal, both ranks stop
    with PreemptionFlag() as flag:
        if fabric.global_rank == 1:
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.05)
        report(fabric, "preempt", lambda: flag.should_stop(fabric))


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1]))
    finally:  # before teardown: gloo threads left to it can abort the rank
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
