# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudged global rollout on 1..N ranks: plan (check everything, write nothing), join the
ranks, then the one driver (:mod:`screamcast.rollout.driver`) steps, corrects, bounds and
streams out under an exclusive lock on the output.

How the output is created, replaced and resumed without ever losing a user's data:
:mod:`screamcast.rollout.output`. Scores are not this module's: the caller hands in a
``scoring(plan, inputs)`` that returns an aggregator (``record(step, time, fields)``,
:mod:`screamcast.evaluation`) or None, and gets it back in the summary.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Callable

import torch

from screamcast.config.inference import InferenceConfig
from screamcast.rollout.driver import drive
from screamcast.rollout.exchange import Exchange, LocalExchange
from screamcast.rollout.nudging.default_variables import summary
from screamcast.rollout.plan import RolloutError, RolloutInputs, RolloutPlan, plan_rollout
from screamcast.rollout.rollout_step import check_correctors
from screamcast.rollout.threads import rollout_threads
from screamcast.step.correctors import CorrectorConfigError

__all__ = ["RolloutError", "run_rollout"]

_OWN_GROUP: list[bool] = []  # non-empty while this module's process group is open
Scoring = Callable[[RolloutPlan, RolloutInputs], object]  # -> an aggregator, or None


def run_rollout(
    config: InferenceConfig, scoring: Scoring | None = None, source: str = "the config"
) -> dict:
    """Run (or resume) a rollout; returns ``{"output", "steps", "attrs", "rank", "exchange",
    "scores"}`` (``exchange``: this rank's numbers; ``scores``: the aggregator ``scoring``
    made, fed every step, or None). ``source``: where the config's requirements of the
    checkpoint came from, for messages."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    plan, inputs = plan_rollout(config, source, read_initial=world == 1, world=world)
    try:
        check_correctors(plan)
    except CorrectorConfigError as err:
        inputs.close()
        raise RolloutError(f"{err} (checkpoint {config.checkpoint.path})") from None
    summary = {"output": str(plan.output), "steps": config.output.steps, "attrs": plan.attrs}
    try:
        rank, world, device = _ranks(config.stepper.device, config.stepper.timeout_minutes)
        if rank == 0:
            print(describe(plan.attrs), file=sys.stderr, flush=True)
        # rank 0 scores each step as it runs (on several ranks, the globe gathered to it)
        scores = scoring(plan, inputs) if scoring is not None and rank == 0 else None
        with rollout_threads(config.stepper.threads) as (threads, why):
            summary |= {"threads": threads, "threads_from": why, "rank": rank}
            summary["exchange"] = _drive(plan, inputs, rank, world, device, scores)
    finally:
        inputs.close()
    return summary | {"scores": scores}


def describe(attrs: dict) -> str:
    """The plan in two lines, from what the output records: how it steps and what it nudges
    (the defaults are resolved in the plan, so the user sees what they became)."""
    reassembly = attrs["reassembly"]
    if attrs["halo_adjoint"]:
        reassembly += f" ({attrs['halo_adjoint_window']} window)"
    stepping = f"rollout: tile {attrs['tile']}, {reassembly} reassembly, {attrs['precision']}"
    if not attrs["nudging"]:
        return f"{stepping}; not nudged (no reference)"
    nudged = summary(attrs["nudge_vars"].split(",")) if "nudge_vars" in attrs else "its variables"
    tau = f"tau {attrs['nudge_tau_hours']:g} h, " if "nudge_tau_hours" in attrs else ""
    return (
        f"{stepping}\nnudging: {nudged} toward {attrs['reference']} ({tau}{attrs['nudge_method']})"
    )


def _drive(plan: RolloutPlan, inputs: RolloutInputs, rank: int, world: int, device, scores):
    """The driver on this rank; a rank lost mid-run said as such."""
    if world == 1:
        return drive(plan, inputs, LocalExchange(), device, scores)
    try:
        return drive(plan, inputs, Exchange(rank, world, device), device, scores)
    except RuntimeError as err:  # gloo's and NCCL's words for a lost rank
        lost = _lost_rank(str(err), plan.config.stepper.timeout_minutes)
        if lost is None:
            raise
        raise RolloutError(
            f"rank {rank}: {lost} (its error, if any, is on its stderr); "
            f"{plan.output} keeps its complete steps: rerun with --resume"
        ) from None
    finally:
        _leave_group()


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
