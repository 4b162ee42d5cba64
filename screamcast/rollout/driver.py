# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's one driver, for one rank or many: one output lifecycle, one resume.

Each rank steps, corrects and writes its own part of the globe (one rank: all of it; several:
a block, :mod:`screamcast.rollout.domain`, its borders exchanged). What changes with the rank
count is only what the exchange does (:class:`~screamcast.rollout.exchange.LocalExchange` on
one rank: nothing) and which stepper steps the part.

The output's guarantees (:mod:`screamcast.rollout.output`): rank 0 holds the lock and creates
the store in the staging directory; every rank writes its part of the initial step, then rank
0 publishes the store (a new output appears with its first step on disk); a step counts as
complete (``complete_steps``) only once every rank's part of it is on disk; a replaced output
stays until the new one is complete. ``scores`` (an aggregator: ``record(step, time,
fields)``, rank 0's) is fed every step as it is made, on any number of ranks: the ranks'
parts of the step are gathered into the globe on rank 0 (:meth:`Part.score`), so an
aggregator sees the same fields in the same order on 1 and N ranks.
"""

from __future__ import annotations

import dataclasses
import resource
import time

import numpy as np
import torch

from screamcast.data.calendar import seconds
from screamcast.file_lock import FileLock
from screamcast.model.state import State
from screamcast.replace_dir import publish
from screamcast.rollout import output as out
from screamcast.rollout.advance import GuardStop, advance
from screamcast.rollout.domain import blocks, chunk_shape
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.inference_settings import check_same_settings
from screamcast.rollout.plan import RolloutError, RolloutInputs, RolloutPlan
from screamcast.rollout.rollout_step import build_guard, build_step
from screamcast.rollout.stepper import GlobalStepper
from screamcast.rollout.writer import RolloutWriter


class StoppedByGuard(RolloutError):
    """The guard stopped the run (every rank at the same step: the guard reduces first)."""


class Part:
    """This rank's part of the globe: ``region`` ``(faces, rows, cols)`` (None: the globe)."""

    def __init__(self, plan: RolloutPlan, inputs: RolloutInputs, exchange):
        self.plan, self.inputs, self.exchange = plan, inputs, exchange
        self.rank, self.world = exchange.rank, exchange.world
        self.layout = plan.layout()
        self.exchanges, self.region, self.chunks = None, None, None  # one rank: the globe
        self.corrector = inputs.corrector  # on several ranks: its restriction (drive)
        self.blocks = blocks(self.world, self.layout.tiles_per_side)  # every rank's
        self.scored = False  # any rank scores (drive): every rank sends rank 0 its part
        self.earlier = None  # (P, F, h, w): the state before the start (two input times)
        if self.world > 1:
            self.exchanges = ExchangePlan.build(self.layout, self.rank, self.world)
            self.region = self.exchanges.block.region(self.layout.tile)
            self.chunks = chunk_shape(self.world, self.layout)  # every block whole chunks

    def writer(self, path=None, whole: bool = False) -> RolloutWriter:
        """This part's writer (``whole``: the store's, which creates it; one rank's writer
        counts each step complete itself once it is written)."""
        return self.plan.writer(path, None if whole else self.region, self.chunks)

    def stepper(self, device: str) -> GlobalStepper:
        """This part's stepper: its block's tiles, its exchange (local on one rank)."""
        plan, static = self.plan, self.inputs.static_fields
        section, pipeline = plan.config.stepper, plan.pipeline()
        block = {"plan": self.exchanges, "exchange": self.exchange}  # None: the globe's
        return GlobalStepper(pipeline, self.layout, static, section, device, **block)

    def nudging(self):
        """The nudging's corrector on this part (its ``restrict`` on several ranks)."""
        corrector = self.inputs.corrector
        if corrector is None or self.world == 1:
            return corrector
        return corrector.restrict(self.rank, self.blocks, self.layout.tile, self.exchange)

    def initial(self) -> np.ndarray | None:
        """The initial state of this part (None for a resume), read and checked."""
        if self.plan.action == "resume":
            return None
        if self.region is None and self.inputs.initial is not None:
            return self.inputs.initial
        return self.inputs.initial_state(self.plan, self.region)

    def initial_previous(self) -> np.ndarray | None:
        """Two input times: this part's state a step before the start, read and checked
        with the initial state, before anything is written (else None)."""
        if self.plan.input_times == 1 or self.plan.action == "resume":
            return None
        return self.inputs.previous_state(self.plan, self.region)  # (P, F, h, w)

    def previous(self, writer: RolloutWriter, k0: int) -> torch.Tensor | None:
        """Two input times: this part's state a step before step ``k0``, the initial
        condition's (``k0 = 0``) or the output's step ``k0 - 1`` (a resume); else None."""
        plan = self.plan
        if plan.input_times == 1:
            return None
        if k0 == 0:  # a fresh run's, or a resume of an output holding its first step only
            fields = self.earlier
            if fields is None:
                fields = self.inputs.previous_state(plan, self.region)  # (P, F, h, w)
        else:
            fields = writer.fields_at(k0 - 1)[: len(plan.prog)]  # (P, 6, n, n)
            if self.region is not None:
                fields = fields[(slice(None), *self.region)]
        return torch.as_tensor(np.ascontiguousarray(fields))

    def score(self, scores, k: int, when, fields: np.ndarray) -> None:
        """Feed ``scores`` (rank 0's aggregator; None on the other ranks) step ``k`` at
        ``when``: this part's ``fields (V, F, h, w)``, on several ranks gathered into the
        globe's ``(V, 6, n, n)`` on rank 0 (every rank takes part)."""
        if not self.scored:
            return
        globe = self.whole(fields)
        if scores is not None and globe is not None:  # rank 0 holds the globe
            scores.record(k, when, globe)

    def whole(self, fields: np.ndarray) -> np.ndarray | None:
        """The globe ``(V, 6, n, n)`` on rank 0 from every rank's part ``(V, F, h, w)``;
        None on the other ranks (one rank: ``fields`` itself)."""
        if self.region is None:
            return fields
        parts = self.exchange.collect(fields)
        if parts is None:
            return None
        n = self.plan.grid.n
        globe = np.empty((fields.shape[0], 6, n, n), fields.dtype)
        for block, part in zip(self.blocks, parts, strict=True):
            globe[(slice(None), *block.region(self.layout.tile))] = part
        return globe

    def commit_previous(self, writer: RolloutWriter, k: int) -> None:
        """Once every rank's part of step ``k`` is written, rank 0 counts it complete (one
        rank's writer counts each step itself once it is written)."""
        writer.flush()
        if self.region is None:
            return
        self.exchange.barrier()
        if self.rank == 0:
            writer.commit(k)


def drive(plan: RolloutPlan, inputs: RolloutInputs, exchange, device: str, scores=None) -> dict:
    """Run (or resume) ``plan`` from its ``inputs`` as ``exchange.rank`` of ``exchange.world``,
    feeding ``scores`` (rank 0's aggregator, or None) every step; returns this rank's numbers
    (``steps_run``, ``wall_s``, the exchanges' bytes and time)."""
    part = Part(plan, inputs, exchange)
    part.scored = exchange.any(scores is not None)
    lock = FileLock(out.lock_path(plan.output), f"output {plan.output}", remove=True)
    initial, failure = None, None
    try:  # each rank reads (and checks) the initial state of its part only
        check_same_settings(exchange.gather((plan.attrs["tile"], plan.attrs["precision"])))
        initial = part.initial()
        part.earlier = part.initial_previous()
        part.corrector = part.nudging()  # a method that runs on one rank refuses here
    except Exception as err:  # every rank stops: told by the flag below
        failure = err
    action = None
    if part.rank == 0 and failure is None:
        try:
            lock.acquire()
            action = _prepare(part)
        except Exception as err:
            failure = err
    if exchange.any(failure is not None):
        lock.release()
        if failure is not None:
            raise failure
        raise RolloutError("another rank could not start the rollout (its error is on its stderr)")
    # what rank 0 found under the lock (another run may have made or moved the output since
    # the plan was made): every rank follows it
    plan = part.plan = dataclasses.replace(plan, action=exchange.gather(action)[0])
    try:
        stats = _run(part, initial, device, scores)
        every = exchange.gather(stats)  # a few numbers per rank
        if part.rank == 0:
            _finish(part, every)
    except BaseException as err:
        if part.rank == 0:
            _discard_unfinished(part, err)
        raise
    finally:
        if part.rank == 0:
            out.consolidate(plan.output)
        lock.release()
    return stats


def _prepare(part: Part) -> str:
    """Rank 0 under the lock: the store every rank will write its part of (in the staging
    directory), or the check that an output to resume fits the ranks' blocks. Returns what
    the run does to the output (create, replace or resume), decided under the lock."""
    plan, o = part.plan, part.plan.config.output
    action = out.check_existing(plan.output, o.resume, o.overwrite)  # again, under the lock
    writer = part.writer(whole=True)
    if action == "resume":
        out.check_resume_settings(plan.output, plan.attrs, plan.resume_keys)
        regions = [b.region(part.layout.tile) for b in part.blocks]
        if part.world > 1 and not writer.chunked_for(regions):
            raise RolloutError(
                f"cannot resume {plan.output} on {part.world} ranks: its chunks do not fit "
                "their blocks (a chunk holds pixels of two ranks); resume it on one rank, or "
                "on a number of ranks whose blocks are whole chunks of it"
            )
        return action
    out.discard_staging(plan.output)  # a killed run's leftovers
    writer.path = out.staging_path(plan.output)
    try:
        writer.create()
        writer.close()
    except BaseException:  # no rank has written it yet: nothing of it is kept
        writer.close_quietly()
        out.discard_staging(plan.output)
        raise
    return action


def _finish(part: Part, every: list[dict]) -> None:
    """Rank 0 once every rank is done: the ranks' record (one rank's too), and a replaced
    output swapped for the new one (the old one stayed until now)."""
    output = part.plan.output
    written = out.staging_path(output) if part.plan.action == "replace" else output
    _record_exchange(written, every)
    if part.plan.action == "replace":
        publish(written, output)


def _discard_unfinished(part: Part, err: BaseException) -> None:
    """After a failure, once no rank can be writing it (one rank, or every rank stopped at
    the same guard trip): the staging store of a replacement, or of an output never
    published, is removed (a killed run's are removed by the next run)."""
    settled = part.world == 1 or isinstance(err, StoppedByGuard)
    if settled and (part.plan.action == "replace" or not part.plan.output.exists()):
        out.discard_staging(part.plan.output)


def _run(part: Part, initial, device: str, scores) -> dict:
    """Every rank: step its part to the end, writing it; each step committed once every
    rank's part is on disk. Returns this rank's numbers."""
    plan, rank, exchange = part.plan, part.rank, part.exchange
    resume = plan.action == "resume"
    target = plan.output if resume else out.staging_path(plan.output)
    writer = part.writer(target)
    k0, x = (
        _resumed(part, writer, scores) if resume else _write_initial(part, writer, initial, scores)
    )
    stepper = part.stepper(device)
    step = build_step(plan, stepper, part.corrector, part.region, exchange)
    guard = build_guard(plan, part.region, exchange)
    steps, times = plan.config.output.steps, plan.out_times
    emit = _Emit(part, writer, scores, k0)
    exchange.reset()
    t_wall = time.perf_counter()
    try:
        state = State.one(x, times[k0], part.previous(writer, k0))
        advance(step, guard, state, times, range(k0, steps), emit)
        part.commit_previous(writer, steps)
    except GuardStop as stop:  # every rank saw the same trip (the guard reduces first)
        part.commit_previous(writer, stop.trip.step - 1)
        if rank == 0:
            writer.note_stop(stop.trip.record())
        raise StoppedByGuard(stop.trip.message(plan.output)) from None
    finally:
        writer.close_quietly()
        emit.close()
    return _numbers(part, stepper, steps - k0, time.perf_counter() - t_wall, emit.writing)


class _Emit:
    """What each step's fields go to: this part's writer (the step before committed once
    every rank's is on disk), ``scores`` (rank 0's, the globe) and rank 0's progress bar."""

    def __init__(self, part: Part, writer: RolloutWriter, scores, k0: int):
        self.part, self.writer, self.scores, self.k0 = part, writer, scores, k0
        self.bar = _bar(part.plan.config, k0) if part.rank == 0 else None
        self.writing, self.t0 = 0.0, time.perf_counter()

    def __call__(self, k: int, y: torch.Tensor) -> None:
        start, times = time.perf_counter(), self.part.plan.out_times
        self.part.commit_previous(self.writer, k - 1)  # step k - 1: every rank's is on disk
        self.writer.append(times[k], y.numpy())  # written while the next step runs
        self.writing += time.perf_counter() - start
        self.part.score(self.scores, k, times[k], y.numpy())
        if self.bar is not None:
            self.bar.update(1)
            hours = (k - self.k0) * seconds(self.part.plan.dt) / 3600.0
            rate = hours / (time.perf_counter() - self.t0)
            self.bar.set_postfix(sim_h_per_wall_s=f"{rate:.1f}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _write_initial(part: Part, writer: RolloutWriter, initial, scores) -> tuple[int, torch.Tensor]:
    """Every rank writes its part of the initial step into the staging store; once all are on
    disk rank 0 commits it and, for a new output, publishes the store (a killed run leaves an
    output that resumes); the ranks then write the published store."""
    plan = part.plan
    writer.append(plan.out_times[0], initial)
    part.commit_previous(writer, 0)
    if plan.action == "create":
        if part.rank == 0:
            publish(writer.path, plan.output)
        part.exchange.barrier()
        writer.close()
        writer.path = plan.output
    part.score(scores, 0, plan.out_times[0], initial)
    return 0, torch.as_tensor(initial[: len(plan.prog)])


def _resumed(part: Part, writer: RolloutWriter, scores) -> tuple[int, torch.Tensor]:
    """The step to continue from and this part's prognostic state there; rank 0's
    ``scores`` fed the steps already written (read back from the output)."""
    plan = part.plan
    done, last_time, fields = writer.recover()
    k0 = int(np.flatnonzero(plan.out_times == last_time)[0])
    if part.rank == 0:
        writer.note_resume(done, plan.attrs["command"])
    if part.scored:  # the steps written before the interruption, read back one at a time by
        # rank 0 with the ranks kept in step (no collective waits long)
        feed = scores is not None and part.rank == 0
        written = written_steps(plan, range(k0 + 1)) if feed else None
        for k in range(k0 + 1):
            if written is not None:
                scores.record(k, plan.out_times[k], next(written)[1])
            part.exchange.barrier()
    state = fields[: len(plan.prog)]
    if part.region is not None:
        state = state[(slice(None), *part.region)].copy()
    return k0, torch.as_tensor(state)


def written_steps(plan: RolloutPlan, steps: range):
    """``(k, fields)`` of the ``steps`` already in the output, one step in memory at a time
    (the output opened once)."""
    import xarray as xr

    from screamcast.data.calendar import DECODER
    from screamcast.data.channels import each_step

    written = xr.open_zarr(plan.output, consolidated=False, decode_times=DECODER, chunks=None)
    yield from each_step(written, plan.prog + plan.diag, steps)


def _numbers(part: Part, stepper, steps_run: int, wall: float, writing: float) -> dict:
    """This rank's numbers: the exchanges' bytes, its time per part of the step, its memory."""
    spent = stepper.seconds  # its time in forwards, halo waits and reassembly
    hours = steps_run * seconds(part.plan.dt) / 3600.0
    return {
        "sent_bytes": part.exchange.sent_bytes,
        "steps_run": steps_run,
        "wall_s": wall,
        "sim_h_per_wall_s": hours / wall if wall > 0 else float("nan"),
        "forward_s": spent.get("forward", 0.0),
        "halo_wait_s": spent.get("halo_wait", 0.0),
        "reassembly_s": spent.get("reassembly", 0.0),
        "write_s": writing,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KB on Linux
    }


def _record_exchange(path, every: list[dict]) -> None:
    """The output's ``ranks``, and per rank the bytes sent per step, the peak memory and the
    step's seconds (this run's part)."""
    import zarr

    steps = max(s["steps_run"] for s in every) or 1
    per_step = lambda key: [round(s[key] / steps, 5) for s in every]  # noqa: E731
    zarr.open_group(path, mode="r+").attrs.update(
        {
            "ranks": len(every),
            "exchange_bytes_per_step": [round(s["sent_bytes"] / steps) for s in every],
            "peak_rss_mb_per_rank": [round(s["peak_rss_mb"], 1) for s in every],
            # seconds per step: the whole step (writing included), the network's forwards, the
            # wait for the halo exchange (what the forwards did not hide), the reassembly (with
            # its exchanges) and the writing (with the barrier that commits the last step)
            "step_s_per_rank": per_step("wall_s"),
            "forward_s_per_rank": per_step("forward_s"),
            "halo_wait_s_per_rank": per_step("halo_wait_s"),
            "reassembly_s_per_rank": per_step("reassembly_s"),
            "write_s_per_rank": per_step("write_s"),
        }
    )


def _bar(config, k0: int):
    if not config.output.progress:
        return None
    from tqdm import tqdm

    total = config.output.steps
    return tqdm(total=total, initial=k0, desc="rollout", unit="step", dynamic_ncols=True)
