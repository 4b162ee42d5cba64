# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A training run's directory: claimed by one run at a time, its config recorded once the
run is set up (a refused config never replaces the one its checkpoints were made with), a
reuse with another config announced as the resume it is."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from screamcast.data.credentials import scrub
from screamcast.file_lock import FileLock


def claim(run_dir: Path) -> FileLock:
    """Rank 0: lock the run directory for this run (two trainings in one directory would
    overwrite each other's checkpoints)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(run_dir / ".lock", f"run directory {run_dir}").acquire()


def record_config(cfg, run_dir: Path) -> None:
    """Rank 0, once the run is set up: the resolved config, storage secrets as ***."""
    resolved = scrub(OmegaConf.to_container(cfg, resolve=True))
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(resolved)))


# keys that change how a run reports or is scheduled on the machine, not what it trains
_NOT_THE_RUN = {"run_dir", "progress", "log_every", "threads", "data.num_workers"}


def _flat(tree, prefix: str = "") -> dict:
    """``{"optim": {"lr": 1e-3}}`` -> ``{"optim.lr": 1e-3}`` (lists are values)."""
    if not isinstance(tree, dict):
        return {prefix: tree}
    out = {}
    for key, value in tree.items():
        out |= _flat(value, f"{prefix}.{key}" if prefix else str(key))
    return out


def _shown(value) -> str:
    """A value as said: in full (a path, a number), a long list cut at 60 characters."""
    text = "unset" if value is None else str(value)
    return text if len(text) <= 60 or not isinstance(value, list) else text[:57] + "..."


def resume_note(cfg, run_dir: Path) -> str | None:
    """Rank 0, before anything is read: when ``run_dir`` already holds checkpoints and the
    config differs from its ``config.yaml`` in keys that change the run, the line that says
    this is a resume and which keys differ (``None`` for a fresh run or the same config)."""
    recorded = run_dir / "config.yaml"
    if not any(run_dir.glob("*.pth")) or not recorded.is_file():
        return None
    was = _flat(OmegaConf.to_container(OmegaConf.load(recorded), resolve=True))
    now = _flat(scrub(OmegaConf.to_container(cfg, resolve=True)))
    differ = [
        f"{k} ({_shown(was.get(k))} -> {_shown(now.get(k))})"
        for k in sorted(was.keys() | now.keys())
        if k not in _NOT_THE_RUN
        and not k.startswith("data.storage_options")
        and _differs(k, was.get(k), now.get(k))
    ]
    if not differ:
        return None
    latest = run_dir / "latest.pth"
    source = latest if latest.exists() else f"{run_dir}'s newest valid steps_*.pth"
    return (
        f"{run_dir} holds checkpoints: this run resumes from {source} (its weights, optimizer "
        f"and step), with a config that differs from {recorded} in {', '.join(differ)}; "
        "for a new run give another run_dir (init_from= to start from its weights)"
    )


def _differs(key: str, was, now) -> bool:
    """Whether a recorded setting differs from the new one. The recorded config holds what
    the run resolved: null settings taken from the store (``data=store``: now still null)
    and variables as their channels (``T_mid[0]`` .. for ``T_mid``), so those are compared
    as they were given."""
    if now is None and was is not None:
        return False  # to be taken from the store again
    if key in ("data.prognostic", "data.diagnostic", "data.static") and was and now:
        bare = [dict.fromkeys(str(v).split("[")[0] for v in x) for x in (was, now)]
        return list(bare[0]) != list(bare[1])
    return was != now


class TrainingStopped(Exception):
    """A signal (Ctrl-C, a job's SIGTERM) stopped the stage early, after ``latest.pth`` was
    saved: resumable, but not finished, so the command exits ``128 + signum``, not 0."""

    def __init__(self, signum: int, run_dir: Path):
        self.signum, self.run_dir = signum, run_dir
        super().__init__(f"stopped by signal {signum}; {run_dir}/latest.pth resumes it")


# what a refused start leaves in a run directory it made (Hydra's record, the run's lock)
_START_LEFTOVERS = {"hydra", ".lock", ".hydra"}


def remove_unstarted(run_dir: Path) -> bool:
    """After a refused start, remove a run directory this command made, when it holds nothing
    but what starting wrote (no checkpoint, no metrics, no config): the user's retry then
    starts clean, and nothing the user had is touched. Returns whether it removed it."""
    import shutil

    from screamcast.file_lock import LockedError

    if not run_dir.is_dir() or not {p.name for p in run_dir.iterdir()} <= _START_LEFTOVERS:
        return False
    lock = FileLock(run_dir / ".lock", f"run directory {run_dir}")
    try:  # another start may hold it (a job submitted twice): then it is theirs, left alone
        lock.acquire()
    except LockedError:
        return False
    try:
        if not {p.name for p in run_dir.iterdir()} <= _START_LEFTOVERS:
            return False  # the other start got further between the two looks
        shutil.rmtree(run_dir, ignore_errors=True)
        return True
    finally:
        lock.release()
