# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.train.skill experiment=demo run_dir=runs/demo``: one-step skill.

Prints the held-out one-step RMSE of a run's ``best.pth`` next to persistence's, per variable.
Takes the same overrides as ``scripts/train.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hydra import compose, initialize_config_dir

from screamcast.config import register
from screamcast.train.loop import persistence_and_model_rmse

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def main(argv: list[str]) -> None:
    register()
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        cfg = compose("train", overrides=argv)
    best = Path(cfg.run_dir) / "best.pth"
    rmse = persistence_and_model_rmse(cfg, str(best))
    print(f"one-step RMSE on {cfg.data.valid_samples} held-out crops ({best}):")
    print(f"{'variable':<14}{'model':>12}{'persistence':>14}{'ratio':>8}")
    for var, m, p in zip(cfg.data.prognostic, rmse["model"], rmse["persistence"], strict=True):
        print(f"{var:<14}{m:>12.4g}{p:>14.4g}{m / p:>8.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
