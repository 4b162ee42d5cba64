# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where an ingestion's blocks run: in this process, on a ``LocalCluster`` of worker
processes, or on an existing Dask cluster; one task per block, a progress bar in MB/s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from screamcast.ingest.blocks import Plan, process
from screamcast.ingest.errors import IngestError


def run_blocks(plan: Plan, todo: list[tuple[int, int]], progress: bool, client) -> list[dict]:
    """One task per block on the chosen Dask cluster, with a progress bar."""
    from tqdm import tqdm

    bar = tqdm(total=len(todo), unit="block", disable=not progress, desc="ingest")
    start, read, results = time.perf_counter(), 0, []

    def done(result: dict) -> None:
        nonlocal read
        read += result["bytes_read"]
        results.append(result)
        bar.set_postfix(MB_s=f"{read / 1e6 / max(time.perf_counter() - start, 1e-9):.1f}")
        bar.update()

    if client is None:  # in this process, in order
        for a, b in todo:
            done(process(plan, a, b))
    else:
        from distributed import as_completed

        shared = client.scatter(plan, broadcast=True)  # the catalogue once per worker
        futures = [client.submit(process, shared, a, b, pure=False) for a, b in todo]
        for future in as_completed(futures):
            done(future.result())
    bar.close()
    return results


@contextlib.contextmanager
def dask_client(workers: int, scheduler: str):
    """A Dask client (a LocalCluster, or the cluster at ``scheduler``), or None for an
    in-process run (``workers=0``, no scheduler); an unreachable scheduler is an
    :class:`IngestError` before anything is written."""
    if workers == 0 and not scheduler:
        yield None
        return
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client, cluster = Client(scheduler, timeout="20s"), None
        except (OSError, TimeoutError) as err:
            raise IngestError(
                f"--scheduler {scheduler}: no Dask scheduler answers there ({err}); "
                "start it, check the address, or leave --scheduler out for a local cluster"
            ) from None
    else:
        workers = workers or os.cpu_count() or 1
        # the workers' own logs silenced: a block's error comes back through its future
        # (raised here, worded), and a loaded machine's workers otherwise print a heartbeat
        # traceback as the cluster closes after a finished ingestion (dask/distributed#7105)
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
