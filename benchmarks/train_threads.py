# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training images/s against torch's thread count, on an idle machine and beside a load.

``python -m benchmarks.train_threads [--record]``: the demo's training (crops of 32, batch 8)
on a 4-day n = 48 analytic store, ``--steps`` steps per run, each in a fresh process with
``threads`` set, alone and with one busy process per core but one running beside it (what a
data-loader worker or a second job does to the cores); images/s is the median of the logged
steps after the first few. What the threads rule (``screamcast.train.threads``) is checked on.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import save_record

TRAIN = """
import sys
from screamcast.cli.hydra_config import compose_train
from screamcast.train.loop import train
train(compose_train(sys.argv[1:]))
"""
BUSY = "while True: pass"


def run(store: Path, run_dir: Path, threads: int | None, steps: int) -> float:
    over = ["experiment=demo", f"data.url={store}", f"run_dir={run_dir}", f"steps={steps}"]
    over += ["progress=false", "log_every=1", "valid_every=100000", "checkpoint_every=100000"]
    over += ["keep_every=0", "data.in_memory=true"]
    over += [f"threads={threads}" if threads else "threads=null"]
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    subprocess.run([sys.executable, "-c", TRAIN, *over], env=env, check=True, capture_output=True)
    with open(run_dir / "metrics.csv") as f:
        rates = [float(r["images_per_s"]) for r in csv.DictReader(f) if r["images_per_s"]]
    return statistics.median(rates[3:])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--record", action="store_true", help="benchmarks/results/train_threads.json")
    a = ap.parse_args(argv)
    from screamcast.sources.synthetic import write_store
    from screamcast.train.threads import available_cores, torch_threads

    cores = available_cores()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = write_store(Path(tmp) / "s.zarr", 48, days=4, layout="stacked")
        for load in (0, max(cores - 1, 1)):
            busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(load)]
            try:
                for threads in (None, 1, cores):
                    d = Path(tmp) / f"r{load}_{threads}"
                    rate = run(store, d, threads, a.steps)
                    rule = torch_threads(0) if threads is None else threads
                    rows.append({"busy_processes": load, "threads": threads, "torch_threads":
                                 rule, "images_per_s": rate})  # fmt: skip
                    print(rows[-1], flush=True)
            finally:
                for p in busy:
                    p.kill()
    report = {"cores": cores, "rows": rows}
    if a.record:
        command = "python -m benchmarks.train_threads " + " ".join(argv or sys.argv[1:])
        save_record("train_threads", "train_threads", command, {"report": report})
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
