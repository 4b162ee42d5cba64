# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A training run's directory: claimed by one run at a time, its config recorded once the
run is set up (a refused config never replaces the one its checkpoints were made with)."""

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

    if not run_dir.is_dir() or not {p.name for p in run_dir.iterdir()} <= _START_LEFTOVERS:
        return False
    shutil.rmtree(run_dir, ignore_errors=True)
    return True
