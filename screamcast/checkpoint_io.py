# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Crash-safe checkpoints: no checkpoint file is ever rewritten in place.

Lightning's ``fabric.save`` writes a temp file in the *system* temp dir and ``shutil.move``s it
onto the target. When that temp dir is another filesystem (node-local ``/tmp``, tmpfs), the move
copies *into the existing file*: a hard-linked ``best.pth`` follows every later save, and a kill
during the copy leaves a truncated ``latest.pth``. Here a save is a database-style commit:

1. write ``<path>.tmp`` beside the target and fsync it (writeback starts while writing);
2. verify it (the CRC of every zip record, and a ``weights_only`` load of its structure);
3. if it is the best state, hard-link ``best.pth`` to the verified tmp (through a temp name and
   ``os.replace``), and likewise any ``keep_as`` names (``steps_<N>.pth``);
4. ``os.replace`` the tmp onto the target and fsync the directory.

A kill between any two steps leaves the previous files intact or the new ones complete. Every
collective entry point takes ``fabric`` (or ``None`` for one process): rank 0 does the file work
and broadcasts the outcome, so a failure raises on every rank instead of hanging a barrier.
"""

from __future__ import annotations

import errno
import os
import re
import warnings
import zipfile
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from screamcast.replace_dir import fsync_dir

LATEST, BEST = "latest.pth", "best.pth"
TMP_SUFFIX = ".tmp"
STEPS_RE = re.compile(r"^steps_(\d+)\.pth$")


class CheckpointError(RuntimeError):
    """A checkpoint could not be saved, verified or chosen; the message says what and where."""


class CorruptCheckpointError(CheckpointError):
    """A checkpoint file fails verification (truncated, flipped bits, not a torch zip)."""


# ----------------------------------------------------------------------------- collectives
def _rank(fabric: Any) -> int:
    return 0 if fabric is None else int(fabric.global_rank)


def _world(fabric: Any) -> int:
    return 1 if fabric is None else int(fabric.world_size)


def _on_rank0(fabric: Any, fn, *args, **kwargs):
    """Run ``fn`` on rank 0 only and give every rank its result, or raise its error everywhere."""
    outcome: tuple[str, Any] = ("ok", None)
    if _rank(fabric) == 0:
        try:
            outcome = ("ok", fn(*args, **kwargs))
        except Exception as err:  # broadcast, then raise on every rank
            outcome = ("error", f"{type(err).__name__}: {err}")
            if _world(fabric) == 1:
                raise
    if _world(fabric) > 1:
        outcome = fabric.broadcast(outcome, src=0)
    if outcome[0] == "error":
        raise CheckpointError(f"rank 0 failed: {outcome[1]}")
    return outcome[1]


# ----------------------------------------------------------------------------- verification
def verify_checkpoint(path: str | os.PathLike) -> None:
    """Raise :class:`CorruptCheckpointError` unless ``path`` is an intact torch checkpoint.

    ``torch.load`` does not check the zip CRCs, so a flipped bit loads silently; here every
    record's CRC is checked (a truncated file has no central directory and fails to open), then
    the pickled structure is loaded with ``weights_only=True`` and ``mmap`` (tensor data is not
    copied, so this stays cheap).
    """
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()  # reads every record, checking its CRC-32
        if bad is not None:
            raise CorruptCheckpointError(f"{path}: CRC mismatch in record {bad}")
        torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except CorruptCheckpointError:
        raise
    except FileNotFoundError:
        raise CorruptCheckpointError(f"{path}: file does not exist") from None
    except Exception as err:  # BadZipFile, EOFError, unpickling errors, ...
        raise CorruptCheckpointError(f"{path}: {type(err).__name__}: {err}") from None


def read_verified(path: str | os.PathLike, map_location: Any = "cpu") -> tuple[dict, str]:
    """Read ``path`` once: its sha256, every zip record's CRC, then a ``weights_only`` load
    from the same bytes (for inference, where the file is not touched again)."""
    import hashlib
    import io

    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise CorruptCheckpointError(f"{path}: file does not exist") from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            bad = zf.testzip()
        if bad is not None:
            raise CorruptCheckpointError(f"{path}: CRC mismatch in record {bad}")
        state = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    except CorruptCheckpointError:
        raise
    except Exception as err:  # BadZipFile, EOFError, unpickling errors, ...
        raise CorruptCheckpointError(f"{path}: {type(err).__name__}: {err}") from None
    return state, hashlib.sha256(data).hexdigest()


def load_checkpoint(path: str | os.PathLike, map_location: Any = "cpu") -> dict:
    """Verify, then load with ``weights_only=True`` (no pickled code runs)."""
    verify_checkpoint(path)
    return torch.load(path, map_location=map_location, weights_only=True)


# ----------------------------------------------------------------------------- saving
def _plain_state(obj: Any) -> Any:
    """Modules, optimizers and schedulers become their ``state_dict``; containers recurse."""
    if isinstance(obj, torch.nn.parallel.DistributedDataParallel):
        obj = obj.module
    if hasattr(obj, "state_dict") and callable(obj.state_dict):
        return obj.state_dict()
    if isinstance(obj, Mapping):
        return {k: _plain_state(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_plain_state(v) for v in obj)
    return obj


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def remove_stale_temp_files(run_dir: str | os.PathLike) -> list[Path]:
    """Delete leftover ``*.pth.tmp`` files (from a killed save); returns what was removed.

    A stale tmp may be complete and would pass verification: it must never get the chance to
    replace a newer ``latest.pth``, so it is removed rather than reused.
    """
    removed = []
    for tmp in Path(run_dir).glob(f"*.pth{TMP_SUFFIX}"):
        _unlink_quietly(tmp)
        removed.append(tmp)
    return removed


def _link_atomically(src: Path, dst: Path) -> None:
    """Make ``dst`` a hard link to ``src``, replacing ``dst`` in one step (or not at all)."""
    tmp_link = dst.with_name(dst.name + TMP_SUFFIX)
    _unlink_quietly(tmp_link)
    try:
        os.link(src, tmp_link)
        os.replace(tmp_link, dst)
    except OSError as err:
        _unlink_quietly(tmp_link)
        hint = (
            " (the filesystem refuses hard links)"
            if err.errno in (errno.EPERM, errno.EXDEV)
            else ""
        )
        raise CheckpointError(
            f"cannot link {dst} to the new checkpoint{hint}: {err}; "
            "the previous checkpoints are untouched"
        ) from err


class _SyncingWriter:
    """A file wrapper that starts flushing to disk while ``torch.save`` is still writing.

    Every ``every`` bytes it hands an ``fdatasync`` to a background thread, so serialisation
    and writeback overlap and the final fsync has little left to do (``fabric.save`` skips the
    fsync altogether; this keeps the durability without paying for it serially).
    """

    def __init__(self, f, pool: ThreadPoolExecutor, every: int = 32 << 20):
        self.f, self.pool, self.every = f, pool, every
        self.unsynced = 0
        self.futures: list[Future] = []

    def write(self, data) -> int:
        n = self.f.write(data)
        self.unsynced += n
        if self.unsynced >= self.every and all(fut.done() for fut in self.futures):
            self.sync_in_background(os.fdatasync)
        return n

    def flush(self) -> None:
        self.f.flush()

    def sync_in_background(self, sync) -> None:
        self.f.flush()
        self.futures.append(self.pool.submit(sync, self.f.fileno()))
        self.unsynced = 0

    def wait(self) -> None:
        """Raise the first error of a background sync (EIO, ENOSPC at writeback, ...)."""
        for fut in self.futures:
            fut.result()


def _space_hint(directory: Path) -> str:
    """Free space and the process's file-size limit: the usual reasons a write fails."""
    import resource

    parts = []
    try:
        st = os.statvfs(directory)
        parts.append(f"free space there: {st.f_bavail * st.f_frsize / 1e6:.1f} MB")
    except OSError:
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY:
        parts.append(f"file size limit (ulimit -f): {soft / 1e6:.1f} MB")
    return f" ({'; '.join(parts)})" if parts else ""


