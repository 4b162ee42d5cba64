# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudged global rollout: validate everything, then step, nudge, clip and stream out.

Every input is checked before the first step (checkpoint, stores, start time, reference
coverage, output path, nudging settings), so a bad run fails in seconds and touches nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

from screamcast import __version__
from screamcast import checkpoint_io as cio
from screamcast.data.stats import Stats
from screamcast.data.store import open_store, time_step
from screamcast.grid import CubedSphereGrid, TileLayout
from screamcast.metrics import area_weighted_bias, area_weighted_rmse
from screamcast.model.pipeline import build_pipeline
from screamcast.rollout.nudging import Nudger
from screamcast.rollout.stepper import GlobalStepper, resolve_precision
from screamcast.rollout.writer import RolloutWriter


class RolloutError(ValueError):
    """Bad input to a rollout, found before any step ran."""


@dataclass
class RolloutOptions:
    checkpoint: str
    data: str
    output: str
    start: str | None = None
    steps: int = 24
    reference: str | None = None
    halo_adjoint: bool = False
    halo_adjoint_cross_face: bool = False
    nudge_tau_hours: float = 6.0
    nudge_vars: list[str] = field(default_factory=list)
    device: str = "cpu"
    batch_size: int = 16
    resume: bool = False
    overwrite: bool = False
    storage_options: dict = field(default_factory=dict)
    progress: bool = True
    precision: str = "auto"  # the network's: auto (bf16 autocast on CUDA), bf16 or fp32
    channels_last: bool = True  # the network's convolutions in NHWC (see GlobalStepper)


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _start_index(times: np.ndarray, start: str | None, data: str) -> int:
    if start is None:
        return 0
    t = np.datetime64(start, "ns")
    hit = np.flatnonzero(times == t)
    if hit.size == 0:
        raise RolloutError(
            f"--start {start} is not a time of {data} ({times[0]} to {times[-1]}, step "
            f"{(times[1] - times[0]) / np.timedelta64(1, 'm'):g} min)"
        )
    return int(hit[0])


def run_rollout(o: RolloutOptions) -> dict:
    """Run (or resume) a rollout; returns a summary with the per-step metrics if truth exists."""
    if o.halo_adjoint_cross_face and not o.halo_adjoint:
        raise RolloutError("--halo-adjoint-cross-face requires --halo-adjoint")
    if o.steps < 1:
        raise RolloutError(f"--steps must be >= 1, got {o.steps}")
    if not Path(o.checkpoint).exists():
        raise RolloutError(f"--checkpoint {o.checkpoint} does not exist")
    try:
        ckpt = cio.load_checkpoint(o.checkpoint)
    except cio.CorruptCheckpointError as err:
        raise RolloutError(f"--checkpoint is not usable: {err}") from None
    cfg = OmegaConf.create(ckpt["config"])
    prog, diag, static = (
        list(ckpt["variables"][k]) for k in ("prognostic", "diagnostic", "static")
    )
    n, tile, halo = (ckpt["grid"][k] for k in ("n", "tile", "halo"))
    ds = open_store(o.data, o.storage_options, prog, static, n)
    times = ds["time"].values
    dt = time_step(ds)
    step_min = float(dt / np.timedelta64(1, "m"))
    trained = ckpt.get("time_step_minutes")
    if trained is not None and abs(trained - step_min) > 1e-6:
        raise RolloutError(
            f"{o.data} has a {step_min:g} min time step; "
            f"the checkpoint was trained at {trained:g} min"
        )
    i0 = _start_index(times, o.start, o.data)
    out_times = times[i0] + np.arange(o.steps + 1) * dt
    nudger = None
    if o.reference:
        nudge_vars = o.nudge_vars or [v for v in prog if v in ("u", "v", "temperature")]
        unknown = [v for v in nudge_vars if v not in prog]
        if unknown:
            raise RolloutError(f"--nudge-vars: {unknown} not prognostic variables of the "
                               f"checkpoint ({', '.join(prog)})")  # fmt: skip
        ref = open_store(o.reference, o.storage_options, nudge_vars, (), None, latlon=True)
        nudger = Nudger(ref, nudge_vars, prog, o.nudge_tau_hours, dt, n, name=o.reference)
        nudger.check_covers(out_times[1], out_times[-1])
    elif o.nudge_vars:
        raise RolloutError("--nudge-vars needs --reference")
    grid = CubedSphereGrid(n)
    attrs = {
        "title": "screamcast nudged rollout", "screamcast_version": __version__,
        "checkpoint": str(o.checkpoint), "checkpoint_sha256": _sha256(o.checkpoint),
        "initial_condition": str(o.data), "start": str(out_times[0]),
        "time_step_minutes": float(dt / np.timedelta64(1, "m")),
        "halo_adjoint": int(o.halo_adjoint),
        "halo_adjoint_cross_face": int(o.halo_adjoint_cross_face),
        "precision": resolve_precision(o.precision, o.device),
        "memory_format": "channels_last" if o.channels_last else "contiguous",
        "nudging": int(nudger is not None), "reference": str(o.reference or ""),
        "command": " ".join(sys.argv), "Conventions": "CF-1.8",
    }  # fmt: skip
    if nudger is not None:
        attrs |= nudger.attrs()
    var_attrs = {v: dict(ds[v].attrs) for v in prog + diag if v in ds}
    writer = RolloutWriter(o.output, prog + diag, var_attrs, grid, attrs, out_times)
    rank, world = _distributed()
    if o.resume:
        done, last_time, fields = writer.recover()
        if last_time not in out_times:
            raise RolloutError(
                f"--resume: {o.output} ends at {last_time}, not on this rollout's times"
            )
        x = torch.as_tensor(fields[: len(prog)])
        k0 = int(np.flatnonzero(out_times == last_time)[0])
    else:
        if rank == 0:
            writer.create(o.overwrite)
        x = torch.as_tensor(ds[prog].isel(time=i0).to_array().values.astype(np.float32))
        first = [ds[v].values[i0] if v in ds else np.full((6, n, n), np.nan) for v in diag]
        if rank == 0:
            writer.append(
                out_times[0], np.concatenate([x.numpy(), np.stack(first)]) if diag else x.numpy()
            )
        k0 = 0
    pipeline = build_pipeline(cfg, Stats.from_dict(ckpt["stats"]))
    pipeline.load_state_dict(ckpt["model"])
    static_fields = np.stack([ds[v].values for v in static]) if static else np.zeros((0, 6, n, n))
    layout = TileLayout(grid, tile, halo)
    stepper = GlobalStepper(pipeline, layout, static_fields, o.device, o.batch_size,
                            o.halo_adjoint, o.halo_adjoint_cross_face, rank, world,
                            o.precision, o.channels_last)  # fmt: skip
    bar = _bar(o, k0) if rank == 0 else None
    t_wall = time.perf_counter()
    C = len(prog)
    try:
        for k in range(k0, o.steps):
            y = stepper.step(x, out_times[k], out_times[k + 1]).cpu()  # (C + D, 6, n, n)
            x = y[:C].clone()
            if nudger is not None:
                nudger.apply(x, out_times[k + 1])
            y = torch.cat([x, y[C:].clamp(min=0.0)]) if diag else x
            if rank == 0:
                writer.append(out_times[k + 1], y.numpy())  # written while the next step runs
                if bar is not None:
                    bar.update(1)
                    hours = (k + 1 - k0) * dt / np.timedelta64(1, "h")
                    rate = hours / (time.perf_counter() - t_wall)
                    bar.set_postfix(sim_h_per_wall_s=f"{rate:.1f}")
    finally:
        if nudger is not None:
            nudger.close()
        if rank == 0:
            writer.close()
    if bar is not None:
        bar.close()
    summary = {"output": str(o.output), "steps": o.steps, "attrs": attrs}
    if rank == 0:
        summary["metrics"] = write_metrics(o.output, ds, prog + diag, out_times, grid)
    return summary


