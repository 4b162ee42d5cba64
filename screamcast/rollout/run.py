# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudged global rollout: plan (check everything, write nothing), then step, nudge, clip
and stream out under an exclusive lock on the output.

How the output is created, replaced and resumed without ever losing a user's data:
:mod:`screamcast.rollout.output`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import torch
import xarray as xr

from screamcast.data.calendar import DECODER, seconds
from screamcast.data.stats import Stats
from screamcast.evaluate import StepSkill
from screamcast.file_lock import FileLock
from screamcast.grid import TileLayout
from screamcast.model.pipeline import build_pipeline
from screamcast.replace_dir import publish
from screamcast.rollout import output as out
from screamcast.rollout.plan import RolloutError, RolloutOptions, RolloutPlan, plan_rollout
from screamcast.rollout.stepper import GlobalStepper, StepperConfig
from screamcast.rollout.writer import RolloutWriter
from screamcast.skill_extras import AnomalyCorrelation, ReferenceMisfit, SeamSkill

__all__ = ["RolloutError", "RolloutOptions", "run_rollout"]


def run_rollout(o: RolloutOptions) -> dict:
    """Run (or resume) a rollout; returns a summary with the per-step metrics if truth exists."""
    plan = plan_rollout(o)
    summary = {"output": str(plan.output), "steps": o.steps, "attrs": plan.attrs}
    try:
        rank, world, device = _ranks(o.device)
        if rank != 0:
            _steps(plan, None, rank, world, device)
            return summary
        # scored while it runs, one step in memory, when the store holds the truth
        variables = plan.prog + plan.diag
        tile = plan.checkpoint.description.grid.tile  # seams and the tile imprint, per step
        steps, area = len(plan.out_times), plan.grid.area
        extras = [SeamSkill(plan.grid.n, tile, area, variables, steps)]
        if plan.climatology is not None:  # checked by the plan: the store holds the truth
            extras.append(AnomalyCorrelation(plan.climatology, area, variables, steps))
        skill = StepSkill.covering(plan.ds, variables, plan.out_times, area, extras)
        if plan.nudger is not None:  # scored against the reference, with or without a truth
            skill = skill or StepSkill(None, variables, plan.out_times, area)
            skill.extras.append(ReferenceMisfit(plan.nudger, plan.out_times))
        with FileLock(out.lock_path(plan.output), f"output {plan.output}", remove=True):
            _execute(plan, rank, world, device, skill)
    finally:
        if plan.nudger is not None:
            plan.nudger.close()
    base = Path(str(plan.output).removesuffix(".zarr"))
    summary["metrics"] = skill.write(base) if skill is not None else None
    return summary


def _execute(
    plan: RolloutPlan, rank: int, world: int, device: str, skill: StepSkill | None
) -> None:
    """Rank 0 under the output's lock: create / replace in the staging directory, or resume."""
    action = out.check_existing(plan.output, plan.options.resume, plan.options.overwrite)
    writer = RolloutWriter(
        plan.output,
        plan.prog + plan.diag,
        plan.var_attrs,
        plan.grid,
        plan.attrs,
        plan.out_times,
        plan.levels,
    )
    if action == "resume":  # checked again under the lock: the output may have moved on
        out.check_resume_settings(plan.output, plan.attrs)
        _steps(plan, writer, rank, world, device, skill)
        return
    out.discard_staging(plan.output)  # a killed run's leftovers
    staging = out.staging_path(plan.output)
    writer.path = staging
    try:
        writer.create()
        writer.append(plan.out_times[0], plan.initial)
        if action == "create":  # the output appears with its first step on disk
            writer.close()
            publish(staging, plan.output)
            writer.path = plan.output
        _steps(plan, writer, rank, world, device, skill)
        if action == "replace":  # the old output stays until the new one is complete
            publish(staging, plan.output)
    except BaseException:
        writer.close_quietly()
        if action == "replace" or not plan.output.exists():
            out.discard_staging(plan.output)
        raise


