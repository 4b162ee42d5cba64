# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Train one stage: ``python scripts/train.py experiment=<stage> run_dir=<dir> [init_from=...]``.

A run dir that already holds checkpoints is resumed; ``init_from`` loads weights only.
"""

import sys

import hydra
from omegaconf import DictConfig

from screamcast.checkpoint_io import CheckpointError
from screamcast.config import register
from screamcast.file_lock import LockedError
from screamcast.train.loop import train

register()


@hydra.main(version_base="1.3", config_path="../configs", config_name="train")
def main(cfg: DictConfig) -> None:
    try:
        train(cfg)
    except (ValueError, LockedError, CheckpointError) as err:  # bad input: no traceback
        message = str(err).replace("(assume_grid)", "(data.assume_grid=true)")
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
