# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Whole-cube samples for training through the global step: the state at a time and the next
``k`` states and diagnostics, on all six faces.

A sample is a pure function of its index (its time drawn from ``(seed, index)``), so a resumed
run sees the samples an uninterrupted one would, as the crop samples do. Reads one time
window of every channel per sample: small grids (the ne16pg2 benchmark: 0.3 MB a time), where
a cube fits a batch; a production grid trains on crops.
"""

from __future__ import annotations

import numpy as np
import torch
import xarray as xr


class CubeSamples(torch.utils.data.Dataset):
    """``{"state": (C, 6, n, n), "target": (k, C + D, 6, n, n), "start": ()}`` per index;
    ``start``: the time index of the state (the forcing's times are the trainer's)."""

    def __init__(
        self,
        ds: xr.Dataset,
        prognostic: list[str],
        diagnostic: list[str],
        time_range: tuple[int, int],
        steps: int,
        samples: int,
        seed: int = 0,
        fixed: bool = False,
    ):
        lo, hi = time_range
        if hi - lo <= steps:
            raise ValueError(
                f"{ds.attrs.get('screamcast_url', 'the store')}: the time range [{lo}, {hi}) "
                f"holds no {steps}-step window ({hi - lo} times)"
            )
        self.ds, self.C = ds, len(prognostic)
        self.names = list(prognostic) + list(diagnostic)
        self.lo, self.last, self.steps, self.samples = lo, hi - steps, steps, samples
        self.seed, self.fixed = seed, fixed

    def __len__(self) -> int:
        return self.samples

    def start(self, index: int) -> int:
        """The sample's first time: drawn from ``(seed, index)``, or (``fixed``: validation)
        spread evenly over the range."""
        if self.fixed:
            return int(np.linspace(self.lo, self.last - 1, self.samples).round()[index])
        return int(np.random.default_rng([self.seed, index]).integers(self.lo, self.last))

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        t = self.start(index)
        window = slice(t, t + self.steps + 1)
        values = np.stack(
            [np.asarray(self.ds[v].isel(time=window).values, np.float32) for v in self.names], 1
        )  # (k + 1, C + D, 6, n, n)
        if not np.isfinite(values).all():
            bad = [v for i, v in enumerate(self.names) if not np.isfinite(values[:, i]).all()]
            raise ValueError(
                f"{self.ds.attrs.get('screamcast_url', 'the store')}: non-finite values in "
                f"{', '.join(bad)} at times {t}..{t + self.steps}"
            )
        return {
            "state": torch.from_numpy(values[0, : self.C].copy()),
            "target": torch.from_numpy(values[1:].copy()),
            "start": torch.tensor(t),
        }


def static_fields(ds: xr.Dataset, static: list[str]) -> np.ndarray:
    """``(F, 6, n, n)`` float32: the model's static inputs on the whole cube."""
    if not static:
        return np.zeros((0, *ds[next(iter(ds.data_vars))].shape[-3:]), np.float32)
    return np.stack([np.asarray(ds[v].values, np.float32) for v in static])
