# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The network's one-step error of u on the cube's vertical edge columns, in training crops.

``python scripts/research/edge_column_bias.py [--checkpoint runs/demo/best.pth] [--data STORE]``:
over
the held-out times, the equatorial faces and three crop rows, crops whose origin puts the face's
x = 0 column (or x = n - 1) at a given crop position, against crops that put an interior column
at the same position: mean signed error and mean |error| of u over the crop's inner rows. Tells
whether the edge columns' error (docs/rollout.md, what is left of the imprint) is the network's
one step on its training inputs rather than something the rollout adds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from hydra import compose, initialize_config_dir

from screamcast import checkpoint_format as fmt
from screamcast.config import register
from screamcast.data.dataset import CropDataset
from screamcast.data.stats import Stats
from screamcast.data.store import dataset_grid, open_configured
from screamcast.grid import TileLayout
from screamcast.model.pipeline import build_pipeline

ROOT = Path(__file__).resolve().parents[2]


class ChosenCrops(CropDataset):
    """The held-out crops at origins the caller lists in ``chosen`` instead of random ones."""

    chosen: list[tuple[int, int, int, int]] = []

    def draw(self, index: int) -> tuple[int, int, int, int]:
        return self.chosen[index]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", default=str(ROOT / "runs/demo/best.pth"))
    ap.add_argument("--data", default=str(ROOT / "demo_data/demo.zarr"))
    args = ap.parse_args()
    register()
    with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train", overrides=["experiment=demo", f"data.url={args.data}"])
    ckpt = fmt.load_for_inference(args.checkpoint)
    pipe = build_pipeline(cfg, Stats.from_dict(ckpt.description.stats))
    pipe.load_state_dict(ckpt.weights)
    d = cfg.data
    ds = open_configured(d)
    layout = TileLayout(dataset_grid(ds), d.tile, d.halo)
    crops = ChosenCrops.from_config(d, "valid", layout, ds["time"].values, seed=0)
    H, S, n = d.halo, d.crop, layout.n
    times = range(crops.t_lo, crops.t_hi, 3)
    last = layout.padded - S  # the largest crop origin

    @torch.no_grad()
    def error(ox: int, column: int) -> tuple[float, float]:
        """u's one-step error at extended-face ``column`` in crops at x origin ``ox``."""
        crops.chosen = [
            (t, f, oy, ox) for t in times for f in range(4) for oy in (0, last // 2, last)
        ]
        b = torch.utils.data.default_collate(crops.__getitems__(list(range(len(crops.chosen)))))
        pred = pipe(b.state, b.forcing[:, 0:2].flatten(1, 2), b.static)  # (B, V, S, S)
        e = (pred[:, 0, H : S - H, column - ox] - b.target[:, 0, 0, H : S - H, column - ox]).numpy()
        return float(e.mean()), float(np.abs(e).mean())

    print("u one-step error, mean (mean |.|), in crops putting each column at crop position p")
    for ox in (0, 2, 4, H):  # the face's x = 0 is extended column H, at crop position H - ox
        edge, inner = error(ox, H), error(ox + d.tile, H + d.tile)
        print(
            f"p {H - ox:2d}: face x = 0 {edge[0]:+.4f} ({edge[1]:.4f}); "
            f"x = {d.tile} {inner[0]:+.4f} ({inner[1]:.4f})"
        )
    for ox in (last, last - 4, last - H):  # the face's x = n - 1 is extended column H + n - 1
        col = H + n - 1
        edge, inner = error(ox, col), error(ox - d.tile, col - d.tile)
        print(
            f"p {col - ox:2d}: face x = n-1 {edge[0]:+.4f} ({edge[1]:.4f}); "
            f"x = n-1-{d.tile} {inner[0]:+.4f} ({inner[1]:.4f})"
        )


if __name__ == "__main__":
    main()
