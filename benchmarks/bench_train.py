# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Optimizer steps per second of the full training loop against the bare model.

The candidate is ``train()`` itself (data loading from an in-memory store, halo crops, loss,
AdamW, logging every 10 steps as the demo does); its step time is read from the loop's own
``images_per_s`` after a warm-up, so start-up, validation and checkpoint writes are excluded.
The baseline is forward + backward + gradient clipping (the configuration's) + AdamW step of
the same pipeline on one fixed batch, in the same process, timed before and after the loop
(their median: the machine's drift over the run cancels).
Target: loop overhead <= 15% (time ratio <= 1.15).
"""

from __future__ import annotations

import csv
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
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
                     f"log_every={steps // 6}", "progress=false", "data.train_range=[0,-12]",
                     "data.valid_range=[-12,0]", "data.valid_samples=8"]  # fmt: skip
        with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
            cfg = compose("train", overrides=overrides)
        bare = _bare_steps(cfg, steps)  # the baseline before and after the loop: drift cancels
        train(cfg)
        bare += _bare_steps(cfg, steps)
        with open(tmp / "run" / "metrics.csv") as f:
            log = list(csv.DictReader(f))
        # images_per_s is cumulative from the first step: the last logged step before the final
        # one (which also validates) minus the first logged step after a warm-up
        t_of = {int(r["step"]): int(r["samples"]) / float(r["images_per_s"]) for r in log}
        lo = min(s for s in t_of if s >= steps // 4)
        hi = max(s for s in t_of if s < steps)
        loop_step = (t_of[hi] - t_of[lo]) / (hi - lo)
        bare_step = float(np.median(bare))
        data_ms = float(np.median([float(r["data_ms"]) for r in log if int(r["step"]) >= lo]))
    finally:
        shutil.rmtree(tmp)
    batch = cfg.data.batch_size
    result = Result("train", f"loop_vs_bare[crop{cfg.data.crop}_b{batch}]", loop_step, bare_step,
                    1.15, "model fwd+bwd+step")  # fmt: skip
    context = {"steps": steps, "threads": torch.get_num_threads(), "loop_data_wait_ms": data_ms}
    return [result], context


def _bare_steps(cfg, steps: int) -> list[float]:
    """Seconds of forward + backward + AdamW step on one fixed batch, after a warm-up."""
    import xarray as xr

    from screamcast.data.dataset import CropDataset
    from screamcast.data.stats import compute_stats
    from screamcast.grid import CubedSphereGrid, TileLayout

    d = cfg.data
    ds = xr.open_zarr(d.url, consolidated=False)
    pipeline = build_pipeline(cfg, compute_stats(ds, d.prognostic + d.diagnostic, d.static))
    optimizer = torch.optim.AdamW(pipeline.parameters(), lr=1e-4)
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
        if cfg.optim.grad_clip:  # the optimizer work the configuration asks for, as in the loop
            torch.nn.utils.clip_grad_norm_(pipeline.parameters(), cfg.optim.grad_clip)
        optimizer.step()
        times.append(time.perf_counter() - t0)
    return times[steps // 4 :]
