# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The prepared GPU check's domain-decomposed step: ``world`` ranks (processes on this
machine, one device) each stepping its block with the halo exchange hidden behind its
interior tiles' forwards and waited for first, timed, and checked against one rank's step.

NCCL refuses two ranks on one GPU, so the ranks talk over gloo, whose point-to-point sends
take host tensors only: the exchange sends from the host and hands what it receives back on
the GPU (as it does a nudging increment's host tensors on NCCL), so the step's code path on
CUDA tensors (posted, waited for, the interior run in between) runs, with gloo's costs, not
NCCL's. On CUDA the cross-face adjoint's scatter-add adds with atomics, in no fixed order:
the check reports the largest difference from one rank's step, bit for bit on a CPU. Built
from the package's parts without Hydra or a store, as the rest of the check (a lent GPU's
bare image)."""

from __future__ import annotations

import copy
import datetime
import os
import queue as queues
import socket
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from screamcast.config.inference import StepperSection
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout.exchange import Exchange
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper

T0, T1 = np.datetime64("2020-01-01T00"), np.datetime64("2020-01-01T01")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stepper(pipeline, layout, device, overlap: bool, precision: str, plan=None, exchange=None):
    """The cross-face stepper (every exchange), one tile a batch (bit for bit on any ranks)."""
    static = np.zeros((len(pipeline.static), 6, layout.n, layout.n))
    section = StepperSection(
        halo_adjoint=True,
        halo_adjoint_cross_face=True,
        batch_size=1,
        overlap_exchange=overlap,
        precision=precision,
    )
    block = {"plan": plan, "exchange": exchange} if plan is not None else {}
    return GlobalStepper(pipeline, layout, static, section, str(device), **block)


def _rank(rank: int, world: int, port: int, args: tuple, queue) -> None:
    """One rank: its block's step timed with the exchange hidden and waited for, and its
    output for the check against one rank."""
    pipeline, n, tile, halo, steps, device, precision = args
    os.environ |= {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    torch.set_num_threads(1)
    timeout = datetime.timedelta(minutes=3)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)
    try:
        layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
        plan, exchange = ExchangePlan.build(layout, rank, world), Exchange(rank, world, "cpu")
        region = (slice(None), *plan.block.region(tile))
        x = torch.randn(
            len(pipeline.prognostic), 6, n, n, generator=torch.Generator().manual_seed(0)
        )
        out = {"rank": rank}
        for overlap in (True, False):
            stepper = _stepper(pipeline, layout, device, overlap, precision, plan, exchange)
            y = stepper.step(x[region], T0, T1)  # warm
            dist.barrier()
            start = time.perf_counter()
            for _ in range(steps):
                y = stepper.step(x[region], T0, T1)
            if device.type == "cuda":
                torch.cuda.synchronize()
            key = "hidden" if overlap else "waited"
            out[key] = {"step_s": (time.perf_counter() - start) / steps} | {
                f"{part}_s": s / (steps + 1) for part, s in stepper.seconds.items()
            }
            out[f"{key}_output"] = y.cpu().numpy()  # not a tensor: shared by a file handle
        queue.put(out)
    finally:
        dist.destroy_process_group()


def _collect(procs: list, queue, minutes: float = 10.0) -> list[dict]:
    """Every rank's report, in rank order; a rank that died, or all of them past
    ``minutes``, stops the check (the others terminated) instead of hanging it."""
    got, end = [], time.monotonic() + 60 * minutes
    try:
        while len(got) < len(procs):
            try:
                got.append(queue.get(timeout=5))
            except queues.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if dead or time.monotonic() > end:
                    raise RuntimeError(
                        f"the exchange check's ranks failed (exit codes {dead})"
                    ) from None
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
    return sorted(got, key=lambda r: r["rank"])


def exchange_rates(
    pipeline, device, n: int, tile: int, halo: int, world: int, steps: int, precision="auto"
):
    """``world`` ranks' step with the halo exchange hidden and waited for (the largest rank's
    seconds), and how far each is from one rank's step (0 on a CPU: bit for bit)."""
    layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
    x = torch.randn(len(pipeline.prognostic), 6, n, n, generator=torch.Generator().manual_seed(0))
    ranks_pipeline = copy.deepcopy(pipeline).cpu()  # pickled to each rank (the caller's stays)
    want = _stepper(pipeline, layout, device, True, precision).step(x, T0, T1).cpu()  # one rank
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    args = (ranks_pipeline, n, tile, halo, steps, torch.device(device), precision)
    port = _free_port()
    procs = [ctx.Process(target=_rank, args=(r, world, port, args, queue)) for r in range(world)]
    for p in procs:
        p.start()
    got = _collect(procs, queue)
    plans = ExchangePlan.build_all(layout, world)
    report = {"ranks": world, "n": n, "tile": tile, "halo": halo, "backend": "gloo"}
    for key in ("hidden", "waited"):
        whole = torch.empty_like(want)
        for plan, r in zip(plans, got, strict=True):
            whole[(slice(None), *plan.block.region(tile))] = torch.from_numpy(r[f"{key}_output"])
        slowest = max((r[key] for r in got), key=lambda s: s["step_s"])
        diff = float((whole - want).abs().max())
        report[key] = slowest | {"max_abs_diff_from_one_rank": diff}
    return report
