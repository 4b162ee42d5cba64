# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Count what a store is asked for: requests and bytes, the quantities S3 cost and speed follow.

Absolute S3 speed cannot be measured on a laptop or a CI machine, but the number of requests
and the bytes fetched per training crop can, on a local store as on S3, and they decide the
data path's rate at scale (S3 serves ~5,500 GET/s per prefix). ``ReadCounter`` wraps any zarr
store; ``CropDataset(store_wrapper=ReadCounter)`` counts a dataset's reads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from zarr.storage import WrapperStore

METADATA = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


@dataclass
class Reads:
    requests: int = 0
    bytes: int = 0
    metadata_requests: int = 0


class ReadCounter(WrapperStore):
    """A zarr store that delegates every call and counts its reads (chunks and metadata apart).

    One counter per wrapper, shared by the copies zarr makes of it (``with_read_only``...).
    """

    def __init__(self, store, reads: Reads | None = None, lock: threading.Lock | None = None):
        super().__init__(store)
        self.reads = reads if reads is not None else Reads()
        self._lock = lock or threading.Lock()

    def _with_store(self, store):
        return type(self)(store, self.reads, self._lock)

    def _count(self, key: str, value) -> None:
        with self._lock:
            if key.rsplit("/", 1)[-1] in METADATA:
                self.reads.metadata_requests += 1
            else:
                self.reads.requests += 1
                self.reads.bytes += len(value) if value is not None else 0

    async def get(self, key, prototype, byte_range=None):
        value = await self._store.get(key, prototype, byte_range)
        self._count(key, value)
        return value

    async def get_partial_values(self, prototype, key_ranges):
        key_ranges = list(key_ranges)
        values = await self._store.get_partial_values(prototype, key_ranges)
        for (key, _), value in zip(key_ranges, values, strict=True):
            self._count(key, value)
        return values

    def reset(self) -> Reads:
        """The counts so far; counting starts again from zero."""
        with self._lock:
            done, self.reads.__dict__ = Reads(**self.reads.__dict__), Reads().__dict__
        return done