def _save_rank0(path: Path, state: Any, best: bool, keep_as: tuple[str, ...]) -> Path:
    directory = path.parent
    tmp = path.with_name(path.name + TMP_SUFFIX)
    untouched = "the previous checkpoints are untouched"
    try:
        if not directory.is_dir():
            raise CheckpointError(f"cannot save {path}: directory {directory} does not exist")
        remove_stale_temp_files(directory)
        try:
            with open(tmp, "wb") as f, ThreadPoolExecutor(1) as pool:
                writer = _SyncingWriter(f, pool)
                torch.save(state, writer)
                f.flush()
                writer.sync_in_background(os.fsync)
                verify_checkpoint(tmp)  # reads the page cache while the disk catches up
                writer.wait()
        except CheckpointError:
            raise
        except OSError as err:
            raise CheckpointError(
                f"cannot save {path}: {err.strerror or err} (errno {err.errno}); {untouched}"
            ) from err
        except Exception as err:  # torch's writer reports a failed write as RuntimeError
            raise CheckpointError(
                f"cannot save {path}: writing {tmp.name} failed{_space_hint(directory)}: "
                f"{err}; {untouched}"
            ) from err
        if best:
            _link_atomically(tmp, directory / BEST)
        for name in keep_as:
            _link_atomically(tmp, directory / name)
        os.replace(tmp, path)
        fsync_dir(directory)
    except BaseException as err:
        _unlink_quietly(tmp)
        if isinstance(err, OSError):
            raise CheckpointError(f"cannot save {path}: {err}; {untouched}") from err
        raise
    return path


