# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Train one stage: ``screamcast-train experiment=<stage> run_dir=<dir> [init_from=...]``
(also ``python scripts/train.py ...``).

A run dir that already holds checkpoints is resumed; ``init_from`` loads weights only.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from screamcast.checkpoint_io import CheckpointError
from screamcast.cli.guard import guarded
from screamcast.cli.hydra_config import CONFIGS
from screamcast.config import register
from screamcast.data.remote import StoreError
from screamcast.file_lock import LockedError
from screamcast.train.loop import train


def _run(cfg: DictConfig) -> None:
    try:
        train(cfg)
    except (ValueError, LockedError, CheckpointError) as err:  # bad input: no traceback
        message = str(err)
        if isinstance(err, StoreError) and err.option:  # the training config's key for it
            message = f"{err.bare} (data.{err.option}=true)"
        print(f"error: {message}", file=sys.stderr)
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


def _leave_group() -> None:
    """Destroy the ranks' process group (DDP under torchrun) before the interpreter exits:
    left to teardown, gloo's threads can abort a rank that finished ("terminate called
    without an active exception")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


@guarded
def main() -> None:
    register()
    hydra.main(version_base="1.3", config_path=str(CONFIGS), config_name="train")(_run)()


if __name__ == "__main__":
    main()
