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
