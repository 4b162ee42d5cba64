# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The shipped Held-Suarez emulator still loads and steps as it did: its first steps from the
tracked initial state, as the README runs it (intra-face halo adjoint), against numbers
recorded at fdb2bf8, before the rollout's one-stepper and state-with-time redesign."""

import json
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.config.inference import InferenceConfig
from screamcast.rollout.run import run_rollout

ROOT = Path(__file__).resolve().parents[2]
HS = ROOT / "benchmarks" / "held_suarez"
RECORD = Path(__file__).with_name("shipped_emulator_steps.json")


def first_steps(out: Path, steps: int) -> dict:
    """Each output channel's area-weighted mean and RMS (per level) at each of the first
    ``steps`` steps."""
    keys = {"checkpoint.path": str(HS / "emulator.pth"),
            "initial_condition.data": str(HS / "initial_state.zarr"),
            "output.path": str(out), "output.steps": steps,
            "stepper.halo_adjoint": True, "stepper.precision": "fp32",
            "stepper.tile": 16}  # fmt: skip
    run_rollout(InferenceConfig.from_keys(keys))
    ds = xr.open_zarr(out, consolidated=False)
    w = np.asarray(ds["area"], np.float64)  # (6, n, n)
    w = w / w.sum()
    numbers = {}
    for v in sorted(ds.data_vars):
        if "time" not in ds[v].dims:
            continue
        x = ds[v].values[1:].astype(np.float64)  # (steps, [level,] 6, n, n): not the start
        mean = (x * w).sum(axis=(-3, -2, -1)).reshape(steps, -1)  # (steps, levels)
        rms = np.sqrt((x**2 * w).sum(axis=(-3, -2, -1))).reshape(steps, -1)
        numbers[v] = np.stack([mean, rms], axis=-1).tolist()  # (steps, levels, 2)
    return numbers


def test_the_shipped_emulator_steps_as_recorded(tmp_path):
    got = first_steps(tmp_path / "out.zarr", 4)
    want = json.loads(RECORD.read_text())
    assert sorted(got) == sorted(want)
    for v, steps in want.items():  # (steps, levels, [mean, rms])
        scale = np.abs(steps).max()  # the field's size: a mean near zero is not a scale
        np.testing.assert_allclose(got[v], steps, rtol=1e-6, atol=1e-6 * scale, err_msg=v)


if __name__ == "__main__":  # record: run at the commit whose numbers are to be pinned
    import sys
    import tempfile

    if "--record" not in sys.argv:
        sys.exit(
            "this re-pins the shipped emulator's numbers from the code checked out here: run "
            "it with --record in a worktree of the commit the record names (not to make a "
            "failing test pass)"
        )

    with tempfile.TemporaryDirectory() as tmp:
        RECORD.write_text(json.dumps(first_steps(Path(tmp) / "out.zarr", 4), indent=1) + "\n")
    print(f"wrote {RECORD}")
