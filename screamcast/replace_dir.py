# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Replace a directory by a finished one built beside it, so one complete version always exists.

Rollout outputs and ingested stores are built whole in a staging directory next to their
destination and swapped in at the end: a run that fails or is killed leaves the old version
untouched, and a reader never sees half of either.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from pathlib import Path

_RENAME_EXCHANGE = 2


def fsync_dir(directory: Path) -> None:
    """Make a rename or link in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, f"swapping {a} and {b}: {os.strerror(err)}")


def publish(staging: Path, path: Path) -> None:
    """Put the finished or started ``staging`` output at ``path``, replacing a rollout output.

    With ``renameat2`` the swap is atomic; without it the old output is renamed aside first,
    so at every instant one of the two complete outputs exists under a known name.
    """
    if not path.exists():
        os.rename(staging, path)
    elif _exchange(staging, path):
        shutil.rmtree(staging)  # now the old output
    else:
        aside = path.with_name(f".{path.name}.screamcast-old")
        shutil.rmtree(aside, ignore_errors=True)
        os.rename(path, aside)
        os.rename(staging, path)
        shutil.rmtree(aside)
    fsync_dir(path.parent)
