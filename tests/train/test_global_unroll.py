# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training through the global step: its prediction is the rollout's, recomputing steps in
the backward pass changes no gradient, and the correctors a run trains with are recorded in
its checkpoint and applied by the rollout."""

from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr
from hydra import compose, initialize_config_dir

from screamcast.config import register
from screamcast.config.inference import StepperSection
from screamcast.data.batch import CubeBatch
from screamcast.data.cube_samples import CubeSamples, static_fields
from screamcast.data.stats import compute_stats
from screamcast.data.store import dataset_grid, open_configured
from screamcast.grid import TileLayout
from screamcast.halo import HaloOperator
from screamcast.model.pipeline import build_pipeline
from screamcast.model.state import State
from screamcast.rollout.stepper import GlobalStepper
from screamcast.step.cube_predictor import CubePredictor
from screamcast.step.reassembly import Reassembly
from screamcast.step.step import Step
from screamcast.step.tile_inputs import TileInputs
from screamcast.train.global_unroll import GlobalUnroll, lead_weights
from screamcast.train.losses import area_weighted_mse

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
MEAN_T = "correctors=[{type: mean_temperature, config: {variable: temperature}}]"


def config(store, *overrides):
    register()
    with initialize_config_dir(str(CONFIGS), version_base="1.3"):
        return compose("train", overrides=["experiment=pytest", f"data.url={store}", *overrides])


@pytest.fixture(scope="module")
def parts(tiny_store):
    cfg = config(tiny_store)
    ds = open_configured(cfg.data)
    d = cfg.data
    stats = compute_stats(ds, d.prognostic + d.diagnostic, d.static)
    torch.manual_seed(0)
    pipeline = build_pipeline(cfg, stats)
    layout = TileLayout(dataset_grid(ds), d.tile, d.halo)
    return cfg, ds, pipeline, layout


def unroll(parts, recompute: bool, steps: int = 3) -> GlobalUnroll:
    cfg, ds, pipeline, layout = parts
    op = HaloOperator(layout)
    inputs = TileInputs(pipeline, layout, static_fields(ds, list(cfg.data.static)), op)
    predict = CubePredictor(pipeline, op, inputs, Reassembly.INTRA_FACE, "cosine")
    step = Step(predict, pipeline.n_prognostic)
    area = np.asarray(layout.grid.area)
    w = lead_weights([], steps)
    return GlobalUnroll(
        step, area_weighted_mse, pipeline.loss_scale(), pipeline.mean, area, w, recompute
    )


def test_its_step_is_the_rollouts_step(parts):
    cfg, ds, pipeline, layout = parts
    sample = CubeSamples(ds, cfg.data.prognostic, cfg.data.diagnostic, (0, 10), 1, 1)[0]
    times = ds["time"].values
    t = int(sample.start)
    training = unroll(parts, False).step(State(sample.state[None], times[[t]]), times[[t + 1]])
    stepper = GlobalStepper(
        pipeline,
        layout,
        static_fields(ds, list(cfg.data.static)),
        StepperSection(halo_adjoint=True, precision="fp32", channels_last=False),
    )
    rollout = stepper.step(sample.state, times[t], times[t + 1])  # (C + D, 6, n, n)
    # the rollout clips precipitation at zero (the declared bounds, inference only)
    got = training.fields()[0].detach()
    got[-1].clamp_(min=0)
    torch.testing.assert_close(got, rollout, rtol=1e-5, atol=1e-5)
    pipeline.train()


def test_recomputing_steps_changes_no_gradient(parts):
    cfg, ds, pipeline, layout = parts
    samples = CubeSamples(ds, cfg.data.prognostic, cfg.data.diagnostic, (0, 12), 3, 2, seed=1)
    batch = torch.utils.data.default_collate([samples[0], samples[1]])  # a CubeBatch
    grads = []
    for recompute in (False, True):
        pipeline.zero_grad()
        loss, first = unroll(parts, recompute)(batch, ds["time"].values)
        loss.backward()
        grads.append([p.grad.clone() for p in pipeline.parameters()])
        assert first.shape == (len(cfg.data.prognostic) + len(cfg.data.diagnostic),)
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    assert sum(float(g.abs().sum()) for g in grads[0]) > 0


def test_lead_weights_are_checked():
    assert lead_weights([], 3).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="lead_weights needs 2 non-negative weights"):
        lead_weights([1.0], 2)


def test_a_run_trained_with_a_corrector_rolls_out_with_it(tiny_store, tmp_path):
    """The correctors a run trains with are in its checkpoint and the rollout applies them
    (the area-mean temperature held at its start, every step); the inference config can
    drop them (``stepper.correctors=[]``), and then the mean moves."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.grid import PhysicsGrid
    from screamcast.rollout.run import run_rollout
    from screamcast.train.loop import train

    run = tmp_path / "run"
    train(config(tiny_store, f"run_dir={run}", "unroll=global", "rollout_steps=2", MEAN_T,
                 "global_unroll.valid_samples=2", "steps=2"))  # fmt: skip
    area = PhysicsGrid.for_face_size(16).area

    def mean_t(path, correctors=None):
        keys = {"checkpoint.path": str(run / "latest.pth"), "output.path": str(path),
                "initial_condition.data": str(tiny_store), "output.steps": 3,
                "output.progress": False}  # fmt: skip
        if correctors is not None:
            keys["stepper.correctors"] = correctors
        run_rollout(InferenceConfig.from_keys(keys))
        t = xr.open_zarr(path)["temperature"].values.astype(np.float64)  # (4, 6, n, n)
        return (t * area).sum((1, 2, 3)) / area.sum(), xr.open_zarr(path).attrs["correctors"]

    held, recorded = mean_t(tmp_path / "a.zarr")
    assert "mean_temperature" in recorded
    np.testing.assert_allclose(held[1:], held[0], rtol=2e-7)
    free, recorded = mean_t(tmp_path / "b.zarr", [])
    assert recorded == "[]" and np.abs(free[1:] - free[0]).max() > 1e-4


