# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where a rollout may write, and how it replaces or resumes an output without losing data.

Rules (docs/rollout.md, "The output"):

- the output is a local path that is not, does not contain and does not lie inside any input
  (initial condition, reference, checkpoint);
- an existing path is only ever deleted or resumed if it is a rollout output (its ``title``
  attr), and only when asked (``overwrite`` / ``resume``);
- a new output is built in a staging directory beside it and appears under its name only
  once its first step is on disk, so a run killed while creating it leaves nothing to clean up;
- a replacement is written whole in the staging directory and swapped in at the end: a run
  that fails or is killed leaves the old output untouched;
- a resumed output must have been made with the same settings (the plan's resume keys).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

from screamcast.config.strict import ConfigError

TITLE = "screamcast nudged rollout"


class OutputError(ConfigError):
    """The output location or its current content does not allow the requested run."""


log = logging.getLogger(__name__)


def _is_remote(url: str) -> bool:
    return "://" in str(url)


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_location(output: str, inputs: dict[str, str | None]) -> Path:
    """The output as a resolved local path; refuses a remote URL, an unwritable parent and any
    overlap with ``inputs`` (``{role: path}``; remote or None inputs cannot overlap)."""
    if _is_remote(output):
        raise OutputError(
            f"output {output}: only local outputs are supported (write locally, then copy the "
            "store, e.g. with `aws s3 sync`); the rollout locks, stages and renames its output, "
            "which object stores cannot do"
        )
    path = Path(output).expanduser().resolve()
    for role, source in inputs.items():
        if source is None or _is_remote(source):
            continue
        src = Path(source).expanduser().resolve()
        if _within(path, src) or _within(src, path):
            how = "is" if path == src else ("lies inside" if _within(path, src) else "contains")
            raise OutputError(f"output {output} {how} the {role} {source}: choose another output")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"output {output}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"output {output}: directory {parent} is not writable")
    return path


def _metadata(path: Path, v2_file: str) -> dict | None:
    """The zarr metadata document at ``path``: v3 ``zarr.json``, else the v2 ``v2_file``."""
    for meta in ("zarr.json", v2_file):
        try:
            return json.loads((path / meta).read_text())
        except (OSError, ValueError):
            continue
    return None


def read_attrs(path: Path) -> dict | None:
    """The group attrs of the zarr store at ``path`` (v3 or v2), None when it is not one."""
    doc = _metadata(path, ".zattrs")
    if doc is None:
        return None
    return doc.get("attributes", {}) if "zarr_format" in doc else doc


def _array_shape(path: Path) -> tuple[int, ...] | None:
    """The shape of the zarr array at ``path`` (v3 ``zarr.json`` or v2 ``.zarray``)."""
    doc = _metadata(path, ".zarray")
    return tuple(doc["shape"]) if doc is not None and "shape" in doc else None


def is_rollout_output(path: Path) -> bool:
    attrs = read_attrs(path)
    return attrs is not None and attrs.get("title") == TITLE


def check_room(path: Path, steps: int, bytes_per_step: int, action: str) -> None:
    """Refuse a run whose output cannot fit the free space of its disk before anything is
    built (a mistyped ``steps`` of 10**8 would otherwise plan for hours and fill the disk);
    a resumed output needs room for its missing steps only."""
    done = int((read_attrs(path) or {}).get("complete_steps", 0)) if action == "resume" else 0
    need = max(steps + 1 - done, 0) * bytes_per_step
    free = shutil.disk_usage(path.parent).free
    if need > free:
        raise OutputError(
            f"output {path}: {{output.steps}}={steps} needs {_size(need)} "
            f"({_size(bytes_per_step)} a step) and its disk has {_size(free)} free: ask for "
            "fewer steps or write where there is room",
            "output.steps",
        )


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_existing(path: Path, resume: bool, overwrite: bool) -> str:
    """What to do with the output path: ``create``, ``resume`` or ``replace``."""
    if resume and overwrite:
        raise OutputError(
            "{output.resume} and {output.overwrite} exclude each other: choose one",
            "output.resume",
            "output.overwrite",
        )
    if not path.exists() and not path.is_symlink():
        if resume:
            raise OutputError(f"cannot resume: output {path} does not exist")
        return "create"
    if not is_rollout_output(path):
        raise OutputError(
            f"output {path} exists and is not a screamcast rollout output (no "
            f"title='{TITLE}' attr): it is never replaced or resumed; choose another output"
        )
    if resume:
        return "resume"
    if overwrite:
        return "replace"
    raise OutputError(
        f"output {path} already exists: set {{output.resume}} to continue it or "
        "{output.overwrite} to replace it (the old output is kept until the new one is "
        "complete)",
        "output.resume",
        "output.overwrite",
    )


def check_resume_settings(path: Path, attrs: dict, keys: tuple[str, ...]) -> None:
    """Refuse to resume ``path`` with settings that differ from the ones that made it: the
    attrs ``keys`` (the plan's one list of them) must match."""
    have = read_attrs(path) or {}
    if int(have.get("complete_steps", 0)) < 1:
        raise OutputError(f"cannot resume {path}: it holds no complete step")
    shape = _array_shape(path / "time")
    if "steps" not in have and shape:  # an output made before the attr existed
        have["steps"] = shape[0] - 1
    if "nudge_projection" in have and "nudge_time" not in have:  # nudged before the option
        have["nudge_time"] = "linear"
    diff = [
        f"{k}: output has {have[k]!r}, this run {attrs.get(k)!r}"
        for k in keys
        if k in have and not _same_setting(k, have[k], attrs.get(k))
    ]
    if diff:
        old = str(have.get("nudge_projection", ""))
        if old.startswith("block mean") and "increment" not in old:  # made before the option
            diff.append("an output nudged before {nudging.increment} resumes with it set to block")
        elif "increment bilinear" in old and old != attrs.get("nudge_projection"):
            diff.append(
                "an output nudged before bicubic became the default resumes with "
                "{nudging.increment} bilinear"
            )
        if have.get("nudge_time") == "linear" != attrs.get("nudge_time"):
            diff.append(
                "an output nudged before cubic time interpolation became the default resumes "
                "with {nudging.time} linear"
            )
        raise OutputError(
            f"cannot resume {path} with other settings than the ones that made it ("
            + "; ".join(diff)
            + "): rerun with the same settings, or write a new output",
            "nudging.increment",
            "nudging.time",
        )


PATH_ATTRS = ("initial_condition", "reference")  # stores named by a path: same file, same


def _same_setting(key: str, have, now) -> bool:
    """Equal, or for a local store's path the same directory however it is spelled
    (``./x.zarr``, ``x.zarr/``, an absolute path, through a link)."""
    if have == now:
        return True
    local = all(isinstance(v, str) and "://" not in v for v in (have, now))
    return key in PATH_ATTRS and local and os.path.realpath(have) == os.path.realpath(now)


def staging_path(path: Path) -> Path:
    """The directory beside ``path`` where a new or replacing output is built."""
    return path.with_name(f".{path.name}.screamcast-partial")


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def discard_staging(path: Path) -> None:
    """Remove a staging directory left by a killed run (call with the output's lock held)."""
    staging = staging_path(path)
    if staging.is_dir() and not staging.is_symlink():
        shutil.rmtree(staging)


def consolidate(path: Path) -> None:
    """The output's consolidated metadata (its arrays' shapes and attrs in one document), so
    ``xr.open_zarr`` opens it without a warning; written last, once the run has ended."""
    import warnings

    import zarr

    if Path(path).exists():
        try:
            with warnings.catch_warnings():  # "not part of the Zarr format 3 specification"
                warnings.simplefilter("ignore")
                zarr.consolidate_metadata(str(path))
        except Exception as err:  # never hides the run's own error; readers still open it
            log.warning("%s: its metadata was not consolidated (%s)", path, err)
