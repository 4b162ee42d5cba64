# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How many threads torch uses, so that ranks, data-loader workers and torch's own threads do
not oversubscribe the cores.

The rule: the cores this process may run on (its CPU affinity, which SLURM and containers
set) are shared by the node's ranks; each rank's data-loader workers take one core each and
run torch single-threaded; the rank's torch gets the rest, at least one. ``threads`` (the
config key) overrides it; so does ``OMP_NUM_THREADS`` when set. Measured on this 2-core
machine in the lab book (docs/notes/2026-12-02-scale-out.md).
"""

from __future__ import annotations

import os

import torch


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def torch_threads(workers: int, local_ranks: int = 1, cores: int | None = None) -> int:
    """The rule's torch threads for a rank with ``workers`` data-loader workers."""
    cores = available_cores() if cores is None else cores
    return max(1, cores // max(local_ranks, 1) - workers)


def apply(threads: int | None, workers: int, local_ranks: int = 1) -> int:
    """Set this process's torch threads (``threads``, ``OMP_NUM_THREADS``, or the rule) and
    return the number."""
    if threads is None and os.environ.get("OMP_NUM_THREADS"):
        return torch.get_num_threads()
    n = threads if threads is not None else torch_threads(workers, local_ranks)
    torch.set_num_threads(n)
    return n


def single_threaded_worker(_: int) -> None:
    """``worker_init_fn`` of the data loader: a worker cuts crops on one core."""
    torch.set_num_threads(1)
