# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Optimizer steps per second of the full training loop against the bare model.

The candidate is ``train()`` itself (data loading from an in-memory store, halo crops, loss,
clipping, AdamW, logging every 5 steps: twice the demo's rate); its step time is read from
the loop's own ``images_per_s`` after a warm-up inside each of 3 resumed segments, so
start-up, validation and checkpoint writes are excluded. The baseline is forward + backward +
gradient clipping (the configuration's) + AdamW step of the same pipeline on one fixed batch,
timed before, between and after the segments (their median: the machine's drift cancels).
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
from screamcast.model.pipeline import build_pipeline
from screamcast.sources.synthetic import write_store
from screamcast.train.loop import train
from screamcast.train.loss import rollout_loss


def run(quick: bool = False):
    register()
    tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
    seg = 10 if quick else 30  # steps per training segment; 3 segments, resumed
    try:
        write_store(tmp / "d.zarr", 48, days=3, step_hours=1)
        overrides = [
            "experiment=demo",
            f"data.url={tmp / 'd.zarr'}",
            f"run_dir={tmp / 'run'}",
            f"valid_every={10 * seg}",
            f"checkpoint_every={seg}",
            "log_every=5",
            "progress=false",
            "data.train_range=[0,-12]",
            "data.valid_range=[-12,0]",
            "data.valid_samples=8",
        ]
        with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
            cfgs = [
                compose("train", overrides=[*overrides, f"steps={(i + 1) * seg}"]) for i in range(3)
            ]
        bare_step = _bare_step_fn(cfgs[0])
        bare, loop_s, loop_steps = _timed(bare_step, seg), 0.0, 0
        for i, cfg in enumerate(cfgs):  # loop and baseline alternate: the machine's drift cancels
            train(cfg)  # resumes the previous segment's latest.pth
            bare += _timed(bare_step, seg)
            s, ds = _segment(tmp / "run" / "metrics.csv", i * seg, (i + 1) * seg)
            loop_s, loop_steps = loop_s + s, loop_steps + ds
        with open(tmp / "run" / "metrics.csv") as f:
            data_ms = float(np.median([float(r["data_ms"]) for r in csv.DictReader(f)]))
    finally:
        shutil.rmtree(tmp)
    d = cfgs[0].data
    result = Result(
        "train",
        f"loop_vs_bare[crop{d.crop}_b{d.batch_size}]",
        loop_s / loop_steps,
        float(np.median(bare)),
        1.15,
        "model fwd+bwd+step",
    )
    context = {
        "steps": 3 * seg,
        "repeats": 3 * seg,
        "threads": torch.get_num_threads(),
        "loop_data_wait_ms": data_ms,
    }
    return [result], context


def _segment(metrics: Path, first: int, last: int) -> tuple[float, int]:
    """Seconds and steps of one ``train()`` call, between its first logged step after a
    warm-up and its last logged step before the final one (which writes a checkpoint).
    ``images_per_s`` counts from the call's first step: elapsed = new samples / rate."""
    with open(metrics) as f:
        rows = [r for r in csv.DictReader(f) if first < int(r["step"]) <= last]
    per_step = int(rows[0]["samples"]) // int(rows[0]["step"])  # the global batch
    seen0 = first * per_step  # samples before this call
    elapsed = {int(r["step"]): (int(r["samples"]) - seen0) / float(r["images_per_s"]) for r in rows}
    lo = min(s for s in elapsed if s >= first + (last - first) // 4)
    hi = max(s for s in elapsed if s < last)
    return elapsed[hi] - elapsed[lo], hi - lo


def _timed(fn, steps: int) -> list[float]:
    """Seconds of ``steps`` calls of ``fn`` after a quarter of them as warm-up."""
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times[steps // 4 :]


def _bare_step_fn(cfg):
    """Forward + backward + clipping + AdamW step of the pipeline on one fixed batch."""
    import xarray as xr

    from screamcast.data.dataset import CropDataset
    from screamcast.data.stats import compute_stats
    from screamcast.grid import PhysicsGrid, TileLayout

    d = cfg.data
    ds = xr.open_zarr(d.url, consolidated=False, chunks=None)
    pipeline = build_pipeline(cfg, compute_stats(ds, d.prognostic + d.diagnostic, d.static))
    optimizer = torch.optim.AdamW(pipeline.parameters(), lr=1e-4)
    data = CropDataset(
        d.url,
        TileLayout(PhysicsGrid.for_face_size(d.n), d.tile, d.halo),
        d.prognostic,
        d.diagnostic,
        d.static,
        crop=d.crop,
        steps=1,
        samples=d.batch_size,
        in_memory=True,
    )
    batch = next(iter(torch.utils.data.DataLoader(data, batch_size=d.batch_size)))

    def step() -> None:
        loss, _ = rollout_loss(pipeline, batch, ds["time"].values, 0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.optim.grad_clip:  # the optimizer work the configuration asks for, as in the loop
            torch.nn.utils.clip_grad_norm_(pipeline.parameters(), cfg.optim.grad_clip)
        optimizer.step()

    return step
