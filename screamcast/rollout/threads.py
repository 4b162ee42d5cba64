# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How many threads the rollout's CPU work takes. torch takes every core by default; on a
machine whose other processes keep cores busy, its threads then wait on each other: on 2
loaded cores 100 Held-Suarez steps took 66 s on 2 threads and 39 s on one (lab book
2026-12-06-climate-round2.md). ``stepper.threads: 0`` (the default) takes the cores left
idle by the other processes when the run starts, shared among the node's ranks."""

from __future__ import annotations

import os


def idle_threads(cores: int, load: float, ranks: int = 1) -> int:
    """``cores`` less those the other processes keep busy (the 1-minute ``load``), shared
    among ``ranks`` ranks of the node; at least 1."""
    free = min(cores, cores - int(round(load)))
    return max(1, free // max(ranks, 1))


def choose_threads(setting: int, environ=os.environ) -> tuple[int, str]:
    """``(threads, why)``: ``setting`` when positive, else ``OMP_NUM_THREADS`` when set (the
    launcher's or the user's choice, torchrun sets 1), else the idle cores."""
    if setting > 0:
        return setting, "stepper.threads"
    if environ.get("OMP_NUM_THREADS", "").strip().isdigit():
        return max(1, int(environ["OMP_NUM_THREADS"])), "OMP_NUM_THREADS"
    cores = len(os.sched_getaffinity(0))
    ranks = int(environ.get("LOCAL_WORLD_SIZE", "1"))
    return idle_threads(cores, os.getloadavg()[0], ranks), "the idle cores"