def test_input_noise_perturbs_training_only(parts):
    cfg, ds, pipeline, layout = parts
    samples = CubeSamples(ds, cfg.data.prognostic, cfg.data.diagnostic, (0, 12), 2, 1, seed=2)
    batch = torch.utils.data.default_collate([samples[0]])
    times = ds["time"].values
    clean, noisy = unroll(parts, False, 2), unroll(parts, False, 2)
    noisy.input_noise = 0.5
    with torch.no_grad():  # validation: never perturbed
        torch.testing.assert_close(noisy(batch, times)[0], clean(batch, times)[0])
    torch.manual_seed(3)
    a = noisy(batch, times)[0]
    torch.manual_seed(3)
    b = noisy(batch, times)[0]
    assert float(a) == float(b) != float(clean(batch, times)[0])  # the run's RNG decides it


class Recorder:
    """A step that adds 1 to the state (diagnostics: the state's first channel) and records
    what it was given: the unroll's contract, without a network."""

    C = 2  # prognostic channels (a Step's n_prognostic)

    def __init__(self):
        self.calls = []

    def __call__(self, state, t1s):
        x = state.fields
        self.calls.append((x.detach().clone(), list(state.time), list(t1s)))
        out = torch.cat([x + 1.0, x[:, :1]], 1)  # (B, C + 1, 6, n, n)
        return type("Out", (), {"fields": lambda self: out})()


def stub_unroll(weights, climate=None):
    from screamcast.grid import PhysicsGrid

    area = np.asarray(PhysicsGrid(4, 2).area)  # (6, 8, 8)
    scale, mean = torch.ones(1, 3, 1, 1), torch.zeros(1, 3, 1, 1)
    u = GlobalUnroll(Recorder(), area_weighted_mse, scale, mean, area, weights, False)
    if climate:
        u.with_climate_losses(*climate)
    return u


