# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The one driver's output lifecycle where it differs from a plan: what rank 0 finds under
the output's lock decides (another run may have made the output since the plan), and a store
it could not create leaves no staging directory behind."""

import pytest
import xarray as xr

from screamcast.config.inference import InferenceConfig
from screamcast.rollout import output as out
from screamcast.rollout.driver import drive
from screamcast.rollout.exchange import LocalExchange
from screamcast.rollout.plan import RolloutError, plan_rollout
from screamcast.rollout.run import run_rollout


def config(ckpt, store, path, **more) -> InferenceConfig:
    keys = {
        "checkpoint.path": str(ckpt),
        "initial_condition.data": str(store),
        "output.path": str(path),
        "output.steps": 3,
        "output.progress": False,
    }
    return InferenceConfig.from_keys(keys | more)


def test_an_output_made_after_the_plan_is_replaced_only_once_the_new_one_is_complete(
    tiny_checkpoint, tiny_store, tmp_path
):
    path = tmp_path / "o.zarr"
    tight = {"output.overwrite": True, "guard.mean_sigmas": 1e-9}  # stops at step 1
    plan, inputs = plan_rollout(config(tiny_checkpoint, tiny_store, path, **tight))
    assert plan.action == "create"  # nothing there when planned ...
    run_rollout(config(tiny_checkpoint, tiny_store, path, **{"output.steps": 2}))  # ... then
    before = xr.open_zarr(path, consolidated=False)["u"].values.tobytes()
    with pytest.raises(RolloutError, match="left physics"):
        drive(plan, inputs, LocalExchange(), "cpu")
    assert xr.open_zarr(path, consolidated=False)["u"].values.tobytes() == before
    assert not out.staging_path(path).exists()


def test_a_store_that_cannot_be_created_leaves_no_staging(
    tiny_checkpoint, tiny_store, tmp_path, monkeypatch
):
    from screamcast.rollout.writer import RolloutWriter

    path = tmp_path / "o.zarr"
    plan, inputs = plan_rollout(config(tiny_checkpoint, tiny_store, path))
    real = RolloutWriter.create

    def full_disk(self):
        real(self)  # the store's directory is made, then the disk fills
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RolloutWriter, "create", full_disk)
    with pytest.raises(OSError, match="No space left"):
        drive(plan, inputs, LocalExchange(), "cpu")
    assert not out.staging_path(path).exists() and not path.exists()
