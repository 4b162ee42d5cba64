# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One-step skill of a run's best checkpoint on held-out crops (``screamcast-skill``).

The held-out one-step RMSE of a run's ``best.pth`` next to persistence's, per variable,
over whole crops and over their inner part, ``data.halo`` in from every side: the rollout keeps
(crop reassembly) or weights most (cosine window) exactly that part of each tile's prediction,
and the outer ring, three quarters of a ``tile + 2 * halo`` crop, lacks context on one side.
"""

from __future__ import annotations

import numpy as np
import torch

from screamcast import checkpoint_format as fmt
from screamcast.config import TrainConfig
from screamcast.data.dataset import CropDataset
from screamcast.data.stats import Stats
from screamcast.data.store import dataset_grid, open_configured
from screamcast.data.store_defaults import fill_from_store
from screamcast.grid import TileLayout
from screamcast.model.pipeline import pipeline_of


def inner_margin(data) -> int:
    """How far in from a crop's edges its inner part starts: ``halo`` (0 if nothing is left)."""
    return data.halo if data.crop > 2 * data.halo else 0


def persistence_and_model_rmse(cfg: TrainConfig, checkpoint: str) -> dict[str, np.ndarray]:
    """One-step RMSE over the validation samples: the trained model vs persistence, over whole
    crops (``model``, ``persistence``) and ``data.halo`` in from their edges (``*_inner``)."""
    ckpt = fmt.load_for_inference(checkpoint)
    d = cfg.data
    fill_from_store(d, cfg.rollout_steps, cfg.model.levels)  # data=store: the store's
    ds = open_configured(d)  # the configured names become the store's channels (T -> T[0], ..)
    # the network as the checkpoint describes it (its channels, inputs and architecture)
    pipeline = pipeline_of(ckpt.description, Stats.from_dict(ckpt.description.stats))
    pipeline.load_state_dict(ckpt.weights)
    if list(d.prognostic) != list(pipeline.prognostic):
        raise ValueError(
            f"checkpoint {checkpoint} predicts {pipeline.prognostic}, but the config's data "
            f"gives {list(d.prognostic)}: pass the overrides the run was trained with"
        )
    layout = TileLayout(dataset_grid(ds), d.tile, d.halo)
    valid = CropDataset.from_config(d, "valid", layout, ds["time"].values, seed=cfg.seed)
    batch = next(iter(torch.utils.data.DataLoader(valid, batch_size=d.valid_samples)))
    forcing = batch.forcing[:, 0:2].flatten(1, 2)  # (B, 2 Fc, S, S): t, t+1
    pred = pipeline.predict(batch.state, forcing, batch.static)
    C = len(d.prognostic)
    w = batch.area[:, None]
    truth = batch.target[:, 0, :C]

    h = inner_margin(d)
    inner = torch.zeros_like(w)  # (B, 1, S, S)
    inner[..., h : d.crop - h, h : d.crop - h] = 1.0

    def rmse(x, weight=w):
        return (((x - truth) ** 2 * weight).mean(dim=(0, 2, 3)) / weight.mean()).sqrt().numpy()

    model, state = pred[:, :C], batch.state
    return {
        "model": rmse(model),
        "persistence": rmse(state),
        "model_inner": rmse(model, w * inner),
        "persistence_inner": rmse(state, w * inner),
    }
