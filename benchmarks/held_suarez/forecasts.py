# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Forecasts from the test run's initial times and their scores per lead: the emulator free
and nudged (toward the ne4pg2 reference, tau 6 h, U, V, T), the T21 dycore, persistence and
climatology (from the same scoring: screamcast's StepSkill and anomaly correlation), and the
reference itself taken to the model's cells as the nudging takes its increments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER
from screamcast.data.stacked import unstack

LEADS = {"6h": 1, "1d": 4, "2d": 8, "3d": 12, "5d": 20, "7d": 28, "10d": 40}


def starts(
    truth: xr.Dataset, states: dict, count: int = 8, spacing_days: float = 5.0, steps: int = 40
) -> list:
    """``count`` initial times ``spacing_days`` apart that have a saved spectral state and
    ``steps`` of truth after them."""
    times = list(truth["time"].values)
    step = times[1] - times[0]
    usable = [t for t in sorted(states) if t in times and t + steps * step <= times[-1]]
    if not usable:
        raise ValueError(f"no saved state has {steps} steps of truth after it")
    out = [usable[0]]
    for t in usable[1:]:
        if (t - out[-1]).total_seconds() >= spacing_days * 86400 - 1 and len(out) < count:
            out.append(t)
    return out


def emulator(
    checkpoint: Path,
    test: Path,
    start,
    steps: int,
    output: Path,
    clim: Path,
    reference: Path | None = None,
) -> dict:
    """A rollout (nudged when a reference is given) scored against the test store."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.evaluation.rollout_scores import scored_rollout

    if output.exists():
        import shutil

        shutil.rmtree(output)
    config = InferenceConfig.from_keys(
        {
            "checkpoint.path": str(checkpoint),
            "initial_condition.data": str(test),
            "initial_condition.start": start.strftime("%Y-%m-%dT%H:%M"),
            "output.path": str(output),
            "output.steps": steps,
            "output.progress": False,
            "stepper.halo_adjoint": True,  # intra-face
            "nudging.reference": str(reference) if reference else None,
            "nudging.variables": ["U", "V", "T"] if reference else [],
            "nudging.tau_hours": 6.0,
            "scoring.climatology": str(clim),
        }
    )
    return scored_rollout(config)[1]


def scored(output: Path, test: Path, clim: Path, report: Path) -> dict:
    """Any forecast store (the T21 dycore's) scored exactly as the emulator's."""
    from screamcast.evaluation.evaluate import evaluate

    return evaluate(str(output), str(test), report, climatology=str(clim), figures=False)


def reference_scores(reference: Path, test: xr.Dataset, times, variables: list[str]) -> dict:
    """RMSE of the ne4pg2 reference, taken to the model's cells by the nudging's Catmull-Rom
    bicubic within each face, against the truth at ``times``."""
    from screamcast.data.channels import with_channels
    from screamcast.evaluation.metrics import area_weighted_rmse
    from screamcast.rollout.nudging.increment import cubic_weights

    ref = unstack(xr.open_zarr(reference, chunks=None, decode_times=DECODER))
    ref = with_channels(ref, variables)
    truth = with_channels(test, variables)
    m, n = ref.sizes["y"], truth.sizes["y"]
    w = cubic_weights(m, n // m)  # (n, m)
    area = truth["area"].values
    out = {v: [] for v in variables}
    for t in times:
        for v in variables:
            coarse = ref[v].sel(time=t).values.astype(np.float64)  # (6, m, m)
            fine = np.einsum("ia,fab,jb->fij", w, coarse, w)  # (6, n, n)
            out[v].append(area_weighted_rmse(fine, truth[v].sel(time=t).values, area))
    return out


def at_leads(series) -> dict:
    """A per-step series -> ``{lead name: value}``."""
    return {k: float(series[i]) for k, i in LEADS.items() if i < len(series)}


def day_acc_falls(acc, threshold: float = 0.6, hours: float = 6.0) -> float:
    """The first lead (days, linear between steps) at which ACC drops below ``threshold``;
    inf when it never does within the forecast."""
    acc = np.asarray(acc, np.float64)
    for k in range(1, len(acc)):
        if acc[k] < threshold:
            a, b = acc[k - 1], acc[k]
            frac = (a - threshold) / (a - b) if a != b else 0.0
            return (k - 1 + frac) * hours / 24.0
    return float("inf")
