# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a training checkpoint holds and what it must match to be continued.

A checkpoint is self-contained for inference (the weights and a
:class:`~screamcast.checkpoint_format.ModelDescription`: variables, grid, statistics, time
step, calendar, levels) plus the state a resume needs; a checkpoint from another config is
refused naming what differs. Written through :mod:`screamcast.checkpoint_io` (never in place).
"""

from __future__ import annotations

import torch
from omegaconf import OmegaConf

from screamcast import __version__
from screamcast import checkpoint_format as fmt
from screamcast.config import TrainConfig
from screamcast.data.credentials import scrub
from screamcast.data.stats import Stats
from screamcast.train.run_state import rng_state


def describe(
    cfg: TrainConfig,
    stats: Stats,
    dt_minutes: float,
    grid: str,
    calendar: str,
    levels: dict | None = None,
) -> fmt.ModelDescription:
    """What inference needs besides the weights; ``grid``, ``calendar`` and the 3-D channels'
    ``levels`` are the store's."""
    d = cfg.data
    return fmt.ModelDescription(
        variables=fmt.Variables(tuple(d.prognostic), tuple(d.diagnostic), tuple(d.static)),
        grid=fmt.GridSpec(d.n, d.tile, d.halo, grid),
        config=scrub(OmegaConf.to_container(cfg, resolve=True)),  # no secret in a checkpoint
        stats=stats.to_dict(),
        time_step_minutes=dt_minutes,
        calendar=calendar,
        screamcast_version=__version__,
        levels=levels or {},
    )


def check_compatible(
    description: fmt.ModelDescription, cfg: TrainConfig, path: str, grid: str
) -> None:
    """Refuse a checkpoint whose variables, grid or architecture differ from the config and
    the store's ``grid``."""
    d, m = cfg.data, cfg.model
    want = {
        "variables": {k: list(d[k]) for k in ("prognostic", "diagnostic", "static")},
        "grid": {"n": d.n, "name": grid},
        "model": {k: m[k] for k in ("width", "levels", "blocks", "upsample")},
        "inputs": {
            "solar_time": d.solar_time,
            "grid_metric": d.grid_metric,
            "insolation": d.insolation,
            "input_times": d.input_times,
        },
    }
    try:
        description.check(want, path, "the config")
    except fmt.IncompatibleCheckpointError as err:
        inputs = description.inputs
        was = description.model["upsample"], inputs["solar_time"], inputs["grid_metric"]
        if was != (m.upsample, d.solar_time, d.grid_metric):  # from before these defaults
            raise fmt.IncompatibleCheckpointError(
                f"{err}; to continue that run give its settings: model.upsample={was[0]} "
                f"data.solar_time={str(was[1]).lower()} data.grid_metric={str(was[2]).lower()}"
            ) from None
        raise


def make_checkpoint(
    cfg, stats, pipeline, optimizer, scheduler, step, samples, best, dt, grid, calendar, levels=None
) -> dict:
    """Self-contained for inference (weights and the description), plus the state to resume
    (optimizer, scheduler, counters, RNG). Tensors and plain containers only."""
    return fmt.pack(
        describe(cfg, stats, dt, grid, calendar, levels),
        model=pipeline,
        optimizer=optimizer,
        scheduler=scheduler,
        step=step,
        samples_seen=samples,
        best_valid_loss=best,
        rng=rng_state(),
    )


def match_parameter_layout(optimizer: torch.optim.Optimizer) -> None:
    """Give each loaded optimizer state tensor its parameter's memory layout.

    A checkpoint written with the other ``channels_last`` setting holds moments in the other
    layout, and they would keep it (the updates are in place); AdamW's multi-tensor kernels
    need a parameter, its gradient and its moments to share strides, or they fall back to one
    kernel per tensor.
    """
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p, {})
            for key, value in state.items():
                moment = torch.is_tensor(value) and value.shape == p.shape
                if moment and value.stride() != p.stride():
                    state[key] = torch.empty_like(p, dtype=value.dtype).copy_(value)


def write_untrained_checkpoint(
    cfg, stats, path, dt_minutes: float, grid: str, calendar: str, seed: int = 0, init=None
):
    """A checkpoint of freshly initialised weights (``torch.manual_seed(seed)``, then
    ``init(pipeline)`` if given): what benchmarks and tests roll out without a training run,
    in the format training writes (through the crash-safe writer)."""
    from screamcast import checkpoint_io as cio
    from screamcast.model.pipeline import build_pipeline

    torch.manual_seed(seed)
    pipeline = build_pipeline(cfg, stats)
    if init is not None:
        init(pipeline)
    opt = torch.optim.AdamW(pipeline.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    state = make_checkpoint(
        cfg, stats, pipeline, opt, sched, 0, 0, float("inf"), dt_minutes, grid, calendar
    )
    cio.save_checkpoint_atomic(None, path, state)
    return path
