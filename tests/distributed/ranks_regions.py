# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Two gloo ranks under Lightning Fabric drawing training crops a region at a time.

Run by tests/distributed/test_region_ranks.py as ``python ranks_regions.py STORE RUN_DIR``;
Fabric re-launches it for rank 1. Each rank builds the real ``Trainer`` (``data.region_stride``
set, crops read lazily), iterates its loader and writes the (time, face, region) of every crop
it was given to ``rank<r>.json`` beside RUN_DIR.
"""

import json
import sys
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir
from lightning.fabric import Fabric

from screamcast.config import register
from screamcast.data.region_sampler import region_plan
from screamcast.train.loop import Trainer

ROOT = Path(__file__).resolve().parents[2]


def main(store: str, run_dir: Path) -> None:
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp", num_nodes=1)
    fabric.launch()
    register()
    overrides = [
        "experiment=pytest",
        f"data.url={store}",
        f"run_dir={run_dir}",
        "steps=8",
        "data.in_memory=false",
        "data.region_stride=5",
        "data.region_crops=4",
        "data.shuffle_regions=2",
    ]
    with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    trainer = Trainer(fabric, cfg, run_dir)
    d = cfg.data
    stride = region_plan(d, d.n + 2 * d.halo).stride
    crops = []
    for batch in trainer.loader:
        for t, f, (oy, ox) in zip(
            batch.time.tolist(), batch.face.tolist(), batch.origin.tolist(), strict=True
        ):
            crops.append([t, f, oy - oy % stride, ox - ox % stride])
    out = run_dir.parent / f"rank{fabric.global_rank}.json"
    cached = len(trainer.loader.dataset._region_cache)  # regions this rank holds at the end
    out.write_text(json.dumps({"crops": crops, "cached": cached}))


if __name__ == "__main__":
    try:
        main(sys.argv[1], Path(sys.argv[2]))
    finally:  # before teardown: gloo threads left to it can abort the rank
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
