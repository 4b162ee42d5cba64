# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Wall time of one nudged global step against the model's forward passes over its tiles.

Candidate: the rollout's own loop (:func:`screamcast.rollout.advance.advance`, one step at a
time): gather -> batched forward -> intra-face overlap-add -> nudging -> bounds -> the guard
-> append to the output store. Baseline: the same forward passes on tiles gathered
beforehand. Target: the overhead (gather, reassembly, nudging, bounds, guard, writing) <= 20%
of the step (time ratio <= 1.25, i.e. overhead / step <= 0.2). Peak RSS growth over the steps
is reported (streamed output).

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
from screamcast.config.inference import GuardSection, StepperSection
from screamcast.data.stats import compute_stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.model.pipeline import build_pipeline
from screamcast.model.state import State
from screamcast.rollout.advance import advance
from screamcast.rollout.guard import Guard
from screamcast.rollout.nudging.relaxation import Relaxation
from screamcast.rollout.stepper import GlobalStepper
from screamcast.rollout.threads import rollout_threads
from screamcast.rollout.writer import RolloutWriter
from screamcast.sources.synthetic import write_store
from screamcast.step.step import Step


def _rollout_step(stepper, nudger, C: int, stats: dict, d, grid):
    """The rollout's step (the stepper's prediction, the nudging, the declared bounds) and
    its guard against the training statistics ``stats``."""
    predict = lambda x, t0, t1: stepper.step(x[0], t0[0], t1[0])[None]  # noqa: E731
    step = Step(predict, C, bounded=stepper.bounded, nudging=nudger)
    names = d.prognostic + d.diagnostic
    guard = Guard.from_stats(names, stats, torch.as_tensor(grid.area), GuardSection())
    return step, guard


def _setup(tmp: Path, n: int, tile: int, halo: int) -> dict:
    """A width-32 network on an ``n``-cell cube, its rollout step, guard and output store."""
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
    stats = compute_stats(ds, d.prognostic + d.diagnostic, d.static)
    pipeline = build_pipeline(cfg, stats)
    torch.nn.init.normal_(pipeline.net.head.weight, std=1e-3)  # not persistence
    grid = PhysicsGrid.for_face_size(n)
    static = np.stack([ds[v].values for v in d.static])
    # intra-face, fp32 as its baseline's forwards (auto is bf16 on a CPU with AMX-BF16)
    config = StepperSection(halo_adjoint=True, batch_size=27, precision="fp32")
    stepper = GlobalStepper(pipeline, TileLayout(grid, tile, halo), static, config)
    times = ds.time.values
    nudger = Relaxation(
        ref, ["u", "v", "temperature"], d.prognostic, 6.0, times[1] - times[0], grid
    )
    writer = RolloutWriter(tmp / "o.zarr", d.prognostic + d.diagnostic, {}, grid, {}, times)
    writer.create()
    x = torch.as_tensor(ds[d.prognostic].isel(time=0).to_array().values)  # (C, 6, n, n)
    writer.append(times[0], torch.cat([x, x[:1] * 0]).numpy())  # the initial condition
    step, guard = _rollout_step(stepper, nudger, len(d.prognostic), stats.to_dict(), d, grid)
    tiles = stepper.block.gather(x)  # the baseline's tiles, gathered once
    return dict(
        state=State.one(x, times[0]),
        times=times,
        step=step,
        guard=guard,
        writer=writer,
        pipeline=pipeline,
        tiles=tiles,
        forcing=stepper.forcing(times[0], times[1]),
        static=stepper.static_tiles,
    )


def _measure(s: dict, steps: int) -> tuple[list, ...]:
    """Each step as the rollout takes it (its write waited for on even steps, left in the
    background on odd ones), then the same forwards alone; seconds and peak memory."""
    state, times, writer, tiles = s["state"], s["times"], s["writer"], s["tiles"]
    cand, base, over, writes, rss = [], [], [], [], []
    for k in range(steps):
        overlapped = k % 2 == 1  # alternate: the same machine state for both cases
        t0 = time.perf_counter()
        emit = lambda j, y: writer.append(times[j], y.numpy())  # noqa: E731
        state = advance(s["step"], s["guard"], state, times, range(k, k + 1), emit)
        tw = time.perf_counter()
        if not overlapped:
            writer.flush()  # the whole write inside the step's time
        t1 = time.perf_counter()
        with torch.no_grad():
            for b in range(0, tiles.shape[0], 27):
                sl = slice(b, b + 27)
                s["pipeline"].predict(tiles[sl], s["forcing"][sl], s["static"][sl])
        t2 = time.perf_counter()
        (over if overlapped else cand).append(t1 - t0)
        if not overlapped:
            writes.append(t1 - tw)
        base.append(t2 - t1)
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    writer.close()
    return cand, base, over, writes, rss


def run(quick: bool = False, n: int = 48, tile: int = 16, halo: int = 8):
    tmp = Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    steps = 6 if quick else 24
    try:  # on the rollout's default threads (a loaded machine: fewer)
        with rollout_threads(0) as (threads, why):
            cand, base, over, writes, rss = _measure(_setup(tmp, n, tile, halo), steps)
    finally:
        shutil.rmtree(tmp)
    warm = steps // 3
    half = warm // 2
    tc, tb = float(np.median(cand[half:])), float(np.median(base[warm:]))
    to = float(np.median(over[half:]))
    case = f"n{n}_t{tile}_h{halo}"
    results = [
        Result(
            "rollout",
            f"step_vs_forwards[{case}, write_counted]",
            tc,
            tb,
            1.25,
            "sum of model forwards",
        ),
        Result(
            "rollout",
            f"step_vs_forwards[{case}, write_overlapped]",
            to,
            tb,
            1.25,
            "sum of model forwards",
        ),
    ]
    growth = rss[-1] - rss[warm]
    context = {
        "steps": steps,
        "repeats": steps,
        "peak_rss_mb": rss[-1],
        "rss_growth_mb_after_warmup": growth,
        "write_s": float(np.median(writes[half:])),
        "threads": f"{threads} ({why}, as the rollout chooses)",
    }
    return results, context
