# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudged global rollout: plan (check everything, write nothing), then step, correct,
bound and stream out under an exclusive lock on the output.

How the output is created, replaced and resumed without ever losing a user's data:
:mod:`screamcast.rollout.output`. Scores are not this module's: the caller hands in a
``scoring(plan)`` that returns an aggregator (``record(step, time, fields)``,
:mod:`screamcast.evaluation`) or None, and gets it back in the summary.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Callable

import numpy as np
import torch
import xarray as xr

from screamcast.config.inference import InferenceConfig
from screamcast.data.calendar import DECODER, seconds
from screamcast.data.channels import each_step
from screamcast.file_lock import FileLock
from screamcast.replace_dir import publish
from screamcast.rollout import output as out
from screamcast.rollout.advance import GuardStop, advance
from screamcast.rollout.plan import RolloutError, RolloutPlan, plan_rollout
from screamcast.rollout.rollout_step import build_guard, build_step, check_correctors
from screamcast.rollout.stepper import GlobalStepper, StepperConfig
from screamcast.rollout.writer import RolloutWriter
from screamcast.step.correctors import CorrectorConfigError

__all__ = ["RolloutError", "run_rollout"]

_OWN_GROUP: list[bool] = []  # non-empty while this module's process group is open
Scoring = Callable[[RolloutPlan], object]  # -> an aggregator, or None


def run_rollout(
    config: InferenceConfig, scoring: Scoring | None = None, source: str = "the config"
) -> dict:
    """Run (or resume) a rollout; returns ``{"output", "steps", "attrs", "scores"}`` (the
    aggregator ``scoring`` made, fed every step, or None). ``source``: where the config's
    requirements of the checkpoint came from, for messages."""
    several = int(os.environ.get("WORLD_SIZE", "1")) > 1  # each rank reads its own block
    plan = plan_rollout(config, source, read_initial=not several)
    try:
        check_correctors(plan)
    except CorrectorConfigError as err:
        if plan.corrector is not None:
            plan.corrector.close()
        raise RolloutError(f"{err} (checkpoint {config.checkpoint.path})") from None
    summary = {"output": str(plan.output), "steps": config.output.steps, "attrs": plan.attrs}
    scores = None
    try:
        rank, world, device = _ranks(config.stepper.device, config.stepper.timeout_minutes)
        summary["rank"] = rank
        if world > 1:  # by faces; scored by rank 0 from the finished output
            from screamcast.rollout.parallel_run import run_decomposed

            try:
                summary["exchange"] = run_decomposed(plan, rank, world, device)
            except RuntimeError as err:  # gloo's and NCCL's words for a lost rank
                lost = _lost_rank(str(err), config.stepper.timeout_minutes)
                if lost is None:
                    raise
                raise RolloutError(
                    f"rank {rank}: {lost} (its error, if any, is on its stderr); "
                    f"{plan.output} keeps its complete steps: rerun with --resume"
                ) from None
            finally:
                _leave_group()
            if rank == 0 and scoring is not None:
                scores = scoring(plan)
                if scores is not None:
                    _record_written(plan, scores, range(config.output.steps + 1))
            return summary | {"scores": scores}
        scores = scoring(plan) if scoring is not None else None
        with FileLock(out.lock_path(plan.output), f"output {plan.output}", remove=True):
            try:
                _execute(plan, device, scores)
            finally:
                out.consolidate(plan.output)
    finally:
        if plan.corrector is not None:
            plan.corrector.close()
    return summary | {"scores": scores}


def _execute(plan: RolloutPlan, device: str, scores) -> None:
    """Rank 0 under the output's lock: create / replace in the staging directory, or resume."""
    o = plan.config.output
    action = out.check_existing(plan.output, o.resume, o.overwrite)
    writer = plan.writer()
    if action == "resume":  # checked again under the lock: the output may have moved on
        out.check_resume_settings(plan.output, plan.attrs, plan.resume_keys)
        _steps(plan, writer, device, scores)
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
        _steps(plan, writer, device, scores)
        if action == "replace":  # the old output stays until the new one is complete
            publish(staging, plan.output)
    except BaseException:
        writer.close_quietly()
        if action == "replace" or not plan.output.exists():
            out.discard_staging(plan.output)
        raise


