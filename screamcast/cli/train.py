# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Train one stage: ``screamcast-train experiment=<stage> run_dir=<dir> [init_from=...]``
(also ``python scripts/train.py ...``).

A run dir that already holds checkpoints is resumed; ``init_from`` loads weights only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from screamcast.cli.guard import guarded
from screamcast.cli.hydra_config import CONFIGS

# set by main() before Hydra runs: the run_dir given, and whether it existed then (a refused
# start removes only a folder this command made)
_RUN_DIR: dict = {}


def _run(cfg) -> None:
    from screamcast.config.train_checks import TrainConfigError, check_settings

    try:  # the settings that need no store, before torch is imported
        check_settings(cfg)
    except TrainConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        _remove_unstarted(Path(cfg.run_dir))
        sys.exit(2)
    from screamcast.checkpoint_io import CheckpointError
    from screamcast.data.remote import StoreError
    from screamcast.file_lock import LockedError
    from screamcast.train.loop import train
    from screamcast.train.run_dir import TrainingStopped

    try:
        train(cfg)
    except TrainingStopped as stop:  # saved and resumable; the loop said how to resume
        sys.exit(128 + stop.signum)
    except (ValueError, LockedError, CheckpointError) as err:  # bad input: no traceback
        message = str(err)
        if isinstance(err, StoreError) and err.option:  # the training config's key for it
            message = f"{err.bare} (data.{err.option}=true)"
        print(f"error: {message}", file=sys.stderr)
        if not isinstance(err, LockedError):  # a locked run_dir is another run's
            _remove_unstarted(Path(cfg.run_dir))
        sys.exit(2)
    except KeyboardInterrupt:  # a second Ctrl-C: the first saves at the step's end
        print(
            f"interrupted: {cfg.run_dir}/latest.pth holds the last step saved; the same "
            "command resumes from it",
            file=sys.stderr,
        )
        sys.exit(130)
    finally:
        _leave_group()


def _remove_unstarted(run_dir: Path) -> None:
    from screamcast.train.run_dir import remove_unstarted

    if _RUN_DIR.get("existed") is False and run_dir == _RUN_DIR.get("path"):
        remove_unstarted(run_dir)


def _leave_group() -> None:
    """Destroy the ranks' process group (DDP under torchrun) before the interpreter exits:
    left to teardown, gloo's threads can abort a rank that finished ("terminate called
    without an active exception")."""
    if "torch.distributed" not in sys.modules:
        return
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


HELP = """screamcast-train (python scripts/train.py): train one stage, docs/training.md.

Usage: screamcast-train experiment=<stage> run_dir=<dir> [init_from=<checkpoint>] [key=value ...]
       screamcast-train data=store data.url=<your ingested store> experiment=<stage> run_dir=<dir>

Config groups (group=option, from configs/):
{groups}

The whole composed config: screamcast-train <overrides> --cfg job (Hydra's)."""


def _help() -> str:
    """The usage and each group's options, read from configs/ (no Hydra: a first word)."""
    from screamcast.config.train_checks import GROUPS

    lines = []
    for group in GROUPS:
        options = sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))
        lines.append(f"  {group}: {', '.join(options)}")
    return HELP.format(groups="\n".join(lines))


def _checked(argv: list[str]) -> None:
    """A misspelt key or group option is answered now (exit 2, the valid keys), before Hydra
    and torch are imported; remembers the run_dir given."""
    from screamcast.config.train_checks import TrainConfigError, check_overrides

    if {"-h", "--help"} & set(argv):
        print(_help())
        sys.exit(0)
    overrides = [a for a in argv if not a.startswith("-")]
    try:
        check_overrides(overrides, CONFIGS)
    except TrainConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    given = [a.split("=", 1)[1] for a in overrides if a.lstrip("+").startswith("run_dir=")]
    if given:
        path = Path(given[-1])
        _RUN_DIR.update(path=path, existed=path.exists())


@guarded
def main() -> None:
    _checked(sys.argv[1:])
    import hydra

    from screamcast.config import register

    register()
    hydra.main(version_base="1.3", config_path=str(CONFIGS), config_name="train")(_run)()


if __name__ == "__main__":
    main()
