# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Train one stage: ``python scripts/train.py experiment=<stage> run_dir=<dir> [init_from=...]``.

A run dir that already holds checkpoints is resumed; ``init_from`` loads weights only.
"""

import hydra
from omegaconf import DictConfig

from screamcast.config import register
from screamcast.train.loop import train

register()


@hydra.main(version_base="1.3", config_path="../configs", config_name="train")
def main(cfg: DictConfig) -> None:
    train(cfg)


if __name__ == "__main__":
    main()
