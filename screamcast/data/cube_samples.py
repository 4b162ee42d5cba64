# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Whole-cube samples for training through the global step: the state at a time and the next
``k`` states and diagnostics, on all six faces.

A sample is a pure function of its index (its time drawn from ``(seed, index)``), so a resumed
run sees the samples an uninterrupted one would, as the crop samples do. Reads one time
window of every channel per sample: small grids (the ne16pg2 benchmark: 0.3 MB a time), where
a cube fits a batch; a production grid trains on crops.

A store made of several independent runs (years of a dycore, :func:`segments_of`) never gives
a window that spans two of them; with ``augment``, each training sample is moved by one of
the forcing's exact symmetries (:mod:`screamcast.data.symmetry`), drawn from its index.
"""

from __future__ import annotations

import numpy as np
import torch
import xarray as xr

from screamcast.data.batch import CubeBatch
from screamcast.data.crop_sampler import segments_of, window_starts


class CubeSamples(torch.utils.data.Dataset):
    """A :class:`~screamcast.data.batch.CubeBatch` sample per index: ``state (C, 6, n, n)``
    (``(2C, 6, n, n)`` with ``input_times=2``: t's fields, then t - dt's),
    ``target (k, C + D, 6, n, n)``, ``start ()`` the time index of the state (the forcing's
    times are the trainer's)."""

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
        augment=None,
        input_times: int = 1,
    ):
        lo, hi = time_range
        self.history = input_times - 1  # times before t a sample holds (t - dt)
        span = steps + self.history  # its window: t - history .. t + steps
        self.starts = window_starts(lo, hi, span, segments_of(ds)) + self.history  # (W,)
        if self.starts.size == 0:
            raise ValueError(
                f"{ds.attrs.get('screamcast_url', 'the store')}: the time range [{lo}, {hi}) "
                f"holds no {steps}-step window ({hi - lo} times) inside one run"
                + (" after a first time (two input times)" if self.history else "")
            )
        self.ds, self.C = ds, len(prognostic)
        self.names = list(prognostic) + list(diagnostic)
        self.steps, self.samples = steps, samples
        self.seed, self.fixed, self.augment = seed, fixed, augment

    def __len__(self) -> int:
        return self.samples

    def start(self, index: int) -> int:
        """The sample's first time: drawn from ``(seed, index)``, or (``fixed``: validation)
        spread evenly over the windows."""
        if self.fixed:
            where = np.linspace(0, self.starts.size - 1, self.samples).round().astype(int)
            return int(self.starts[where[index]])
        draw = np.random.default_rng([self.seed, index]).integers(self.starts.size)
        return int(self.starts[draw])

    def symmetry(self, index: int) -> int:
        """Which of the augmentation's symmetries sample ``index`` is moved by (0: none)."""
        if self.augment is None or self.fixed:
            return 0
        return int(np.random.default_rng([self.seed, index, 2]).integers(len(self.augment)))

    def __getitem__(self, index: int) -> CubeBatch:
        t, h = self.start(index), self.history
        window = slice(t - h, t + self.steps + 1)
        values = np.stack(
            [np.asarray(self.ds[v].isel(time=window).values, np.float32) for v in self.names], 1
        )  # (h + k + 1, C + D, 6, n, n)
        which = self.symmetry(index)
        if which:
            values = self.augment(values, which)
        if not np.isfinite(values).all():
            bad = [v for i, v in enumerate(self.names) if not np.isfinite(values[:, i]).all()]
            raise ValueError(
                f"{self.ds.attrs.get('screamcast_url', 'the store')}: non-finite values in "
                f"{', '.join(bad)} at times {t - h}..{t + self.steps}"
            )
        inputs = values[h::-1, : self.C]  # (h + 1, C, 6, n, n): t, then t - dt
        return CubeBatch(
            state=torch.from_numpy(inputs.reshape(-1, *inputs.shape[2:]).copy()),  # (T C, ..)
            target=torch.from_numpy(values[h + 1 :].copy()),  # (k, C + D, 6, n, n)
            start=torch.tensor(t),
        )


def static_fields(ds: xr.Dataset, static: list[str]) -> np.ndarray:
    """``(F, 6, n, n)`` float32: the model's static inputs on the whole cube."""
    if not static:
        return np.zeros((0, *ds[next(iter(ds.data_vars))].shape[-3:]), np.float32)
    return np.stack([np.asarray(ds[v].values, np.float32) for v in static])
