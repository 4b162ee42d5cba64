# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Compare the three reassembly modes (crop, intra-face overlap-add, + cross-face) on held-out
times: ``python scripts/research/seam_study.py [--checkpoint CKPT --data STORE]`` (default: the
demo).

One-step predictions from the truth at each held-out time isolate the reassembly: the network
runs once per time and its tiles are reassembled three ways. Prints a markdown table (errors
in units of each variable's std of one-step change, averaged over variables) and writes a
zoom on a face edge to docs/figures/seam_study.png.

``--rollout`` instead runs the demo's 48-step nudged rollout in four reassemblies and prints,
at leads 1, 12, 24 and 48, the RMSE by pixel class (streamed by the rollout) and the **seam
jump**: the RMS, over the pairs of pixels either side of a tile boundary inside a face, of the
error's jump across the boundary (the prediction's step minus the truth's), against the same
for pairs one pixel away from any boundary (what a pair of neighbours shows anyway).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from screamcast import checkpoint_format as fmt
from screamcast import metrics as m
from screamcast.config.inference import StepperSection
from screamcast.data.stats import Stats
from screamcast.data.store import open_store
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.model.pipeline import pipeline_of
from screamcast.rollout.stepper import GlobalStepper

ROOT = Path(__file__).resolve().parents[2]
MODES = {  # name: (halo adjoint, cross-face, window)
    "crop": (False, False, "uniform"),
    "intra-face overlap-add": (True, False, "uniform"),
    "intra + cross-face overlap-add": (True, True, "uniform"),
    "intra-face, linear window": (True, False, "linear"),
    "intra-face, cosine window": (True, False, "cosine"),
    "intra + cross-face, cosine window": (True, True, "cosine"),
}
FIGURE_MODES = ("crop", "intra-face overlap-add", "intra + cross-face overlap-add")
ROLLOUT_MODES = {  # name: (halo adjoint, cross-face, window)
    "crop": (False, False, "cosine"),
    "uniform overlap-add": (True, False, "uniform"),
    "cosine overlap-add (the default)": (True, False, "cosine"),
    "cosine, + cross-face": (True, True, "cosine"),
}
LEADS = (1, 12, 24, 48)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checkpoint", default=str(ROOT / "runs/demo/best.pth"))
    ap.add_argument("--data", default=str(ROOT / "demo_data/demo.zarr"))
    ap.add_argument("--held-out", type=int, default=48, help="the last N times")
    ap.add_argument("--figure", default=str(ROOT / "docs/figures/seam_study.png"))
    ap.add_argument("--rollout", action="store_true", help="whole rollouts, leads 1..48")
    ap.add_argument("--reference", default=str(ROOT / "demo_data/reference.zarr"))
    args = ap.parse_args()
    if args.rollout:
        rollout_study(args)
        return
    ckpt = fmt.load_for_inference(args.checkpoint)
    desc = ckpt.description
    prog, static = list(desc.variables.prognostic), list(desc.variables.static)
    n, tile, halo = desc.grid.n, desc.grid.tile, desc.grid.halo
    stats = Stats.from_dict(desc.stats)
    pipeline = pipeline_of(desc, stats)
    pipeline.load_state_dict(ckpt.weights)
    ds = open_store(args.data, None, prog, static, n)
    truth = ds[prog].to_array().values  # (C, T, 6, n, n)
    times = ds["time"].values
    grid = PhysicsGrid.for_face_size(n)
    stepper = GlobalStepper(
        pipeline,
        TileLayout(grid, tile, halo),
        np.stack([ds[v].values for v in static]),
        StepperSection(batch_size=27),
    )
    scale = np.array([stats.diff_std[v] for v in prog])[:, None, None, None]
    masks = {
        "all": np.ones(grid.shape, bool),
        "tile seams": m.tile_seam_mask(n, tile),
        "face edges (outermost px)": m.face_edge_mask(n),
        "interiors": ~(m.tile_seam_mask(n, tile) | m.face_edge_mask(n)),
    }
    sums = {mode: {k: [] for k in [*masks, "edge gradient variance ratio"]} for mode in MODES}
    T = len(times)
    last = {}
    for i in range(T - args.held_out - 1, T - 1):
        x = torch.as_tensor(truth[:, i].astype(np.float32))
        tiles = stepper.predict_tiles(x, times[i], times[i + 1])
        for mode, (adjoint, cross, window) in MODES.items():
            op = stepper.op
            y = op.adjoint(tiles, cross_face=cross, window=window) if adjoint else op.crop(tiles)
            pred = y[0, : len(prog)].numpy() / scale  # (C, 6, n, n), normalised
            true = truth[:, i + 1] / scale
            for k, mask in masks.items():
                sums[mode][k].append(m.masked_rmse(pred, true, grid.area, mask).mean())
            ratios = [m.edge_gradient_variance_ratio(p, t) for p, t in zip(pred, true, strict=True)]
            sums[mode]["edge gradient variance ratio"].append(np.mean(ratios))
            last[mode] = (pred[0] - true[0]) * scale[0]
    print(
        f"one-step errors over {args.held_out} held-out times, {args.checkpoint}, n={n}, "
        f"tile {tile}, halo {halo} (RMSE in units of the one-step std)\n"
    )
    cols = list(masks) + ["edge gradient variance ratio"]
    print("| mode | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for mode in MODES:
        print(f"| {mode} | " + " | ".join(f"{np.mean(sums[mode][c]):.4f}" for c in cols) + " |")
    figure(args.figure, {k: v for k, v in last.items() if k in FIGURE_MODES}, n)


def seam_jump(error: np.ndarray, tile: int) -> np.ndarray:
    """Per variable ``(C,)``: the RMS of the error's jump across tile boundaries inside a face
    (both directions), ``error (C, 6, n, n)``."""
    at = (np.arange(error.shape[-1] - 1) + 1) % tile == 0  # the pair x | x + 1 straddles one
    dx = np.diff(error, axis=-1)[..., at]  # (C, 6, n, boundaries)
    dy = np.diff(error, axis=-2)[..., at, :]  # (C, 6, boundaries, n)
    return np.sqrt((np.mean(dx**2, axis=(1, 2, 3)) + np.mean(dy**2, axis=(1, 2, 3))) / 2)


def rollout_study(args) -> None:
    """The nudged 48-step rollout of the demo in each reassembly, scored per lead against crop:
    each score per variable over crop's, averaged over the prognostic variables (their units
    and sizes differ: the tracer's error is 30 one-step stds at +48 h, u's 2), and the worst."""
    import tempfile

    import xarray as xr

    from screamcast.config.inference import InferenceConfig
    from screamcast.data.calendar import DECODER
    from screamcast.evaluation.rollout_scores import scored_rollout

    desc = fmt.load_for_inference(args.checkpoint).description
    prog, tile = list(desc.variables.prognostic), desc.grid.tile
    truth = open_store(args.data)  # either layout (the demo store is stacked)
    start = truth["time"].values[-49].strftime("%Y-%m-%dT%H:%M")
    keys = ("rmse", "rmse_tile_seams", "rmse_face_edges", "rmse_interiors")
    scores = {}  # mode -> (leads, 5 scores, C)
    with tempfile.TemporaryDirectory() as tmp:
        for j, (mode, (adjoint, cross, window)) in enumerate(ROLLOUT_MODES.items()):
            out = Path(tmp) / f"{j}.zarr"
            options = InferenceConfig.from_keys(
                {
                    "checkpoint.path": args.checkpoint,
                    "initial_condition.data": args.data,
                    "initial_condition.start": start,
                    "output.path": str(out),
                    "output.steps": 48,
                    "output.progress": False,
                    "nudging.reference": args.reference,
                    "nudging.variables": ["u", "v", "temperature"],
                    "stepper.halo_adjoint": adjoint,
                    "stepper.halo_adjoint_cross_face": cross,
                    "stepper.halo_adjoint_window": window if adjoint else None,
                }
            )
            table = scored_rollout(options)[1]
            o = xr.open_zarr(out, consolidated=False, decode_times=DECODER, chunks=None)
            rows = []
            for k in LEADS:
                t = o["time"].values[k]
                error = o[prog].isel(time=k).to_array().values
                error = error - truth[prog].sel(time=t).to_array().values  # (C, 6, n, n)
                per_key = [[table[v][key][k] for v in prog] for key in keys]
                rows.append([*per_key, seam_jump(error, tile)])  # (5, C)
            scores[mode] = np.array(rows)  # (leads, 5, C)
    crop = scores["crop"]
    cols = ["all", "tile seams", "face edges", "interiors", "seam jump"]
    print(
        f"nudged rollout from {start}, {args.checkpoint}, tile {tile}: each score over crop's, "
        f"per variable, mean over {', '.join(prog)} (the worst variable in brackets)\n"
    )
    print("| mode | lead | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for mode, s in scores.items():
        ratio = s / crop  # (leads, 5, C)
        for i, k in enumerate(LEADS):
            cells = [f"{r.mean():.3f} ({r.max():.3f} {prog[r.argmax()]})" for r in ratio[i]]
            print(f"| {mode} | {k} | " + " | ".join(cells) + " |")
    print("\ncrop's own scores (RMSE; seam jump: RMS of the error's step across a boundary):")
    for i, k in enumerate(LEADS):
        cells = ", ".join(
            f"{v} {crop[i, 0, c]:.3g} / {crop[i, 4, c]:.3g}" for c, v in enumerate(prog)
        )
        print(f"- lead {k}: {cells}")


def figure(path: str, errors: dict, n: int) -> None:
    """u error in the 12 pixels either side of the edge between face 0 and face 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = 12
    fig, axes = plt.subplots(
        1, len(errors), figsize=(4.2 * len(errors), 4), constrained_layout=True
    )
    vmax = max(float(np.abs(e[:2]).max()) for e in errors.values())
    for ax, (mode, err) in zip(axes, errors.items(), strict=True):
        zoom = np.concatenate([err[0][:, -w:], err[1][:, :w]], axis=1)  # (n, 2w)
        im = ax.imshow(zoom, origin="lower", cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto")
        ax.axvline(w - 0.5, color="k", lw=1)
        ax.set_title(f"{mode}\nu error (m/s), face 0 | face 1")
        ax.set_xticks([0, w - 0.5, 2 * w - 1], [f"x={n - w}", f"x={n - 1} | x=0", f"x={w - 1}"])
    fig.colorbar(im, ax=axes, shrink=0.8)
    fig.savefig(path, dpi=90)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
