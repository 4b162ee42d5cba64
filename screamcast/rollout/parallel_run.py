# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout on several ranks, by domain decomposition: each rank steps, corrects and writes
its own faces; only halo strips along shared cube edges cross between ranks.

The output's guarantees hold as on one rank (:mod:`screamcast.rollout.output`): rank 0 holds
the lock, creates the store (one chunk per face, so no two ranks write one chunk) in the
staging directory, and publishes it; a step counts as complete (``complete_steps``) only once
every rank's region of it is on disk (a barrier, then rank 0 commits). A resumed output must
be chunked by face. Scores are computed by rank 0 from the finished output (no gather of the
state to rank 0 while it runs).
"""

from __future__ import annotations

import resource
import time

import numpy as np
import torch

from screamcast.data.calendar import seconds
from screamcast.file_lock import FileLock
from screamcast.model import constraints
from screamcast.replace_dir import publish
from screamcast.rollout import output as out
from screamcast.rollout.domain import ExchangePlan
from screamcast.rollout.domain_stepper import DomainStepper
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.plan import RolloutError, RolloutPlan
from screamcast.rollout.stepper import StepperConfig
from screamcast.rollout.writer import RolloutWriter


def run_decomposed(plan: RolloutPlan, rank: int, world: int, device: str) -> dict:
    """Run ``plan`` as rank ``rank`` of ``world``; returns ``{"sent_bytes", "steps_run",
    "wall_s"}`` of this rank (the exchanges' bytes: what the benchmark checks)."""
    exchange = Exchange(rank, world, device)
    layout = plan.layout()
    xplan = ExchangePlan.build(layout, rank, world)
    lock = FileLock(out.lock_path(plan.output), f"output {plan.output}", remove=True)
    target, failure = None, None
    if rank == 0:
        try:
            lock.acquire()
            target = _prepare(plan)
        except Exception as err:  # every rank stops: told by the flag below
            failure = err
    if exchange.any(failure is not None):
        lock.release()
        if failure is not None:
            raise failure
        raise RolloutError("rank 0 could not prepare the output (its error is on its stderr)")
    try:
        target = plan.output if plan.action == "resume" else _target(plan)
        stats = _steps(plan, xplan, exchange, layout, target, device)
        every = [None] * world
        torch.distributed.all_gather_object(every, stats)  # a few numbers per rank
        if rank == 0:
            _record_exchange(target, every)
            if plan.action == "replace":  # the old output stays until the new is complete
                publish(target, plan.output)
    finally:
        lock.release()
    return stats


def _record_exchange(path, every: list[dict]) -> None:
    """The output's ``ranks``, and per rank the bytes sent per step and the peak memory (this
    run's part)."""
    import zarr

    steps = max(s["steps_run"] for s in every) or 1
    zarr.open_group(path, mode="r+").attrs.update(
        {
            "ranks": len(every),
            "exchange_bytes_per_step": [round(s["sent_bytes"] / steps) for s in every],
            "peak_rss_mb_per_rank": [round(s["peak_rss_mb"], 1) for s in every],
        }
    )


def _target(plan: RolloutPlan):
    """Where the ranks write: the published output (create) or the staging copy (replace)."""
    return out.staging_path(plan.output) if plan.action == "replace" else plan.output


def _prepare(plan: RolloutPlan):
    """Rank 0: the store every rank will write its region of, with the initial step."""
    o = plan.config.output
    action = out.check_existing(plan.output, o.resume, o.overwrite)
    writer = plan.writer(faces=range(6))
    if action == "resume":
        out.check_resume_settings(plan.output, plan.attrs, plan.resume_keys)
        if not writer.face_chunked():
            raise RolloutError(
                f"cannot resume {plan.output} on several ranks: it was written by one rank, "
                "a step to a chunk; resume it with one rank"
            )
        return plan.output
    out.discard_staging(plan.output)
    staging = out.staging_path(plan.output)
    writer.path = staging
    writer.create()
    writer.append(plan.out_times[0], plan.initial)
    writer.flush()
    writer.commit(0)
    writer.close()
    if action == "create":
        publish(staging, plan.output)
        return plan.output
    return staging


def _stepper(plan: RolloutPlan, layout, xplan, exchange, device) -> DomainStepper:
    config = StepperConfig.of(plan.config.stepper, device)
    return DomainStepper(plan.pipeline(), layout, plan.static_fields, config, xplan, exchange)


def _corrector(plan: RolloutPlan, faces: range, exchange: Exchange):
    if plan.corrector is None:
        return None
    if not hasattr(plan.corrector, "restrict"):
        raise RolloutError(
            f"nudging method {plan.config.nudging.method!r} does not run on several ranks (it "
            "has no restrict(faces, reduce)): run it on one rank"
        )
    return plan.corrector.restrict(faces, exchange.sum_)


def _start(plan: RolloutPlan, writer: RolloutWriter, faces: range) -> tuple[int, torch.Tensor]:
    """The step to continue from and this rank's prognostic state there ``(C, F, n, n)``; the
    whole initial state (read by every rank's plan, written by rank 0) is let go here, so a
    rank keeps only its faces while it steps."""
    C, own = len(plan.prog), slice(faces.start, faces.stop)
    if plan.action != "resume":
        state = torch.as_tensor(plan.initial[:C, own].copy())
        plan.initial = None
        return 0, state
    done, last_time, fields = writer.recover()
    k0 = int(np.flatnonzero(plan.out_times == last_time)[0])
    return k0, torch.as_tensor(fields[:C, own].copy())


def _steps(plan, xplan, exchange: Exchange, layout, target, device) -> dict:
    """Every rank: step its faces to the end, writing its region; rank 0 commits each step
    once all regions are on disk."""
    faces, rank = xplan.faces, xplan.rank
    writer = plan.writer(target, faces)
    k0, x = _start(plan, writer, faces)
    if rank == 0 and plan.action == "resume":
        writer.note_resume(k0 + 1, plan.attrs["command"])
    stepper = _stepper(plan, layout, xplan, exchange, device)
    corrector = _corrector(plan, faces, exchange)
    steps, C, times = plan.config.output.steps, len(plan.prog), plan.out_times
    exchange.reset()
    t_wall = time.perf_counter()
    try:
        for k in range(k0, steps):
            y = stepper.step(x, times[k], times[k + 1]).cpu()  # (C + D, F, n, n)
            x = y[:C].clone()
            if corrector is not None:
                corrector.apply(x, times[k + 1])
            y = torch.cat([x, y[C:]]) if plan.diag else x
            constraints.clamp_(y[None], stepper.bounded)
            _check_state(y, plan, k + 1, exchange)
            _commit_previous(writer, exchange, rank, k)  # step k: every rank's is on disk
            writer.append(times[k + 1], y.numpy())
        _commit_previous(writer, exchange, rank, steps)
    finally:
        writer.close_quietly()
    hours = (steps - k0) * seconds(plan.dt) / 3600.0
    wall = time.perf_counter() - t_wall
    return {
        "sent_bytes": exchange.sent_bytes,
        "steps_run": steps - k0,
        "wall_s": wall,
        "sim_h_per_wall_s": hours / wall if wall > 0 else float("nan"),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KB on Linux
    }


def _commit_previous(writer: RolloutWriter, exchange: Exchange, rank: int, k: int) -> None:
    """Once every rank's region of step ``k`` is written, rank 0 counts it complete."""
    writer.flush()
    exchange.barrier()
    if rank == 0 and k > 0:
        writer.commit(k)


def _check_state(y: torch.Tensor, plan: RolloutPlan, k: int, exchange: Exchange) -> None:
    """Stop every rank when any rank's state turned NaN/Inf (the rank that saw it names it)."""
    finite = torch.isfinite(y).flatten(1).all(dim=1)  # (V,)
    bad = not bool(finite.all())
    if not exchange.any(bad):
        return
    names = plan.prog + plan.diag
    what = ", ".join(names[i] for i in torch.nonzero(~finite).flatten().tolist())
    what = what or "another rank's faces"
    raise RolloutError(
        f"the state turned non-finite at step {k} ({plan.out_times[k]}) in {what}: stopped; "
        f"{plan.output} keeps the steps before it"
    )
