# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a training checkpoint holds and what it must match to be continued.

A checkpoint is self-contained for inference (the weights and a
:class:`~screamcast.checkpoint_format.ModelDescription`: variables, grid, statistics, time
step, calendar, levels) plus the state a resume needs; a checkpoint from another config is
refused naming what differs. Written through :mod:`screamcast.checkpoint_io` (never in place).
"""

from __future__ import annotations

from dataclasses import asdict

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


def _override(key: str, value) -> str:
    """A Hydra override of ``key`` to ``value`` (channel names quoted: ``["T[0]","PS"]``)."""
    if isinstance(value, (list, tuple)):
        items = [f'"{v}"' if "[" in str(v) else str(v) for v in value]
        return f"{key}=[{','.join(items)}]"
    return f"{key}={str(value).lower() if isinstance(value, bool) else value}"


def _differing(description: fmt.ModelDescription, want: dict, section: str, prefix: str):
    """``prefix.key=value`` overrides giving the checkpoint's value of each key of
    ``section`` that differs from ``want``'s."""
    d = description
    have = {"variables": asdict(d.variables), "model": d.model, "inputs": d.inputs}[section]
    differ = [k for k, v in want[section].items() if _plain(have[k]) != _plain(v)]
    return [_override(f"{prefix}.{k}", have[k]) for k in differ]


def _plain(value):
    return list(value) if isinstance(value, (list, tuple)) else value


def _hint(section: str, description: fmt.ModelDescription, want: dict) -> str:
    """What fixes a mismatch in ``section``: the settings that give the checkpoint's values
    (only those that can), or training from scratch."""
    if section == "variables":
        sets = " ".join(_differing(description, want, "variables", "data"))
        return (
            f"to start from it, give its variables ({sets}) and a store that has them; to train "
            "on these variables, train from scratch (no init_from, a new run_dir)"
        )
    if section == "grid":
        g = description.grid
        sets = " ".join(_override(f"data.{k}", getattr(g, k)) for k in ("n", "tile", "halo"))
        return f"to start from it, give a store on {g.name} (data.url) and {sets}"
    sets = _differing(description, want, "model", "model")
    sets += _differing(description, want, "inputs", "data")
    return f"to start from it (or continue that run), give its settings: {' '.join(sets)}"


def check_compatible(
    description: fmt.ModelDescription, cfg: TrainConfig, path: str, grid: str
) -> None:
    """Refuse a checkpoint whose variables, grid or architecture differ from the config and
    the store's ``grid``, with the settings that would match it (those of the part that
    differs)."""
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
    for section, values in want.items():
        try:
            description.check({section: values}, path, "the config")
        except fmt.IncompatibleCheckpointError as err:
            raise fmt.IncompatibleCheckpointError(
                f"{err}; {_hint(section, description, want)}"
            ) from None


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
