# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Optimizer steps per second of the full training loop against the bare model.

The candidate is ``train()`` itself (data loading from an in-memory store, halo crops, loss,
AdamW, logging); its step time is read from the loop's own ``images_per_s`` after a warm-up
run, so start-up, validation and checkpoint writes are excluded. The baseline is forward +
backward + optimizer step of the same pipeline on one fixed batch, in the same process.
Target: loop overhead <= 15% (time ratio <= 1.15).
"""

from __future__ import annotations

import csv
import shutil
import tempfile
import time
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir

from benchmarks.harness import ROOT, Result
from screamcast.config import register
from screamcast.data.synthetic import write_store
from screamcast.model.pipeline import build_pipeline
from screamcast.train.loop import train
from screamcast.train.loss import rollout_loss


def run(quick: bool = False):
    register()
    tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
    steps = 20 if quick else 60
    try:
        write_store(tmp / "d.zarr", 48, days=3, step_hours=1)
        overrides = ["experiment=demo", f"data.url={tmp / 'd.zarr'}", f"run_dir={tmp / 'run'}",
                     f"steps={steps}", f"valid_every={steps}", f"checkpoint_every={steps}",
                     "log_every=1", "progress=false", "data.train_range=[0,-12]",
                     "data.valid_range=[-12,0]", "data.valid_samples=8"]  # fmt: skip
        with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
            cfg = compose("train", overrides=overrides)
        train(cfg)
        with open(tmp / "run" / "metrics.csv") as f:
            log = list(csv.DictReader(f))
        # images_per_s is cumulative from the first step: use the last row minus a warm-up row
        t_of = {int(r["step"]): int(r["samples"]) / float(r["images_per_s"]) for r in log}
        warm = steps // 4
        loop_step = (t_of[steps - 1] - t_of[warm]) / (steps - 1 - warm)
        bare_step = _bare_step(cfg, tmp / "run" / "latest.pth", steps)
    finally:
        shutil.rmtree(tmp)
    batch = cfg.data.batch_size
    result = Result("train", f"loop_vs_bare[crop{cfg.data.crop}_b{batch}]", loop_step, bare_step,
                    1.15, "model fwd+bwd+step")  # fmt: skip
    return [result], {"steps": steps, "threads": torch.get_num_threads()}


def _bare_step(cfg, checkpoint: Path, steps: int) -> float:
    from screamcast import checkpoint_io as cio
    from screamcast.data.dataset import CropDataset
    from screamcast.data.stats import Stats
    from screamcast.grid import CubedSphereGrid, TileLayout

    ckpt = cio.load_checkpoint(checkpoint)
    pipeline = build_pipeline(cfg, Stats.from_dict(ckpt["stats"]))
    optimizer = torch.optim.AdamW(pipeline.parameters(), lr=1e-4)
    d = cfg.data
    data = CropDataset(d.url, TileLayout(CubedSphereGrid(d.n), d.tile, d.halo), d.prognostic,
                       d.diagnostic, d.static, crop=d.crop, steps=1, samples=d.batch_size,
                       in_memory=True)  # fmt: skip
    batch = next(iter(torch.utils.data.DataLoader(data, batch_size=d.batch_size)))
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss, _ = rollout_loss(pipeline, batch, 0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - t0)
    times = sorted(times[steps // 4 :])
    return times[len(times) // 2]
