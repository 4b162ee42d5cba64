# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Inference of every production config against stored reference outputs.

For each ``configs/production/*.yaml``: a checkpoint with fixed-seed weights of the config's
architecture and tiling, a fixed small analytic input (n=64, hourly), a 3-step rollout on CPU
with the config's reassembly and nudging settings, compared with ``tests/data/<name>.npz``.
A change that alters the outputs fails here until the references are deliberately regenerated:

    python tests/test_characterization_inference.py --regenerate
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CONFIGS = sorted((ROOT / "configs" / "production").glob("*.yaml"))
REFERENCES = ROOT / "tests" / "data" / "characterization"
KEEP = ["u", "temperature", "precip"]  # every step, every 4th pixel; plus u in full at the end


def make_inputs(tmp: Path) -> tuple[Path, Path]:
    from screamcast.data.synthetic import write_store

    store = write_store(tmp / "ic.zarr", 64, days=0.25, step_hours=1)
    ref = write_store(tmp / "ref.zarr", 16, days=0.25, step_hours=6, coarsen=4)
    return store, ref


def make_checkpoint(config: dict, store: Path, path: Path) -> Path:
    """Fixed-seed weights (head included, so it is not persistence) in a real checkpoint."""
    import xarray as xr

    from screamcast import checkpoint_io as cio
    from screamcast.config import DataConfig, ModelConfig, TrainConfig
    from screamcast.data.stats import compute_stats
    from screamcast.model.pipeline import build_pipeline
    from screamcast.train.loop import make_checkpoint as pack

    data = DataConfig(url=str(store), n=64, **config["grid"])
    cfg = OmegaConf.structured(TrainConfig(data=data, model=ModelConfig(**config["model"])))
    d = cfg.data
    ds = xr.open_zarr(store, consolidated=False)
    stats = compute_stats(ds, d.prognostic + d.diagnostic, d.static)
    torch.manual_seed(0)
    pipeline = build_pipeline(cfg, stats)
    torch.nn.init.normal_(pipeline.net.head.weight, std=0.02)
    opt = torch.optim.AdamW(pipeline.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    state = pack(cfg, stats, pipeline, opt, sched, 0, 0, float("inf"), 60.0)
    cio.save_checkpoint_atomic(None, path, state)
    return path


def run_config(config_path: Path, tmp: Path) -> dict[str, np.ndarray]:
    from screamcast.rollout.run import RolloutOptions, run_rollout

    config = yaml.safe_load(config_path.read_text())
    store, ref = make_inputs(tmp)
    ckpt = make_checkpoint(config, store, tmp / "ckpt.pth")
    r = config["rollout"]
    nudged = "nudge_vars" in r
    out = tmp / "out.zarr"
    run_rollout(RolloutOptions(
        checkpoint=str(ckpt), data=str(store), output=str(out), steps=3,
        reference=str(ref) if nudged else None, halo_adjoint=r["halo_adjoint"],
        halo_adjoint_cross_face=r["halo_adjoint_cross_face"],
        nudge_tau_hours=r.get("nudge_tau_hours", 6.0), nudge_vars=r.get("nudge_vars", []),
        batch_size=r["batch_size"], progress=False,
    ))  # fmt: skip
    import xarray as xr

    ds = xr.open_zarr(out, consolidated=False)
    arrays = {v: ds[v].values[1:, :, ::4, ::4] for v in KEEP}
    arrays["u_last"] = ds["u"].values[-1]
    return arrays


@pytest.mark.parametrize("config_path", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_production_config_inference_matches_reference(config_path, tmp_path):
    reference = REFERENCES / f"{config_path.stem}.npz"
    assert reference.exists(), f"missing {reference}: run this file with --regenerate"
    got, want = run_config(config_path, tmp_path), np.load(reference)
    for v in [*KEEP, "u_last"]:
        scale = float(np.abs(want[v]).max()) or 1.0
        np.testing.assert_allclose(got[v], want[v], rtol=1e-4, atol=1e-5 * scale, err_msg=v)
    assert not np.allclose(got["u"][-1], got["u"][0])  # the model does move the state


def test_the_three_configs_differ(tmp_path):
    """Reassembly and nudging really change the outputs (so each reference tests something)."""
    refs = {c.stem: np.load(REFERENCES / f"{c.stem}.npz")["u"] for c in CONFIGS}
    names = list(refs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert np.abs(refs[a] - refs[b]).max() > 1e-3, (a, b)


if __name__ == "__main__" and "--regenerate" in sys.argv:
    import tempfile

    REFERENCES.mkdir(parents=True, exist_ok=True)
    for c in CONFIGS:
        with tempfile.TemporaryDirectory() as tmp:
            arrays = run_config(c, Path(tmp))
        np.savez_compressed(REFERENCES / f"{c.stem}.npz", **arrays)
        print(f"wrote {REFERENCES / (c.stem + '.npz')}")
