# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How many threads the rollout's CPU work takes. torch takes every core by default; on a
machine whose other processes keep cores busy, its threads then wait on each other: on 2
loaded cores 100 Held-Suarez steps took 64 s on 2 threads and 35 s on one (lab book
2026-12-06-rollout-program.md). ``stepper.threads: 0`` (the default) takes the cores the
other processes leave idle when the run starts (measured over a quarter second, while this
process sleeps: not the load average, which still counts a job that ended a minute ago),
shared among the node's ranks."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

import torch

SAMPLE_SECONDS = 0.25


def idle_threads(cores: int, busy: float, ranks: int = 1) -> int:
    """``cores`` less the ``busy`` ones (other processes'), shared among ``ranks`` ranks of
    the node; at least 1."""
    free = min(cores, cores - int(round(busy)))
    return max(1, free // max(ranks, 1))


def cpu_times(stat: str, cores: set[int]) -> dict[str, tuple[int, int]]:
    """``{cpuN: (total, idle)}`` jiffies of ``cores`` from a ``/proc/stat`` text (idle with
    iowait; steal, another guest's time, counts as busy)."""
    out = {}
    for line in stat.splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
            v = [int(x) for x in fields[:8]]
            out[name] = (sum(v), v[3] + v[4])
    return out


def busy_between(before: dict, after: dict) -> float:
    """How many cores were busy between two :func:`cpu_times` readings."""
    busy = 0.0
    for cpu, (total, idle) in after.items():
        dt, di = total - before[cpu][0], idle - before[cpu][1]
        busy += (dt - di) / dt if dt > 0 else 0.0
    return busy


def busy_cores(cores: set[int], stat_path: str = "/proc/stat") -> float:
    """The cores of ``cores`` other processes keep busy now (the load average where there is
    no ``/proc/stat``)."""
    try:
        with open(stat_path) as f:
            before = cpu_times(f.read(), cores)
        time.sleep(SAMPLE_SECONDS)
        with open(stat_path) as f:
            after = cpu_times(f.read(), cores)
    except OSError:
        return os.getloadavg()[0]
    return busy_between(before, after)


def choose_threads(setting: int, environ=os.environ) -> tuple[int, str]:
    """``(threads, why)``: ``setting`` when positive, else ``OMP_NUM_THREADS`` when set (the
    launcher's or the user's choice, torchrun sets 1), else the idle cores."""
    if setting > 0:
        return setting, "stepper.threads"
    if environ.get("OMP_NUM_THREADS", "").strip().isdigit():
        return max(1, int(environ["OMP_NUM_THREADS"])), "OMP_NUM_THREADS"
    cores = os.sched_getaffinity(0)
    ranks = int(environ.get("LOCAL_WORLD_SIZE", "1"))
    return idle_threads(len(cores), busy_cores(cores), ranks), "the idle cores"


@contextmanager
def rollout_threads(setting: int):
    """Inside it, torch runs on :func:`choose_threads`'s count (yielded with why); the
    caller's count comes back after."""
    before = torch.get_num_threads()
    threads, why = choose_threads(setting)
    torch.set_num_threads(threads)
    try:
        yield threads, why
    finally:
        torch.set_num_threads(before)
