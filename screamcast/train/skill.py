# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.train.skill experiment=demo run_dir=runs/demo``: one-step skill.

Prints the held-out one-step RMSE of a run's ``best.pth`` next to persistence's, per variable.
Takes the same overrides as ``scripts/train.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from hydra import compose, initialize_config_dir

from screamcast import checkpoint_format as fmt
from screamcast.config import TrainConfig, register
from screamcast.data.dataset import CropDataset
from screamcast.data.stats import Stats
from screamcast.data.store import dataset_grid, open_configured
from screamcast.grid import TileLayout
from screamcast.model.pipeline import build_pipeline

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def persistence_and_model_rmse(cfg: TrainConfig, checkpoint: str) -> dict[str, np.ndarray]:
    """One-step RMSE over the validation samples: the trained model vs persistence."""
    ckpt = fmt.load_for_inference(checkpoint)
    pipeline = build_pipeline(cfg, Stats.from_dict(ckpt.description.stats))
    pipeline.load_state_dict(ckpt.weights)
    d = cfg.data
    ds = open_configured(d)
    layout = TileLayout(dataset_grid(ds), d.tile, d.halo)
    valid = CropDataset.from_config(d, "valid", layout, ds["time"].values, seed=cfg.seed)
    batch = next(iter(torch.utils.data.DataLoader(valid, batch_size=d.valid_samples)))
    forcing = batch["forcing"][:, 0:2].flatten(1, 2)  # (B, 2 Fc, S, S): t, t+1
    pred = pipeline.predict(batch["state"], forcing, batch["static"])
    C = len(d.prognostic)
    w = batch["area"][:, None]
    truth = batch["target"][:, 0, :C]

    def rmse(x):
        return (((x - truth) ** 2 * w).mean(dim=(0, 2, 3)) / w.mean()).sqrt().numpy()

    return {"model": rmse(pred[:, :C]), "persistence": rmse(batch["state"])}


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
