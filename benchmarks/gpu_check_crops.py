# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The GPU check's device-crops stage: what the loader's worker and the device each spend per
crop with ``data.device_crops`` (``benchmarks/loader_cpu.py`` times both on the CPU).

It reads a zarr store, so it needs zarr (and numcodecs): where they are not installed (a lent
GPU machine's bare image) the stage reports itself skipped and the rest of the check runs.
A production-shaped packed stack (``benchmarks.crop_layouts``: n = 256, 40 channels, one of
them float32) is written to a temporary directory, 9 times; windows of 4 whole-face regions,
8 crops of 192 each, cut in batches of 8 on ``device`` (synchronised).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import torch

WINDOWS, TIMES = 3, 9


def device_crop_rates(device: torch.device) -> dict:
    """ms per crop: the worker's CPU (reading a window) and the device's wall time (unpack,
    ring, cut), median over windows after one warm-up; the device's peak memory."""
    try:
        import numcodecs  # noqa: F401
        import zarr  # noqa: F401
    except ImportError as err:
        return {"skipped": f"{err} (pip install zarr): the device crops read a store"}
    from benchmarks import loader_cpu
    from benchmarks.crop_layouts import write
    from screamcast.data.device_crops import DeviceCrops
    from screamcast.data.region_windows import RegionWindows

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "stacked_mixed.zarr"
        write(store, "stacked_mixed", times=TIMES)
        data = loader_cpu.dataset(store, window=4)
        windows, cutter = RegionWindows(data, 0), DeviceCrops(data, device)
        per = windows.per_window
        loader, stage = [], []
        for w in range(WINDOWS + 1):
            t0 = time.process_time()
            item = windows[w]
            loader.append((time.process_time() - t0) / per)
            _sync(device)
            t0 = time.perf_counter()
            loader_cpu.device_stage(cutter, item)
            _sync(device)
            stage.append((time.perf_counter() - t0) / per)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else None
    return {
        "loader_cpu_ms_per_crop": 1e3 * float(np.median(loader[1:])),
        "device_ms_per_crop": 1e3 * float(np.median(stage[1:])),
        "device_peak_mb": peak,
        "shape": loader_cpu.SHAPE | {"window": 4, "times": TIMES},
    }


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