def _distributed() -> tuple[int, int]:
    """torchrun-style ranks (WORLD_SIZE > 1): initialise gloo/nccl once."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1
    if not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        torch.distributed.init_process_group(backend)
    return torch.distributed.get_rank(), world


def _bar(o: RolloutOptions, k0: int):
    if not o.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=o.steps, initial=k0, desc="rollout", unit="step", dynamic_ncols=True)


def write_metrics(output, truth_ds, variables, out_times, grid) -> dict | None:
    """Per-step area-weighted RMSE and bias against the store's truth, as CSV and JSON, and a
    cube-net PNG of the last step. None when the store does not cover the rollout."""
    import xarray as xr

    from screamcast.plot import plot_prediction

    t = truth_ds["time"].values
    if out_times[-1] > t[-1] or not np.isin(out_times, t).all():
        return None
    pred = xr.open_zarr(output, consolidated=False)
    truth = truth_ds[variables].sel(time=out_times)
    area = grid.area
    rows, table = [], {}
    ic = truth.isel(time=0)
    for v in variables:
        p, tr = pred[v].values, truth[v].values
        rmse, bias = area_weighted_rmse(p, tr, area), area_weighted_bias(p, tr, area)
        persistence = area_weighted_rmse(np.broadcast_to(ic[v].values, tr.shape), tr, area)
        table[v] = {
            "rmse": rmse.tolist(),
            "bias": bias.tolist(),
            "persistence_rmse": persistence.tolist(),
        }
        rows += [
            (k, str(out_times[k]), v, rmse[k], bias[k], persistence[k])
            for k in range(len(out_times))
        ]
    base = Path(str(output).removesuffix(".zarr"))
    with open(f"{base}_metrics.csv", "w") as f:
        f.write("step,time,variable,rmse,bias,persistence_rmse\n")
        f.writelines(f"{k},{tt},{v},{r:.6g},{b:.6g},{p:.6g}\n" for k, tt, v, r, b, p in rows)
    Path(f"{base}_metrics.json").write_text(json.dumps(table, indent=1))
    v0 = variables[0]
    plot_prediction(f"{base}_last_step.png", pred[v0].values[-1], truth[v0].values[-1], v0)
    return table
