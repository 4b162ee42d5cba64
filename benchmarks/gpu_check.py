# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training-step and rollout-step throughput on whatever device there is (CUDA: bf16 autocast
and channels_last; CPU: fp32, or ``--precision bf16`` to run the CUDA configuration on CPU),
plus FLOPs per tile and a projection to a production grid.

    python -m benchmarks.gpu_check                   # CUDA if present, < 5 minutes
    python -m benchmarks.gpu_check --scaling         # rollout step cost for n = 48, 96, 192
    bash benchmarks/gpu_check.sh                     # the same, for a lent GPU machine

Prints one JSON document (and writes it with --out). The projection is arithmetic on measured
numbers, not a measurement: production step time = FLOPs per step / measured FLOP/s.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from screamcast.data.stats import Stats
from screamcast.grid import CubedSphereGrid, TileLayout
from screamcast.model.pipeline import Pipeline, input_channels
from screamcast.model.unet import UNet
from screamcast.rollout.stepper import PRECISIONS, GlobalStepper, resolve_precision

PROG, DIAG, STATIC = ["u", "v", "vorticity", "tracer", "temperature"], ["precip"], ["orog"]


def make_pipeline(width: int, levels: int) -> Pipeline:
    names = PROG + DIAG + STATIC
    stats = Stats({v: 0.0 for v in names}, {v: 1.0 for v in names}, {v: 0.1 for v in names})
    torch.manual_seed(0)
    net = UNet(input_channels(len(PROG), len(STATIC)), len(PROG) + len(DIAG), width, levels)
    torch.nn.init.normal_(net.head.weight, std=1e-2)
    return Pipeline(net, stats, PROG, DIAG, STATIC)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_step_rate(pipeline, device, size: int, batch: int, steps: int, bf16: bool) -> dict:
    """Images per second of forward + backward + AdamW on random crops of ``size`` (``bf16``:
    under bf16 autocast with channels_last, as on CUDA)."""
    pipeline = pipeline.to(device).train()
    fmt = torch.channels_last if bf16 else torch.contiguous_format
    pipeline = pipeline.to(memory_format=fmt)
    opt = torch.optim.AdamW(pipeline.parameters(), lr=1e-4)
    state = torch.randn(batch, len(PROG), size, size, device=device).to(memory_format=fmt)
    forcing = torch.rand(batch, 2, size, size, device=device).to(memory_format=fmt)
    static = torch.randn(batch, len(STATIC) + 4, size, size, device=device).to(memory_format=fmt)
    target = torch.randn(batch, len(PROG) + len(DIAG), size, size, device=device)

    def step():
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = ((pipeline(state, forcing, static) - target) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    dt = (time.perf_counter() - t0) / steps
    return {"crop": size, "batch": batch, "step_s": dt, "images_per_s": batch / dt}


def tile_flops(pipeline, size: int) -> int:
    x = [torch.zeros(1, len(PROG), size, size), torch.zeros(1, 2, size, size),
         torch.zeros(1, len(STATIC) + 4, size, size)]  # fmt: skip
    with FlopCounterMode(display=False) as counter:
        pipeline.cpu().eval()(*x)
    return int(counter.get_total_flops())


def rollout_step_rate(pipeline, device, n: int, tile: int, halo: int, steps: int, batch: int,
                      precision: str = "auto"):  # fmt: skip
    layout = TileLayout(CubedSphereGrid(n), tile, halo)
    stepper = GlobalStepper(pipeline, layout, np.zeros((len(STATIC), 6, n, n)), str(device), batch,
                            halo_adjoint=True, precision=precision)  # fmt: skip
    x = torch.randn(len(PROG), 6, n, n)
    t0, t1 = np.datetime64("2020-01-01T00"), np.datetime64("2020-01-01T01")
    stepper.step(x, t0, t1)
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        x = stepper.step(x, t0, t1)[: len(PROG)].cpu()
    _sync(device)
    dt = (time.perf_counter() - start) / steps
    return {"n": n, "tile": tile, "halo": halo, "tiles": layout.n_tiles, "step_s": dt,
            "sim_days_per_wall_day_at_1h": 3600.0 / dt,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--n", type=int, default=192)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--halo", type=int, default=16)
    ap.add_argument("--width", type=int, default=48)
    ap.add_argument("--levels", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--scaling", action="store_true", help="rollout step for n = 48, 96, 192")
    ap.add_argument("--precision", choices=PRECISIONS, default="auto",
                    help="bf16: autocast + channels_last (auto: on CUDA); bf16 on CPU tests the "
                    "GPU code path")  # fmt: skip
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args(argv)
    device = torch.device(a.device)
    pipeline = make_pipeline(a.width, a.levels)
    size = a.tile + 2 * a.halo
    flops = tile_flops(pipeline, size)
    cuda = device.type == "cuda"
    bf16 = resolve_precision(a.precision, device) == "bf16"
    report = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "precision": "bf16 autocast, channels_last" if bf16 else "fp32",
        "model": {"width": a.width, "levels": a.levels},
        "flops_per_tile_forward": flops,
    }
    report["train"] = train_step_rate(pipeline, device, size, a.batch, a.steps, bf16)
    runs = [(48, 16, 8), (96, 32, 16), (192, 64, 16)] if a.scaling else [(a.n, a.tile, a.halo)]
    report["rollout"] = [
        rollout_step_rate(pipeline, device, n, t, h, a.steps, a.batch, a.precision)
        for n, t, h in runs
    ]
    last = report["rollout"][-1]
    achieved = (
        last["tiles"] * tile_flops(pipeline, last["tile"] + 2 * last["halo"]) / last["step_s"]
    )
    prod_tiles, prod_size = 6 * (2048 // 128) ** 2, 128 + 2 * 32
    prod_flops = prod_tiles * tile_flops(pipeline, prod_size)
    report["projection"] = {
        "grid": "face 2048, tile 128, halo 32", "tiles": prod_tiles,
        "flops_per_step": prod_flops, "achieved_flops_per_s": achieved,
        "projected_step_s": prod_flops / achieved,
        "projected_sim_days_per_wall_day_at_1h": 3600.0 / (prod_flops / achieved),
        "note": "a projection from the measured FLOP rate of this run, not a measurement",
    }  # fmt: skip
    text = json.dumps(report, indent=2)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return report


if __name__ == "__main__":
    main()
