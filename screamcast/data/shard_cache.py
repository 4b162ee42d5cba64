# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A bounded local cache of whole shards, for training several epochs over an S3 store.

Region reads of a stacked store fetch whole shards (:mod:`screamcast.data.stacked`); from the
second epoch on, the same shards come again. ``ShardCache`` wraps the store: a whole-object
read is kept on local disk (written to a temporary name and renamed, so DataLoader workers and
ranks on one node can share the directory), a read of part of a cached object is cut from it,
and the least recently used files are deleted once the directory holds more than
``max_bytes``. Only complete stores are cached (``open_store`` refuses one being written), so a
cached object is never stale. Metadata is not cached: it is small and read once per process.
"""

from __future__ import annotations

import hashlib
import os
import threading
from functools import partial
from pathlib import Path

from zarr.abc.store import RangeByteRequest, SuffixByteRequest
from zarr.storage import WrapperStore

from screamcast.data.read_counter import METADATA


class ShardCache(WrapperStore):
    """A zarr store that keeps the whole objects it reads under ``directory`` (LRU, bounded)."""

    def __init__(self, store, directory: str | Path, max_bytes: int, lock=None):
        super().__init__(store)
        self.directory, self.max_bytes = Path(directory), int(max_bytes)
        if self.max_bytes <= 0:
            raise ValueError(
                f"ShardCache({directory}): max_bytes must be positive, got {max_bytes}"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = lock or threading.Lock()

    def _with_store(self, store):
        return type(self)(store, self.directory, self.max_bytes, self._lock)

    def _path(self, key: str) -> Path:
        return self.directory / hashlib.sha1(f"{self._store}/{key}".encode()).hexdigest()

    async def get(self, key, prototype, byte_range=None):
        if key.rsplit("/", 1)[-1] in METADATA:
            return await self._store.get(key, prototype, byte_range)
        path = self._path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # recently used
        except FileNotFoundError:
            data = None
        if data is not None:
            return prototype.buffer.from_bytes(_cut(data, byte_range))
        value = await self._store.get(key, prototype, byte_range)
        if value is not None and byte_range is None:  # a whole object (a shard): keep it
            self._keep(path, value.to_bytes())
        return value

    def _keep(self, path: Path, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # readers see the whole file or none
        with self._lock:
            self._evict()

    def _evict(self) -> None:
        """Delete the least recently used files until the directory fits ``max_bytes``."""
        files = []
        for f in self.directory.iterdir():
            try:
                st = f.stat()
            except FileNotFoundError:  # another process evicted it
                continue
            if not f.name.endswith(".tmp"):
                files.append((st.st_mtime, st.st_size, f))
        total = sum(size for _, size, _ in files)
        for _, size, f in sorted(files, key=lambda x: x[0]):
            if total <= self.max_bytes:
                break
            f.unlink(missing_ok=True)
            total -= size

    def size(self) -> int:
        """Bytes in the cache directory now."""
        return sum(f.stat().st_size for f in self.directory.iterdir() if f.suffix != ".tmp")


def cache_wrapper(data):
    """The store wrapper a data config's ``cache_dir`` asks for (a bounded :class:`ShardCache`,
    ``cache_gb`` GiB), or None."""
    if not getattr(data, "cache_dir", ""):
        return None
    return partial(ShardCache, directory=data.cache_dir, max_bytes=int(data.cache_gb * 2**30))


def _cut(data: bytes, byte_range) -> bytes:
    if byte_range is None:
        return data
    if isinstance(byte_range, RangeByteRequest):
        return data[byte_range.start : byte_range.end]
    if isinstance(byte_range, SuffixByteRequest):
        return data[-byte_range.suffix :]
    return data[byte_range.offset :]  # OffsetByteRequest
