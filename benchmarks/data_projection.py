# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Can S3 feed a GPU node? Crops per second the stacked layout sustains, against what 8 GPUs eat.

``python -m benchmarks.data_projection [--record]`` (after ``benchmarks.crop_layouts
--record``): a projection, not a measurement, from machine-independent counts.

- Supply, per node: S3 serves ~5,500 GET/s per prefix (a store's chunks share one prefix unless
  S3 has split it) and a node's network moves 100 Gbit/s; crops/s = min(5,500 / requests per
  crop, 12.5 GB/s / bytes per crop), with the requests and bytes per crop of
  ``benchmarks/results/crop_layouts.json`` (production shape scaled down: n = 256, 40 channels,
  crops of 192; noise, so bytes are uncompressed: real fields compress). For the float16 stack
  (the ingestion's default) the bytes are divided by what zstd gains on real float16-packed
  fields, measured on a Held-Suarez run (``benchmarks/results/store_compression.json``, the
  smaller of its two stores' gains), and stated beside each row.
- Demand: 8 GPUs x peak x an assumed fraction of it / FLOPs per sample; a sample costs 3
  forward passes' FLOPs (forward + backward) per step of its k-step rollout, the forward
  counted on the meta device (FlopCounterMode, as gpu_check does) for ``configs/model/large.yaml``
  with 40 channels in and out on a 192 x 192 crop. H200: 989 TFLOP/s dense bf16; fraction 0.4.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import yaml
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.harness import save_record
from screamcast.model.pipeline import input_channels
from screamcast.model.unet import UNet

GET_PER_S = 5500.0  # per prefix (AWS S3 performance guidelines)
NETWORK_BYTES_PER_S = 100e9 / 8  # 100 Gbit/s
GPUS, PEAK_FLOPS, FRACTION = 8, 989e12, 0.4  # H200 dense bf16, assumed fraction of it
CHANNELS, CROP = 40, 192
ROOT = Path(__file__).resolve().parents[1]
# the training default: the ingestion's float16 stack, configs/data/s3.yaml's regions, k = 1
DEFAULT = ("stacked_f16", 1, "320 px, 8 crops")


def zstd_gain() -> float:
    """What zstd gains on real float16-packed fields (the record's smaller gain)."""
    path = ROOT / "benchmarks/results/store_compression.json"
    report = json.loads(path.read_text())["report"]
    return min(r["zstd_gain_f16"] for r in report.values())


def forward_flops(channels: int = CHANNELS, crop: int = CROP) -> int:
    """FLOPs of one forward pass of the large model on one crop (meta device: shapes only)."""
    m = yaml.safe_load((ROOT / "configs/model/large.yaml").read_text())
    net = UNet(
        input_channels(channels, 0, True),
        channels,
        m["width"],
        m["levels"],
        m["blocks"],
        m.get("upsample", "bilinear"),
    ).to("meta")
    x = torch.zeros(1, input_channels(channels, 0, True), crop, crop, device="meta")
    with FlopCounterMode(display=False) as counter:
        net(x)
    return int(counter.get_total_flops())


def project(layouts: list[dict], flops: int, gain: float = 1.0) -> list[dict]:
    """Supply and demand per layout row, for a forward pass of ``flops``; ``gain``: what zstd
    takes off the float16 stack's bytes on real fields (noise's bytes otherwise)."""
    out = []
    for r in layouts:
        demand = GPUS * PEAK_FLOPS * FRACTION / (3 * flops * r["k"])
        by_requests = GET_PER_S / r["requests_per_crop"]
        compressed = gain if r["layout"] == "stacked_f16" else 1.0
        by_bytes = NETWORK_BYTES_PER_S * compressed / (r["mb_per_crop"] * 1e6)
        supply = min(by_requests, by_bytes)
        out.append(
            {
                **{k: r[k] for k in ("layout", "k", "regions")},
                "default": (r["layout"], r["k"], r["regions"]) == DEFAULT,
                "zstd_gain": compressed,
                "crops_per_s_by_requests": by_requests,
                "crops_per_s_by_network": by_bytes,
                "crops_per_s_consumed": demand,
                "supply_over_demand": supply / demand,
            }
        )
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/projection.json")
    a = ap.parse_args(argv)
    results = json.loads((ROOT / "benchmarks/results/crop_layouts.json").read_text())
    flops, gain = forward_flops(), zstd_gain()
    report = project(results["report"], flops, gain)
    print(f"forward FLOPs per crop (large, {CHANNELS} channels, {CROP}^2): {flops:.3e}")
    print(f"zstd on real float16-packed fields: x{gain:.3f} (store_compression.json)")
    for r in report:
        print(
            f"{r['layout']:10s} k={r['k']} {str(r['regions']):18s} supply "
            f"{min(r['crops_per_s_by_requests'], r['crops_per_s_by_network']):8.0f} crops/s "
            f"(requests {r['crops_per_s_by_requests']:8.0f}, network "
            f"{r['crops_per_s_by_network']:6.0f}), 8 GPUs eat {r['crops_per_s_consumed']:6.0f}: "
            f"x{r['supply_over_demand']:.2f}" + ("  <- the default" if r["default"] else "")
        )
    if a.record:
        command = "python -m benchmarks.data_projection " + " ".join(argv or sys.argv[1:])
        extra = {"forward_flops": flops, "assumed": [GPUS, PEAK_FLOPS, FRACTION], "gain": gain}
        save_record("data_projection", "projection", command, {"report": report, **extra})
    return report


if __name__ == "__main__":
    main()
