# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The cost of training through the global step against one-step crop training, in one run.

``python -m benchmarks.global_unroll_cost [--repeats N] [--record]``: on a synthetic ne16pg2
store (n = 32, tile 16 + 2 x halo 8 = 32: the Held-Suarez benchmark's tiling, 24 tiles a cube)
with the benchmark's network (width 48, 3 levels), the seconds per optimizer step (forward,
backward, AdamW) of

- the baseline: one step on a batch of 8 crops (the crop stages' batch);
- ``unroll=global`` on one cube, ``k`` = 1, 4 and 8 steps, activation checkpointing on and off;

interleaved, medians. Memory: the bytes autograd keeps for the backward pass (every tensor
saved by the forward, counted by a saved-tensors hook: exact, and the same on any device), per
unrolled step. The record is ``benchmarks/results/global_unroll.json``; the lab book's table
(docs/notes/2026-12-03-climate.md) is printed by ``--table``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from hydra import compose, initialize_config_dir

from benchmarks.harness import RESULTS, ROOT, interleaved_many, save_record

CASES = [(1, True), (4, False), (4, True), (8, False), (8, True)]  # (k, checkpointing)


def _config(store: Path, *extra):
    from screamcast.config import register

    register()
    with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
        return compose(
            "train",
            overrides=[
                f"data.url={store}", "data.n=32", "data.tile=16", "data.halo=8",
                "data.crop=32", "model.width=48", "model.levels=3", "data.batch_size=8",
                "data.train_range=[0,-2]", "data.valid_range=[-2,0]", *extra,
            ],
        )  # fmt: skip


def _objective(cfg, pipeline, ds):
    from screamcast.data.store import dataset_grid
    from screamcast.grid import TileLayout
    from screamcast.train.losses import loss_function
    from screamcast.train.objectives import objective

    layout = TileLayout(dataset_grid(ds), cfg.data.tile, cfg.data.halo)
    obj = objective(cfg, pipeline, pipeline, loss_function(cfg.loss), ds, layout, "cpu")
    train, _, batch, _ = obj.datasets(layout, ds["time"].values, 64, 0)
    items = [train[i] for i in range(batch)]
    return obj, {k: torch.stack([torch.as_tensor(it[k]) for it in items]) for k in items[0]}


def _step(obj, batch, optimizer):
    def fn():
        loss, _ = obj(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return fn


def saved_bytes(obj, batch) -> int:
    """Bytes of the tensors the forward keeps for the backward (one forward)."""
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss, _ = obj(batch)
    del loss
    return total[0]


def run(repeats: int) -> dict:
    from screamcast.data.stats import compute_stats
    from screamcast.data.store import open_configured
    from screamcast.model.pipeline import build_pipeline
    from screamcast.sources.synthetic import write_store

    torch.manual_seed(0)
    tmp = Path(tempfile.mkdtemp(prefix="bench-global-"))
    store = write_store(tmp / "d.zarr", 32, days=4.0, step_hours=6.0, chunk=32)
    base = _config(store)
    ds = open_configured(base.data)
    d = base.data
    pipeline = build_pipeline(base, compute_stats(ds, d.prognostic + d.diagnostic, d.static))
    optimizer = torch.optim.AdamW(pipeline.parameters(), lr=1e-5)
    fns, memory = {}, {}
    crop, crop_batch = _objective(base, pipeline, ds)
    fns["crop, 8 crops, 1 step"] = _step(crop, crop_batch, optimizer)
    memory["crop, 8 crops, 1 step"] = saved_bytes(crop, crop_batch)
    for k, recompute in CASES:
        name = f"global, 1 cube, {k} steps, checkpointing {'on' if recompute else 'off'}"
        cfg = _config(store, "unroll=global", f"rollout_steps={k}",
                      f"global_unroll.checkpoint={str(recompute).lower()}")  # fmt: skip
        obj, batch = _objective(cfg, pipeline, ds)
        fns[name] = _step(obj, batch, optimizer)
        memory[name] = saved_bytes(obj, batch)
    seconds = interleaved_many(fns, repeats=repeats, warmup=1)
    crop_s = seconds["crop, 8 crops, 1 step"]
    rows = []
    for name, s in seconds.items():
        k = 1 if name.startswith("crop") else int(name.split(", ")[2].split()[0])
        mb = memory[name] / 2**20
        rows.append({
            "case": name, "seconds_per_step": s, "ratio_to_crop": s / crop_s,
            "saved_mb": mb, "saved_mb_per_unrolled_step": mb / k,
        })  # fmt: skip
    return {"rows": rows, "repeats": repeats, "threads": torch.get_num_threads()}


def table(record: dict) -> str:
    lines = [
        f"Measured by `{record['command']}` at commit {record['machine']['commit']} on "
        f"{record['machine']['cpu']} ({record['threads']} threads), {record['when']}.",
        "",
        "| case | s per optimizer step | x one-step crops | MB kept for backward | per step |",
        "|---|---|---|---|---|",
    ]
    for r in record["rows"]:
        lines.append(
            f"| {r['case']} | {r['seconds_per_step']:.2f} | {r['ratio_to_crop']:.1f} | "
            f"{r['saved_mb']:.1f} | {r['saved_mb_per_unrolled_step']:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--record", action="store_true")
    p.add_argument("--table", action="store_true", help="print the recorded table and stop")
    a = p.parse_args(argv)
    if a.table:
        print(table(json.loads((RESULTS / "global_unroll.json").read_text())))
        return 0
    body = run(a.repeats)
    command = "python -m benchmarks.global_unroll_cost " + " ".join(argv or sys.argv[1:])
    if a.record:
        path = save_record("global_unroll", "global_unroll", command, body)
        print(table(json.loads(path.read_text())))
    else:
        print(json.dumps(body, indent=1))
    return 0 if np.isfinite([r["seconds_per_step"] for r in body["rows"]]).all() else 1


if __name__ == "__main__":
    sys.exit(main())
