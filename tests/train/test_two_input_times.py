# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A network of two input times (``data.input_times=2``: the state at t - dt beside t, as the
DLWP family takes): the pipeline reads the last step's change, the cube samples hold both
times, the global unroll and the rollout hand each step the state it stepped from (a resume
reads it back from the output), and what cannot work is refused by name."""

import shutil

import numpy as np
import pytest
import torch
import xarray as xr
import zarr

from screamcast.config.inference import InferenceConfig
from screamcast.data.cube_samples import CubeSamples
from screamcast.data.stats import Stats
from screamcast.model.pipeline import Pipeline, input_channels
from screamcast.model.state import State
from screamcast.model.unet import UNet
from screamcast.rollout.errors import RolloutError
from screamcast.rollout.run import run_rollout
from screamcast.step.step import Step
from screamcast.train.global_unroll import lead_weights
from screamcast.train.loop import train
from tests.train.test_global_unroll import config, stub_batch, stub_unroll

NAMES = ["u", "v"]


def pipeline(times: int) -> Pipeline:
    torch.manual_seed(0)
    stats = Stats({v: 0.0 for v in NAMES}, {v: 2.0 for v in NAMES}, {v: 0.5 for v in NAMES})
    net = UNet(input_channels(2, 0, insolation=False, input_times=times), 2, width=8, levels=1)
    return Pipeline(net, stats, NAMES, [], [], insolation=False, input_times=times)


def test_the_network_reads_the_last_steps_change_in_the_residuals_units():
    """Input channels: 2C + the rest; the second time enters as (x_t - x_{t-dt}) / diff_std
    (a previous state equal to t's gives the zero change); C channels are refused."""
    two, one = pipeline(2), pipeline(1)
    first = [next(m for m in p.net.modules() if isinstance(m, torch.nn.Conv2d)) for p in (two, one)]
    assert first[0].in_channels == first[1].in_channels + 2
    with torch.no_grad():  # the head starts at zero (persistence): give it weights
        for p in two.parameters():
            p.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(p.numel()))
    x = torch.randn(3, 2, 8, 8, generator=torch.Generator().manual_seed(1))
    prev = x - 0.25
    _, inputs = two.state_inputs(torch.cat([x, prev], 1))
    torch.testing.assert_close(inputs[:, :2], x / 2.0)
    torch.testing.assert_close(inputs[:, 2:], torch.full_like(x, 0.5))  # 0.25 / diff_std 0.5
    static, forcing = torch.zeros(3, 4, 8, 8), torch.zeros(3, 0, 8, 8)
    moved = two(torch.cat([x, prev], 1), forcing, static)
    still = two(torch.cat([x, x], 1), forcing, static)
    assert (moved - still).abs().max() > 1e-4  # the previous state changes the step
    with pytest.raises(ValueError, match="takes 2 input time"):
        two(x, forcing, static)
    with pytest.raises(ValueError, match="data.input_times must be 1 or 2, got 3"):
        Pipeline(one.net, Stats({}, {}, {}), [], [], [], input_times=3)


def test_cube_samples_hold_the_state_then_the_one_a_step_before(tiny_store):
    """``state (2C, 6, n, n)``: t's fields then t - dt's, t never the range's first time;
    the targets t + 1 ..."""
    ds = xr.open_zarr(tiny_store)
    samples = CubeSamples(ds, NAMES, ["temperature"], (0, 8), 2, 16, input_times=2)
    assert samples.starts.min() == 1 and samples.starts.max() == 5  # t - 1 .. t + 2 in 0..7
    s = samples[3]
    t = int(s.start)
    u, v = (np.asarray(ds[n].values, np.float32) for n in NAMES)
    want = np.stack([u[t], v[t], u[t - 1], v[t - 1]])
    np.testing.assert_array_equal(s.state.numpy(), want)
    np.testing.assert_array_equal(s.target[:, 0].numpy(), u[t + 1 : t + 3])
    one = CubeSamples(ds, NAMES, ["temperature"], (0, 8), 2, 16)
    assert one.starts.min() == 0 and one[3].state.shape[0] == 2