def save_checkpoint_atomic(
    fabric: Any,
    path: str | os.PathLike,
    state: Mapping[str, Any],
    best: bool | None = None,
    keep_as: Iterable[str] = (),
) -> Path:
    """Save ``state`` to ``path`` crash-safely (see the module docstring). Collective.

    ``best=True`` also points ``best.pth`` (same directory) at this state; ``keep_as`` names
    more files in that directory to link to it (e.g. ``steps_000100.pth``): links share the
    bytes, so keeping a step costs no second write. Modules, optimizers and schedulers in
    ``state`` are stored as their ``state_dict``. Raises :class:`CheckpointError` on every rank
    if rank 0 fails; the previous files are then untouched and no tmp is left.
    """
    plain = _plain_state(dict(state))
    return _on_rank0(fabric, _save_rank0, Path(path), plain, bool(best), tuple(keep_as))


# ----------------------------------------------------------------------------- resuming
def _steps_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    found = [(int(m.group(1)), p) for p in run_dir.iterdir() if (m := STEPS_RE.match(p.name))]
    return sorted(found, reverse=True)


def _choose_rank0(run_dir: Path) -> Path | None:
    if not run_dir.is_dir():
        return None
    remove_stale_temp_files(run_dir)
    latest, steps = run_dir / LATEST, _steps_checkpoints(run_dir)
    if not latest.exists() and not steps:
        return None
    tried = []
    if latest.exists():
        try:
            verify_checkpoint(latest)
            return latest
        except CorruptCheckpointError as err:
            tried.append(str(err))
            warnings.warn(
                f"!!! {latest} is corrupt ({err}); falling back to the newest valid "
                "steps_*.pth. Training resumes from an older state.",
                stacklevel=3,
            )
    else:
        warnings.warn(
            f"{latest} is missing next to {len(steps)} steps_*.pth file(s); resuming from the "
            "newest valid one.",
            stacklevel=3,
        )
    for _, candidate in steps:
        try:
            verify_checkpoint(candidate)
            return candidate
        except CorruptCheckpointError as err:
            tried.append(str(err))
    raise CheckpointError(
        f"no usable checkpoint to resume from in {run_dir}; tried:\n  " + "\n  ".join(tried)
    )


def choose_resume_checkpoint(run_dir: str | os.PathLike, fabric: Any = None) -> Path | None:
    """The checkpoint a job should resume from, or ``None`` for a fresh run. Collective.

    ``latest.pth`` if it verifies; else (loud warning) the newest valid ``steps_*.pth``; with
    neither usable, :class:`CheckpointError` naming every file tried. Removes stale tmp files.
    """
    return _on_rank0(fabric, _choose_rank0, Path(run_dir))


def apply_best_valid_loss_floor(state: dict, run_dir: str | os.PathLike) -> float:
    """Keep the lower ``best_valid_loss`` of ``state`` and of ``best.pth`` (if intact).

    After a fallback to an older ``steps_*.pth``, the resumed state remembers a worse best loss
    than ``best.pth`` holds; without this floor the next validation would replace the real best.
    """
    current = float(state.get("best_valid_loss", float("inf")))
    best_path = Path(run_dir) / BEST
    if best_path.exists():
        try:
            best_loss = float(load_checkpoint(best_path).get("best_valid_loss", float("inf")))
            current = min(current, best_loss)
        except CorruptCheckpointError as err:
            warnings.warn(f"ignoring {best_path} for the best-loss floor: {err}", stacklevel=2)
    state["best_valid_loss"] = current
    return current
