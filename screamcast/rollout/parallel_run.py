# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout on several ranks, by domain decomposition: each rank steps, corrects and writes
its own block (whole faces, or a rectangle of a face's tiles: :mod:`screamcast.rollout.domain`);
only strips along the blocks' borders cross between ranks.

The output's guarantees hold as on one rank (:mod:`screamcast.rollout.output`): rank 0 holds
the lock and creates the store in the staging directory (chunks of one face and of the
blocks' common rows and columns, so no two ranks write one chunk); every rank writes its
block of the initial step, then rank 0 publishes the store; a step counts as complete
(``complete_steps``) only once every rank's region of it is on disk (a barrier, then rank 0
commits). A resumed output's chunks must fit the ranks' blocks. Scores are computed by rank 0
from the finished output (no gather of the state to rank 0 while it runs).
"""

from __future__ import annotations

import resource
import time

import numpy as np
import torch

from screamcast.data.calendar import seconds
from screamcast.file_lock import FileLock
from screamcast.replace_dir import publish
from screamcast.rollout import output as out
from screamcast.rollout.advance import GuardStop, advance
from screamcast.rollout.domain import blocks, chunk_shape
from screamcast.rollout.domain_stepper import DomainStepper
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.plan import RolloutError, RolloutPlan
from screamcast.rollout.rollout_step import build_guard, build_step
from screamcast.rollout.stepper import StepperConfig
from screamcast.rollout.writer import RolloutWriter


def run_decomposed(plan: RolloutPlan, rank: int, world: int, device: str) -> dict:
    """Run ``plan`` as rank ``rank`` of ``world``; returns ``{"sent_bytes", "steps_run",
    "wall_s"}`` of this rank (the exchanges' bytes: what the benchmark checks)."""
    if plan.corrector is not None and not callable(getattr(plan.corrector, "restrict", None)):
        raise RolloutError(  # before anything is written: every rank sees the same plan
            f"nudging method {plan.config.nudging.method!r} does not run on several ranks (it "
            "has no restrict(rank, blocks, tile, exchange)): run it on one rank"
        )
    exchange = Exchange(rank, world, device)
    layout = plan.layout()
    xplan = ExchangePlan.build(layout, rank, world)
    lock = FileLock(out.lock_path(plan.output), f"output {plan.output}", remove=True)
    initial, failure = None, None
    try:  # each rank reads (and checks) the initial state of its block only
        if plan.action != "resume":
            initial = plan.initial_state(xplan.block.region(layout.tile))
    except Exception as err:  # every rank stops: told by the flag below
        failure = err
    if rank == 0 and failure is None:
        try:
            lock.acquire()
            _prepare(plan, layout, world)
        except Exception as err:
            failure = err
    if exchange.any(failure is not None):
        lock.release()
        if failure is not None:
            raise failure
        raise RolloutError("another rank could not start the rollout (its error is on its stderr)")
    try:
        stats, target = _steps(plan, xplan, exchange, layout, initial, device)
        every = [None] * world
        torch.distributed.all_gather_object(every, stats)  # a few numbers per rank
        if rank == 0:
            _record_exchange(target, every)
            out.consolidate(target)
            if plan.action == "replace":  # the old output stays until the new is complete
                publish(target, plan.output)
    finally:
        lock.release()
    return stats


def _record_exchange(path, every: list[dict]) -> None:
    """The output's ``ranks``, and per rank the bytes sent per step, the peak memory and the
    step's seconds (this run's part)."""
    import zarr

    steps = max(s["steps_run"] for s in every) or 1
    zarr.open_group(path, mode="r+").attrs.update(
        {
            "ranks": len(every),
            "exchange_bytes_per_step": [round(s["sent_bytes"] / steps) for s in every],
            "peak_rss_mb_per_rank": [round(s["peak_rss_mb"], 1) for s in every],
            # seconds per step: the whole step (writing included), the network's forwards, the
            # wait for the halo exchange (what the forwards did not hide), the reassembly (with
            # its exchanges) and the writing (with the barrier that commits the last step)
            "step_s_per_rank": [round(s["wall_s"] / steps, 5) for s in every],
            "forward_s_per_rank": [round(s["forward_s"] / steps, 5) for s in every],
            "halo_wait_s_per_rank": [round(s["halo_wait_s"] / steps, 5) for s in every],
            "reassembly_s_per_rank": [round(s["reassembly_s"] / steps, 5) for s in every],
            "write_s_per_rank": [round(s["write_s"] / steps, 5) for s in every],
        }
    )


def _prepare(plan: RolloutPlan, layout, world: int) -> None:
    """Rank 0: the store every rank will write its region of (in the staging directory), or
    the check that an output to resume fits the ranks' blocks."""
    o = plan.config.output
    action = out.check_existing(plan.output, o.resume, o.overwrite)
    writer = plan.writer(chunks=chunk_shape(world, layout))
    if action == "resume":
        out.check_resume_settings(plan.output, plan.attrs, plan.resume_keys)
        regions = [b.region(layout.tile) for b in blocks(world, layout.tiles_per_side)]
        if not writer.chunked_for(regions):
            raise RolloutError(
                f"cannot resume {plan.output} on {world} ranks: its chunks do not fit their "
                "blocks (a chunk holds pixels of two ranks); resume it with the number of "
                "ranks that wrote it"
            )
        return
    out.discard_staging(plan.output)
    writer.path = out.staging_path(plan.output)
    writer.create()
    writer.close()


def _write_initial(plan, writer: RolloutWriter, exchange: Exchange, initial: np.ndarray) -> None:
    """Every rank writes its region of the initial step into the staging store; once all
    are on disk rank 0 commits it and, for a new output, publishes the store (a killed run
    leaves an output that resumes); the ranks then write the published store."""
    writer.append(plan.out_times[0], initial)
    _commit_previous(writer, exchange, exchange.rank, 0)
    if plan.action == "create":
        if exchange.rank == 0:
            publish(writer.path, plan.output)
        exchange.barrier()
        writer.close()
        writer.path = plan.output


def _stepper(plan: RolloutPlan, layout, xplan, exchange, device) -> DomainStepper:
    config = StepperConfig.of(plan.config.stepper, device)
    return DomainStepper(plan.pipeline(), layout, plan.static_fields, config, xplan, exchange)


def _corrector(plan: RolloutPlan, xplan: ExchangePlan, exchange: Exchange, layout):
    if plan.corrector is None:
        return None
    every = blocks(xplan.world, layout.tiles_per_side)
    return plan.corrector.restrict(xplan.rank, every, layout.tile, exchange)


def _resumed(plan: RolloutPlan, writer: RolloutWriter, region) -> tuple[int, torch.Tensor]:
    """The step to continue from and this rank's prognostic state there ``(C, F, h, w)``."""
    C = len(plan.prog)
    done, last_time, fields = writer.recover()
    k0 = int(np.flatnonzero(plan.out_times == last_time)[0])
    return k0, torch.as_tensor(fields[:C][(slice(None), *region)].copy())


def _steps(plan, xplan, exchange: Exchange, layout, initial, device) -> tuple[dict, object]:
    """Every rank: step its block to the end, writing its region; rank 0 commits each step
    once all regions are on disk. Returns this rank's numbers and where the output is."""
    region, rank = xplan.block.region(layout.tile), xplan.rank
    resume = plan.action == "resume"
    target = plan.output if resume else out.staging_path(plan.output)
    writer = plan.writer(target, region, chunk_shape(xplan.world, layout))
    if resume:
        k0, x = _resumed(plan, writer, region)
        if rank == 0:
            writer.note_resume(k0 + 1, plan.attrs["command"])
    else:
        _write_initial(plan, writer, exchange, initial)
        k0, x = 0, torch.as_tensor(initial[: len(plan.prog)])
    nudging = _corrector(plan, xplan, exchange, layout)
    stepper = _stepper(plan, layout, xplan, exchange, device)
    step = build_step(plan, stepper, nudging, region, exchange)
    guard = build_guard(plan, region, exchange)
    steps, times = plan.config.output.steps, plan.out_times

    writing = [0.0]

    def emit(k: int, y: torch.Tensor) -> None:
        start = time.perf_counter()
        _commit_previous(writer, exchange, rank, k - 1)  # step k - 1: every rank's is on disk
        writer.append(times[k], y.numpy())
        writing[0] += time.perf_counter() - start

    exchange.reset()
    t_wall = time.perf_counter()
    try:
        advance(step, guard, x, times, range(k0, steps), emit)
        _commit_previous(writer, exchange, rank, steps)
    except GuardStop as stop:  # every rank saw the same trip (the guard reduces first)
        _commit_previous(writer, exchange, rank, stop.trip.step - 1)
        if rank == 0:
            writer.note_stop(stop.trip.record())
        raise RolloutError(stop.trip.message(plan.output)) from None
    finally:
        writer.close_quietly()
    hours = (steps - k0) * seconds(plan.dt) / 3600.0
    wall = time.perf_counter() - t_wall
    return {
        "sent_bytes": exchange.sent_bytes,
        "steps_run": steps - k0,
        "wall_s": wall,
        "sim_h_per_wall_s": hours / wall if wall > 0 else float("nan"),
        "forward_s": stepper.seconds["forward"],
        "halo_wait_s": stepper.seconds["halo_wait"],
        "reassembly_s": stepper.seconds["reassembly"],
        "write_s": writing[0],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KB on Linux
    }, writer.path


def _commit_previous(writer: RolloutWriter, exchange: Exchange, rank: int, k: int) -> None:
    """Once every rank's region of step ``k`` is written, rank 0 counts it complete."""
    writer.flush()
    exchange.barrier()
    if rank == 0:
        writer.commit(k)