def _start(
    plan: RolloutPlan, writer: RolloutWriter | None, skill: StepSkill | None
) -> tuple[int, torch.Tensor]:
    """The step to continue from and its prognostic state; the steps already there scored."""
    C = len(plan.prog)
    if plan.action != "resume":
        if skill is not None:
            skill.add(0, plan.initial)
        return 0, torch.as_tensor(plan.initial[:C])
    reader = writer or RolloutWriter(
        plan.output, plan.prog + plan.diag, {}, plan.grid, {}, plan.out_times
    )
    done, last_time, fields = reader.recover()
    if writer is not None:
        writer.note_resume(done, plan.attrs["command"])
    k0 = int(np.flatnonzero(plan.out_times == last_time)[0])
    if skill is not None:  # the steps written before the interruption, one at a time
        skill.add_from_output(
            xr.open_zarr(plan.output, consolidated=False, decode_times=DECODER, chunks=None),
            range(k0 + 1),
        )
    return k0, torch.as_tensor(fields[:C])


def _stepper(plan: RolloutPlan, rank: int, world: int, device: str) -> GlobalStepper:
    o, desc = plan.options, plan.checkpoint.description
    pipeline = build_pipeline(plan.cfg, Stats.from_dict(desc.stats))
    pipeline.load_state_dict(plan.checkpoint.weights)
    layout = TileLayout(plan.grid, desc.grid.tile, desc.grid.halo)
    config = StepperConfig(
        o.reassembly,
        device,
        o.batch_size,
        o.precision,
        o.channels_last,
        rank,
        world,
        window=o.halo_adjoint_window,
    )
    return GlobalStepper(pipeline, layout, plan.static_fields, config)


def _steps(
    plan: RolloutPlan,
    writer: RolloutWriter | None,
    rank: int,
    world: int,
    device: str,
    skill: StepSkill | None = None,
) -> None:
    """Step from the last complete step (or the start) to the end; ``writer`` on rank 0."""
    o, C = plan.options, len(plan.prog)
    k0, x = _start(plan, writer, skill)
    stepper = _stepper(plan, rank, world, device)
    bar = _bar(o, k0) if writer is not None else None
    t_wall, times = time.perf_counter(), plan.out_times
    try:
        for k in range(k0, o.steps):
            y = stepper.step(x, times[k], times[k + 1]).cpu()  # (C + D, 6, n, n)
            x = y[:C].clone()
            if plan.nudger is not None:
                plan.nudger.apply(x, times[k + 1])
            y = torch.cat([x, y[C:].clamp(min=0.0)]) if plan.diag else x
            _check_state(y, plan.prog + plan.diag, k + 1, times[k + 1], plan.output)
            if writer is not None:
                writer.append(times[k + 1], y.numpy())  # written while the next step runs
            if skill is not None:
                skill.add(k + 1, y.numpy())
            if bar is not None:
                bar.update(1)
                hours = (k + 1 - k0) * seconds(plan.dt) / 3600.0
                bar.set_postfix(sim_h_per_wall_s=f"{hours / (time.perf_counter() - t_wall):.1f}")
    finally:
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()


def _check_state(y: torch.Tensor, names: list[str], k: int, t, output) -> None:
    """Stop a rollout whose state turned NaN/Inf (an unstable model, a bad reference value)."""
    finite = torch.isfinite(y).flatten(1).all(dim=1)  # (V,)
    if bool(finite.all()):
        return
    bad = [names[i] for i in torch.nonzero(~finite).flatten().tolist()]
    raise RolloutError(
        f"the state turned non-finite at step {k} ({t}) in {', '.join(bad)}: stopped; "
        f"{output} keeps the steps before it"
    )


def _ranks(device: str) -> tuple[int, int, str]:
    """``(rank, world, device)``. Several ranks (started by torchrun: WORLD_SIZE > 1) are set
    up as training sets them up, by Lightning Fabric: the process group (gloo on CPU, nccl on
    CUDA) and each rank's own device (``cuda:<local rank>``, not every rank on ``cuda:0``)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1, device
    from lightning.fabric import Fabric

    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    accelerator = "cuda" if torch.device(device).type == "cuda" else "cpu"
    fabric = Fabric(
        accelerator=accelerator, devices=local, num_nodes=world // local, strategy="ddp"
    )
    fabric.launch()
    return fabric.global_rank, fabric.world_size, str(fabric.device)


def _bar(o: RolloutOptions, k0: int):
    if not o.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=o.steps, initial=k0, desc="rollout", unit="step", dynamic_ncols=True)