def stub_batch(k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    state = torch.randn(2, 2, 6, 8, 8, generator=g)
    target = torch.randn(2, k, 3, 6, 8, 8, generator=g)
    return CubeBatch(state, target, start=torch.tensor([0, 4]))


def test_each_lead_steps_from_the_models_own_prediction_at_its_own_times():
    """No teacher forcing: lead j's input is lead j - 1's prediction; each lead's forcing
    times move on; the per-variable loss returned is the first lead's."""
    u, batch = stub_unroll(lead_weights([], 3)), stub_batch()
    times = np.arange(10) * 6.0
    total, first = u(batch, times)
    calls = u.step.calls
    torch.testing.assert_close(calls[1][0], batch.state + 1.0)
    torch.testing.assert_close(calls[2][0], batch.state + 2.0)
    assert [c[1] for c in calls] == [[0.0, 24.0], [6.0, 30.0], [12.0, 36.0]]
    assert [c[2] for c in calls] == [[6.0, 30.0], [12.0, 36.0], [18.0, 42.0]]
    area = torch.as_tensor(u.area).flatten(0, 1).expand(2, -1, -1)
    pred0 = torch.cat([batch.state + 1.0, batch.state[:, :1]], 1)
    want = area_weighted_mse(pred0.flatten(2, 3), batch.target[:, 0].flatten(2, 3), area, u.scale)
    torch.testing.assert_close(first, want)


def test_a_zero_lead_weight_drops_that_lead():
    batch, times = stub_batch(k=2), np.arange(10) * 6.0
    assert lead_weights([0.0, 1.0], 2).tolist() == [0.0, 1.0]
    both, _ = stub_unroll(lead_weights([], 2))(batch, times)
    second, first = stub_unroll(lead_weights([0.0, 1.0], 2))(batch, times)
    assert float(second) == pytest.approx(float(both) - float(first.mean()), rel=1e-6)


def test_the_climate_losses_add_their_weighted_terms():
    """The time-mean term is weight x k x the area-weighted L1 of the time means' gap (over
    std); the spectral term is zero for a prediction with the truth's power (the truth moved
    by a quarter turn: the same spectrum) and positive for a smoothed one."""
    from screamcast.grid import PhysicsGrid
    from screamcast.train.climate_losses import SpectralPower, spectral_loss

    grid = PhysicsGrid(4, 2)
    power = SpectralPower(grid, 6)
    std = torch.full((1, 3, 1, 1), 2.0)
    batch, times = stub_batch(k=2), np.arange(10) * 6.0
    plain, _ = stub_unroll(lead_weights([], 2))(batch, times)
    timed, _ = stub_unroll(lead_weights([], 2), (None, 0.0, 0.5, std))(batch, times)
    preds = torch.stack(
        [torch.cat([batch.state + j, batch.state[:, :1] + j - 1], 1) for j in (1, 2)], 1
    )
    gap = (preds.mean(1) - batch.target.mean(1)).abs() / 2.0  # (B, V, 6, n, n)
    area = torch.as_tensor(grid.area / grid.area.mean(), dtype=torch.float32)
    want = 0.5 * 2 * float((gap * area).mean())
    assert float(timed - plain) == pytest.approx(want, rel=1e-5)
    from screamcast.data.symmetry import cell_permutation

    x = batch.target[:, 0]
    turned = x.flatten(-3)[..., torch.as_tensor(cell_permutation(grid, 1, False))].view_as(x)
    assert float(spectral_loss(power, turned, x, std)) < 1e-4
    smooth = 0.5 * (x + turned)
    assert float(spectral_loss(power, smooth, x, std)) > 0.1
    with pytest.raises(ValueError, match="spectral_weight and time_mean_weight must be >= 0"):
        stub_unroll(lead_weights([], 2), (power, -1.0, 0.0, std))


def test_each_leads_spectrum_is_compared_with_its_own_truth():
    """The spectral term is the mean over leads of each lead's prediction against that lead's
    truth: with lead 1's truth 3 times lead 0's (9 times its power) it is the mean of the two
    leads' own losses, and not what comparing both with lead 0's truth would give."""
    from screamcast.grid import PhysicsGrid
    from screamcast.train.climate_losses import SpectralPower, spectral_loss

    power, std = SpectralPower(PhysicsGrid(4, 2), 6), torch.full((1, 3, 1, 1), 2.0)
    batch, times = stub_batch(k=2), np.arange(10) * 6.0
    batch = batch._replace(target=batch.target * torch.tensor([1.0, 3.0]).view(1, 2, 1, 1, 1, 1))
    plain, _ = stub_unroll(lead_weights([], 2))(batch, times)
    spectral, _ = stub_unroll(lead_weights([], 2), (power, 0.5, 0.0, std))(batch, times)
    preds = [torch.cat([batch.state + j, batch.state[:, :1] + j - 1], 1) for j in (1, 2)]
    own = [float(spectral_loss(power, preds[j], batch.target[:, j], std)) for j in (0, 1)]
    first = float(spectral_loss(power, preds[1], batch.target[:, 0], std))
    assert float(spectral - plain) == pytest.approx(0.5 * (own[0] + own[1]) / 2, rel=1e-5)
    assert abs(first - own[1]) > 0.1 * own[1]  # the two comparisons differ by far


class PreviousRecorder(Recorder):
    """A recorder of two input times: the previous state each step is handed, too."""

    def __init__(self):
        super().__init__()
        self.previous = []

    def __call__(self, state, t1s):
        self.previous.append(state.previous.detach().clone())
        return super().__call__(state, t1s)


def test_input_noise_moves_both_input_times_by_one_draw():
    """Training's input noise (0.5 x diff_std, here 1) moves t's fields and t - dt's by the
    same draw: the state's last change (x_t - x_{t-dt}) is the truth's, to rounding."""
    u, batch = stub_unroll(lead_weights([], 2)), stub_batch(k=2)
    u.step, u.input_noise = PreviousRecorder(), 0.5
    earlier = batch.state - 0.25 - torch.linspace(0, 1, 8).view(1, 1, 1, 1, 8)
    torch.manual_seed(1)
    u(batch._replace(state=torch.cat([batch.state, earlier], 1)), np.arange(10) * 6.0)
    noise = u.step.calls[0][0] - batch.state
    assert 0.45 < float(noise.std()) < 0.55
    torch.testing.assert_close(u.step.previous[0] - earlier, noise)
    torch.testing.assert_close(u.step.previous[1], u.step.calls[0][0])  # lead 1: lead 0's input


def test_a_stage_trains_with_the_climate_losses_and_the_symmetries(tiny_store, tmp_path):
    """The config keys reach the unroll: a 2-step stage with both climate losses and the
    symmetry augmentation trains; the crop objective refuses the augmentation."""
    from screamcast.train.loop import train

    run = tmp_path / "run"
    keys = ["unroll=global", "rollout_steps=2", "global_unroll.valid_samples=2", "steps=2",
            "global_unroll.spectral_weight=0.02", "global_unroll.time_mean_weight=0.2",
            "data.symmetry=true"]  # fmt: skip
    train(config(tiny_store, f"run_dir={run}", *keys))
    assert (run / "latest.pth").exists()
    with pytest.raises(ValueError, match="data.symmetry=true moves whole cubes"):
        train(config(tiny_store, f"run_dir={tmp_path / 'crops'}", "data.symmetry=true"))


def test_the_spectral_power_of_a_harmonic_is_its_degree():
    from screamcast.grid import PhysicsGrid
    from screamcast.train.climate_losses import SpectralPower

    grid = PhysicsGrid(16, 2)
    lat = np.deg2rad(grid.lat)
    p3 = np.sqrt(7) * 0.5 * (5 * np.sin(lat) ** 3 - 3 * np.sin(lat))  # 4pi-normalised Y_30
    power = SpectralPower(grid, 12)(torch.as_tensor(p3, dtype=torch.float32)).numpy()
    assert power[2] == pytest.approx(1.0, abs=1e-3)  # l = 3
    assert np.delete(power, 2).max() < 1e-5
