# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What nudging toward a reference costs a perfect model: the floor under a nudged rollout.

A model that is perfect in tendency form, ``x(t + dt) = x(t) + [truth(t + dt) - truth(t)]``,
nudged toward the reference after every step as the rollout nudges
(:class:`screamcast.rollout.nudging.relaxation.Relaxation`, the same increment and time
interpolation):
whatever its error becomes is the reference's doing, its interpolation between samples and
what its projection cannot see. No emulator nudged the same way can be expected below it, and
a variable whose floor is above its persistence (the demo's temperature, which repeats every
24 h) cannot beat persistence there by being nudged. ``screamcast-nudging-floor --data TRUTH
--reference REF``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import xarray as xr

from screamcast.data.store import StoreError, dataset_grid, describe_non_finite, time_step
from screamcast.evaluation.metrics import area_weighted_rmse
from screamcast.rollout.nudging.relaxation import Relaxation


def perfect_model_errors(
    truth: xr.Dataset,
    reference: xr.Dataset,
    variables: Sequence[str],
    steps: int,
    start: int | None = None,
    tau_hours: float = 6.0,
    increment: str = "bicubic",
    time_interpolation: str = "cubic",
) -> dict[str, dict[str, np.ndarray]]:
    """Per variable, ``{"rmse": (steps + 1,), "persistence_rmse": (steps + 1,)}``: the
    area-weighted RMSE of the nudged perfect model and of persistence against ``truth`` from
    time index ``start`` (default: the last ``steps + 1`` times; negative counts from the
    end, as Python's indices do: ``-49`` with 48 steps is the default)."""
    variables = list(variables)
    k0 = _first_index(truth.sizes["time"], start, steps)
    grid, step = dataset_grid(truth), time_step(truth)
    nudger = Relaxation(
        reference,
        variables,
        variables,
        tau_hours,
        step,
        grid,
        increment=increment,
        time_interpolation=time_interpolation,
    )
    times = truth["time"].values[k0 : k0 + steps + 1]
    nudger.check_covers(times[1], times[-1])
    area = truth["area"].values  # (6, n, n)

    def at(k: int) -> np.ndarray:  # (V, 6, n, n) in float64
        fields = np.stack([truth[v].isel(time=k0 + k).values for v in variables])
        where = f"{truth.attrs.get('screamcast_url', 'the truth')} at {times[k]}"
        bad = describe_non_finite(fields, variables, where)  # a NaN truth: no floor to measure
        if bad:
            raise StoreError(f"{bad}: choose a --start and --steps where the truth is finite")
        return fields.astype(np.float64)

    first = previous = at(0)
    x = torch.as_tensor(first)  # (V, 6, n, n)
    rmse, persistence = [np.zeros(len(variables))], [np.zeros(len(variables))]
    try:
        for k in range(1, steps + 1):
            now = at(k)
            x = x + torch.as_tensor(now - previous)  # the true tendency
            nudger.apply(x, times[k])
            rmse.append(area_weighted_rmse(x.numpy(), now, area))
            persistence.append(area_weighted_rmse(first, now, area))
            previous = now
    finally:
        nudger.close()
    r, p = np.stack(rmse), np.stack(persistence)  # (steps + 1, V)
    return {v: {"rmse": r[:, i], "persistence_rmse": p[:, i]} for i, v in enumerate(variables)}


def _first_index(T: int, start: int | None, steps: int) -> int:
    """The time index the perfect model starts from, of a truth with ``T`` times."""
    k0 = T - steps - 1 if start is None else (T + start if start < 0 else start)
    if k0 < 0 or k0 + steps >= T:
        given = f"--start {start} with --steps {steps}" if start is not None else f"--steps {steps}"
        raise ValueError(
            f"{given}: {steps} steps from time index {k0} do not fit the truth's {T} times "
            f"(indices 0 to {T - 1}, or -{T} to -1 from the end; {T - 1} steps at most)"
        )
    return k0
