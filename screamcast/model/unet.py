# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A small fully convolutional U-Net that predicts every pixel of a crop with halo.

No normalisation layer: GroupNorm/InstanceNorm statistics over a crop change from tile to tile
and are a known source of seams in tiled inference. Everything here acts per pixel or through
fixed-size convolutions, so a model trained on 64x64 crops runs on 128x128 or tile + 2*halo.
"""

from __future__ import annotations

import torch
from torch import nn


class ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, c_in, H, W) -> (B, c_out, H, W)
        return self.skip(x) + self.conv2(self.act(self.conv1(self.act(x))))


class UNet(nn.Module):
    """``levels`` halvings of the resolution; widths ``width * 2**level``.

    The output head starts at zero, so an untrained model in a residual pipeline is persistence.
    ``upsample``: ``nearest`` copies each coarse value to a 2 x 2 block, so the decoder's
    features jump at the pooling grid's lines, which all meet at the centre of a crop (and of a
    rollout tile); ``bilinear`` interpolates across them (docs/training.md, the tile imprint).
    """

    def __init__(
        self,
        c_in: int,
        c_out: int,
        width: int = 32,
        levels: int = 2,
        blocks: int = 1,
        upsample: str = "nearest",
    ):
        super().__init__()
        if upsample not in ("nearest", "bilinear"):
            raise ValueError(f"model.upsample must be nearest or bilinear, got {upsample!r}")
        self.levels, self.upsample = levels, upsample
        widths = [width * 2**i for i in range(levels + 1)]
        self.stem = nn.Conv2d(c_in, width, 3, padding=1)
        self.down = nn.ModuleList()
        for i in range(levels + 1):
            c = widths[max(i - 1, 0)]
            layers = [ResBlock(c, widths[i])] + [
                ResBlock(widths[i], widths[i]) for _ in range(blocks - 1)
            ]
            self.down.append(nn.Sequential(*layers))
        self.up = nn.ModuleList(
            nn.Sequential(
                ResBlock(widths[i + 1] + widths[i], widths[i]),
                *[ResBlock(widths[i], widths[i]) for _ in range(blocks - 1)],
            )
            for i in reversed(range(levels))
        )
        self.head = nn.Conv2d(width, c_out, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, c_in, S, S) -> (B, c_out, S, S)``; ``S`` divisible by ``2**levels``."""
        f = 2**self.levels
        if x.shape[-2] % f or x.shape[-1] % f:
            raise ValueError(
                f"UNet: crop {tuple(x.shape[-2:])} must be divisible by 2**levels = {f}"
            )
        h = self.stem(x)
        skips = []
        for i, block in enumerate(self.down):
            if i:
                h = nn.functional.avg_pool2d(h, 2)  # (B, C, S/2^i, S/2^i)
            h = block(h)
            skips.append(h)
        for block, skip in zip(self.up, reversed(skips[:-1]), strict=True):
            if self.upsample == "bilinear":
                h = nn.functional.interpolate(
                    h, scale_factor=2, mode="bilinear", align_corners=False
                )
            else:
                h = nn.functional.interpolate(h, scale_factor=2, mode="nearest")
            h = block(torch.cat([h, skip], dim=1))  # (B, C_up + C_skip, S', S')
        return self.head(nn.functional.gelu(h))