def _start(plan: RolloutPlan, writer: RolloutWriter, scores) -> tuple[int, torch.Tensor]:
    """The step to continue from and its prognostic state; the steps already there scored."""
    C = len(plan.prog)
    if plan.action != "resume":
        if scores is not None:
            scores.record(0, plan.out_times[0], plan.initial)
        return 0, torch.as_tensor(plan.initial[:C])
    done, last_time, fields = writer.recover()
    writer.note_resume(done, plan.attrs["command"])
    k0 = int(np.flatnonzero(plan.out_times == last_time)[0])
    if scores is not None:  # the steps written before the interruption, one at a time
        _record_written(plan, scores, range(k0 + 1))
    return k0, torch.as_tensor(fields[:C])


def _record_written(plan: RolloutPlan, scores, steps: range) -> None:
    """Feed ``scores`` the ``steps`` already in the output, one step in memory at a time."""
    written = xr.open_zarr(plan.output, consolidated=False, decode_times=DECODER, chunks=None)
    for k, fields in each_step(written, plan.prog + plan.diag, steps):
        scores.record(k, plan.out_times[k], fields)


def _stepper(plan: RolloutPlan, device: str) -> GlobalStepper:
    config = StepperConfig.of(plan.config.stepper, device)
    return GlobalStepper(plan.pipeline(), plan.layout(), plan.static_fields, config)


def _steps(plan: RolloutPlan, writer: RolloutWriter, device: str, scores=None) -> None:
    """Step from the last complete step (or the start) to the end."""
    steps = plan.config.output.steps
    k0, x = _start(plan, writer, scores)
    step = build_step(plan, _stepper(plan, device), plan.corrector)
    bar = _bar(plan.config, k0)
    t_wall, times = time.perf_counter(), plan.out_times

    def emit(k: int, y: torch.Tensor) -> None:
        writer.append(times[k], y.numpy())  # written while the next step runs
        if scores is not None:
            scores.record(k, times[k], y.numpy())
        if bar is not None:
            bar.update(1)
            hours = (k - k0) * seconds(plan.dt) / 3600.0
            bar.set_postfix(sim_h_per_wall_s=f"{hours / (time.perf_counter() - t_wall):.1f}")

    try:
        advance(step, build_guard(plan), x, times, range(k0, steps), emit)
    except GuardStop as stop:
        writer.flush()
        writer.note_stop(stop.trip.record())
        raise RolloutError(stop.trip.message(plan.output)) from None
    finally:
        writer.close()
        if bar is not None:
            bar.close()


def _lost_rank(error: str, timeout_minutes: float) -> str | None:
    """What a collective's error says happened to another rank, or None for any other
    error: a timeout (stalled, or dead unseen) or a closed connection (it stopped)."""
    error = error.lower()
    if "timed out" in error or "timeout" in error:
        return f"another rank did not answer within {timeout_minutes:g} min (stalled or dead)"
    if "connection closed by peer" in error or "connection reset" in error:
        return "another rank stopped mid-run"
    return None


def _ranks(device: str, timeout_minutes: float = 10.0) -> tuple[int, int, str]:
    """``(rank, world, device)``. Several ranks (started by torchrun: WORLD_SIZE > 1) join
    one process group (gloo on CPU, NCCL on CUDA), each on its own device
    (``cuda:<local rank>``, not every rank on ``cuda:0``). A collective that waits past
    ``timeout_minutes`` for a rank (stalled, or dead without its launcher noticing) fails
    instead of holding the job for the libraries' default 30 minutes."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1, device
    import torch.distributed as dist

    cuda = torch.device(device).type == "cuda"
    if cuda:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        timeout = datetime.timedelta(minutes=timeout_minutes)
        dist.init_process_group("nccl" if cuda else "gloo", timeout=timeout)
        _OWN_GROUP.append(True)
    return dist.get_rank(), dist.get_world_size(), device


def _leave_group() -> None:
    """Destroy the process group before the interpreter exits. Left to interpreter teardown,
    gloo's worker threads can outlive it and the rank dies of SIGABRT ("terminate called
    without an active exception") after a rollout that finished: seen once in CI with 3
    ranks. Every exchange has been waited for by then (the last call is a barrier), so each
    rank leaves on its own."""
    import torch.distributed as dist

    if _OWN_GROUP and dist.is_initialized():  # a caller's own group stays the caller's
        dist.destroy_process_group()
        _OWN_GROUP.clear()


def _bar(config: InferenceConfig, k0: int):
    if not config.output.progress:
        return None
    from tqdm import tqdm

    total = config.output.steps
    return tqdm(total=total, initial=k0, desc="rollout", unit="step", dynamic_ncols=True)