def test_each_lead_is_handed_the_state_it_stepped_from():
    """Lead 0 takes the sample's t - dt state; lead j the state lead j - 1 stepped from."""
    u = stub_unroll(lead_weights([], 3))
    batch = stub_batch()
    earlier = batch.state - 5.0
    seen = []
    record = u.step.__call__

    def step(state, t1s):
        seen.append(state.previous.clone())
        return record(state, t1s)

    u.step.__call__ = step
    u.step = type("S", (), {"C": 2, "__call__": lambda self, s, t: step(s, t)})()
    u(batch._replace(state=torch.cat([batch.state, earlier], 1)), np.arange(10) * 6.0)
    torch.testing.assert_close(seen[0], earlier)
    torch.testing.assert_close(seen[1], batch.state)
    torch.testing.assert_close(seen[2], batch.state + 1.0)


def test_a_step_hands_on_the_state_it_stepped_from():
    def predict(x, t0, t1):  # (B, 2C, ...) -> (B, C, ...): the two times' sum
        return x[:, :1] + x[:, 1:]

    out = Step(predict, 1)(
        State(torch.ones(1, 1, 2), np.array([0]), torch.full((1, 1, 2), 3.0)), [6]
    )
    assert out.prognostic.flatten().tolist() == [4.0, 4.0]
    nxt = out.state()
    assert nxt.previous.flatten().tolist() == [1.0, 1.0] and nxt.fields.flatten().tolist() == [
        4.0,
        4.0,
    ]
    assert (
        Step(lambda x, a, b: x, 1)(State(torch.ones(1, 1, 2), np.array([0])), [6]).previous is None
    )


@pytest.fixture(scope="module")
def two_times_run(tiny_store, tmp_path_factory):
    run = tmp_path_factory.mktemp("two_times")
    keys = ["unroll=global", "rollout_steps=2", "data.input_times=2", "steps=4"]
    train(config(tiny_store, f"run_dir={run}", "global_unroll.valid_samples=2", *keys))
    return run / "latest.pth"


def rollout(checkpoint, store, out, **keys):
    base = {"checkpoint.path": str(checkpoint), "output.path": str(out)}
    base |= {"initial_condition.data": str(store), "output.steps": 4, "output.progress": False}
    return run_rollout(InferenceConfig.from_keys(base | keys))


def test_the_rollout_starts_a_step_in_and_resumes_from_the_output(
    two_times_run, tiny_store, tmp_path
):
    """Without ``--start`` it starts at the store's second time (the first has no state
    before it); the first time itself is refused before anything is written; a run cut
    after 2 steps and resumed (its t - dt read back from the output) equals the whole run."""
    whole = tmp_path / "whole.zarr"
    rollout(two_times_run, tiny_store, whole)
    times = xr.open_zarr(tiny_store)["time"].values
    assert xr.open_zarr(whole)["time"].values[0] == times[1]
    assert xr.open_zarr(whole).attrs["input_times"] == 2  # the output says what it stepped on
    first = str(times[0])[:16]
    with pytest.raises(RolloutError, match="takes two input times.*start at"):
        rollout(
            two_times_run, tiny_store, tmp_path / "never.zarr", **{"initial_condition.start": first}
        )
    assert not (tmp_path / "never.zarr").exists()
    cut = tmp_path / "cut.zarr"
    shutil.copytree(whole, cut)
    group = zarr.open_group(cut, mode="r+")
    group.attrs["complete_steps"] = 3  # killed after step 2
    for v in ("u", "temperature"):
        group[v][3:] = np.nan
    rollout(two_times_run, tiny_store, cut, **{"output.resume": True})
    for v in ("u", "v", "temperature"):
        np.testing.assert_array_equal(xr.open_zarr(cut)[v].values, xr.open_zarr(whole)[v].values)


def test_crop_training_of_two_input_times_is_refused(tiny_store, tmp_path):
    with pytest.raises(ValueError, match="input_times=2 is trained through the global step"):
        train(config(tiny_store, f"run_dir={tmp_path}", "data.input_times=2", "steps=1"))


def test_a_bad_state_before_the_start_is_refused_before_anything_is_written(
    two_times_run, holed_stores, tmp_path
):
    """The store's u is NaN at time 1: a start at time 2 reads it as the state before the
    start, and is refused naming it, no output made."""
    nan_store = holed_stores[0]
    start = str(xr.open_zarr(nan_store)["time"].values[2])[:16]
    out = tmp_path / "never.zarr"
    before = str(xr.open_zarr(nan_store)["time"].values[1])[:16].replace("T", " ")
    with pytest.raises(ValueError, match=f"at {before}.*'u' has .* non-finite"):
        rollout(two_times_run, nan_store, out, **{"initial_condition.start": start})
    assert not out.exists()
