# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Wall time of one nudged global step against the model's forward passes over its tiles.

Candidate: gather -> batched forward -> intra-face overlap-add -> nudging -> append to the
output store. Baseline: the same forward passes on tiles gathered beforehand. Target: the
overhead (gather, reassembly, nudging, writing) <= 20% of the step (time ratio <= 1.25, i.e.
overhead / step <= 0.2). Peak RSS growth over the steps is reported (streamed output).

Two cases: the step with its write waited for inside it (``write_counted``: the write's whole
cost, as if it could not overlap anything), and the step as the rollout runs it, the write in
the background while the next step computes (``write_overlapped``: what it costs where it
competes with the forwards for the cores, as here on 2 CPU cores; on a GPU node the forwards
run on the device and the write overlaps them). The write's own time (``write_s``, the
wait for it when waited for at once) is reported beside them.
"""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import xarray as xr

from benchmarks.harness import Result
from screamcast.config import DataConfig, ModelConfig, PipelineConfig, TrainConfig
from screamcast.data.stats import compute_stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.model.pipeline import build_pipeline
from screamcast.rollout.nudging.relaxation import Relaxation
from screamcast.rollout.stepper import GlobalStepper, Reassembly, StepperConfig
from screamcast.rollout.writer import RolloutWriter
from screamcast.sources.synthetic import write_store


def run(quick: bool = False, n: int = 48, tile: int = 16, halo: int = 8):
    tmp = Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    steps = 6 if quick else 24
    try:
        write_store(tmp / "d.zarr", n, days=1.5, step_hours=1)
        write_store(tmp / "r.zarr", n // 4, days=1.5, step_hours=6, coarsen=4)
        ds = xr.open_zarr(tmp / "d.zarr", consolidated=False, chunks=None)
        ref = xr.open_zarr(tmp / "r.zarr", consolidated=False, chunks=None)
        cfg = TrainConfig(
            data=DataConfig(n=n, tile=tile, halo=halo),
            model=ModelConfig(width=32),
            pipeline=PipelineConfig(),
        )
        d = cfg.data
        pipeline = build_pipeline(cfg, compute_stats(ds, d.prognostic + d.diagnostic, d.static))
        torch.nn.init.normal_(pipeline.net.head.weight, std=1e-3)  # not persistence
        grid = PhysicsGrid.for_face_size(n)
        static = np.stack([ds[v].values for v in d.static])
        stepper = GlobalStepper(
            pipeline,
            TileLayout(grid, tile, halo),
            static,
            StepperConfig(Reassembly.INTRA_FACE, batch_size=27),
        )
        times = ds.time.values
        nudged = ["u", "v", "temperature"]
        nudger = Relaxation(ref, nudged, d.prognostic, 6.0, times[1] - times[0], grid)
        writer = RolloutWriter(tmp / "o.zarr", d.prognostic + d.diagnostic, {}, grid, {}, times)
        writer.create()
        x = torch.as_tensor(ds[d.prognostic].isel(time=0).to_array().values)
        writer.append(times[0], torch.cat([x, x[:1] * 0]).numpy())  # the initial condition
        x = torch.as_tensor(ds[d.prognostic].isel(time=0).to_array().values)
        tiles = stepper.op.gather(x[None])
        forcing = stepper.forcing(times[0], times[1])
        C = len(d.prognostic)
        cand, base, over, writes, rss = [], [], [], [], []
        for k in range(steps):
            overlapped = k % 2 == 1  # alternate: the same machine state for both cases
            t0 = time.perf_counter()
            y = stepper.step(x, times[k], times[k + 1])
            x = y[:C].clone()
            nudger.apply(x, times[k + 1])
            writer.append(times[k + 1], torch.cat([x, y[C:]]).numpy())
            tw = time.perf_counter()
            if not overlapped:
                writer.flush()  # the whole write inside the step's time
            t1 = time.perf_counter()
            with torch.no_grad():
                for b in range(0, tiles.shape[0], 27):
                    sl = slice(b, b + 27)
                    pipeline.predict(tiles[sl], forcing[sl], stepper.static_tiles[sl])
            t2 = time.perf_counter()
            (over if overlapped else cand).append(t1 - t0)
            if not overlapped:
                writes.append(t1 - tw)
            base.append(t2 - t1)
            rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        writer.close()
    finally:
        shutil.rmtree(tmp)
    warm = steps // 3
    half = warm // 2
    tc, tb = float(np.median(cand[half:])), float(np.median(base[warm:]))
    to = float(np.median(over[half:]))
    case = f"n{n}_t{tile}_h{halo}"
    results = [
        Result("rollout", f"step_vs_forwards[{case}, write_counted]", tc, tb, 1.25,
               "sum of model forwards"),
        Result("rollout", f"step_vs_forwards[{case}, write_overlapped]", to, tb, 1.25,
               "sum of model forwards"),
    ]  # fmt: skip
    growth = rss[-1] - rss[warm]
    context = {
        "steps": steps,
        "repeats": steps,
        "peak_rss_mb": rss[-1],
        "rss_growth_mb_after_warmup": growth,
        "write_s": float(np.median(writes[half:])),
    }
    return results, context
