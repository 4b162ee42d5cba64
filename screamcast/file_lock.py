# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""An exclusive lock on a path for the length of a run (a rollout output, a run directory).

``fcntl.flock`` on a small lock file: the kernel releases it when the process dies, SIGKILL
included, so a killed run can be resumed at once and no stale lock ever needs clearing by hand.
A second process asking for a held lock is refused immediately, naming the holder's pid.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class LockedError(RuntimeError):
    """Another live process holds the lock."""


class FileLock:
    """``with FileLock(path, what):`` holds ``path`` exclusively; ``what`` names the thing it
    protects in the error. ``remove=True`` unlinks the lock file on release (for a sibling
    lock beside an output, which would otherwise stay behind as clutter)."""

    def __init__(self, path: str | Path, what: str, remove: bool = False):
        self.path, self.what, self.remove = Path(path), what, remove
        self._fd: int | None = None

    def acquire(self) -> FileLock:
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise LockedError(
                    f"{self.what} is in use by another process (pid {holder}, lock {self.path}); "
                    "wait for it to finish or stop it first"
                ) from None
            # The holder before us may have unlinked the file after we opened it: then this
            # lock is on an orphan inode, and a third process could lock a new file. Retry.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        if self.remove:
            self.path.unlink(missing_ok=True)  # before unlocking: see acquire's inode check
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
