# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""GlobalStepper's inputs: the tiles' insolation and position features are the training crops'."""

import numpy as np
import pytest
import torch
import xarray as xr

from screamcast.data.dataset import CropDataset
from screamcast.data.forcing import SOLAR_CONSTANT, insolation
from screamcast.data.stats import Stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.model.pipeline import Pipeline, input_channels
from screamcast.model.unet import UNet
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.stepper import GlobalStepper

PROG, STATIC = ["u", "v"], ["orography"]


def stepper(layout: TileLayout, solar_time: bool = False, metric: bool = False) -> GlobalStepper:
    names = PROG + STATIC
    stats = Stats({v: 0.0 for v in names}, {v: 1.0 for v in names}, {v: 1.0 for v in names})
    net = UNet(input_channels(len(PROG), len(STATIC), solar_time, metric), len(PROG), 8, 1)
    n = layout.n
    pipeline = Pipeline(net, stats, PROG, [], STATIC, solar_time=solar_time, grid_metric=metric)
    return GlobalStepper(pipeline, layout, np.zeros((1, 6, n, n)))


@pytest.mark.parametrize("solar_time, metric", [(False, False), (True, True)])
def test_tile_forcing_equals_the_training_crops_bit_for_bit(tiny_store, solar_time, metric):
    """Crops of size tile + 2*halo that sit on a tile get the same insolation (and local solar
    time) and position features (and the grid's metric), to the bit, as the rollout computes
    for that tile on its device."""
    layout = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    T, m, S = layout.tile, layout.tiles_per_side, layout.size
    times = xr.open_zarr(tiny_store, chunks=None)["time"].values
    data = CropDataset(
        str(tiny_store),
        layout,
        PROG,
        [],
        STATIC,
        crop=S,
        steps=1,
        samples=400,
        in_memory=True,
        times=times,
        solar_time=solar_time,
        grid_metric=metric,
    )
    step = stepper(layout, solar_time, metric)
    on_a_tile = [i for i in range(len(data)) if data.draw(i)[2] % T == data.draw(i)[3] % T == 0]
    assert len(on_a_tile) >= 5
    for i in on_a_tile:
        t, f, oy, ox = data.draw(i)
        tile = (f * m + oy // T) * m + ox // T  # tiles are (face, row, column)-major
        crop = data[i]
        got = step.forcing(times[t], times[t + 1], slice(tile, tile + 1))[0]  # (2 Fc, S, S)
        assert torch.equal(got, crop.forcing.flatten(0, 1)), (t, f, oy, ox)
        assert got.shape[0] == (6 if solar_time else 2)
        assert crop.static.shape[0] == 1 + (8 if metric else 4)
        assert torch.equal(step.static_tiles[tile, 1:], crop.static[1:])  # position features


def test_tile_forcing_is_the_insolation_of_the_tile_pixels():
    """Against the float64 insolation of the tiles' own lat/lon (the features are float32)."""
    layout = TileLayout(PhysicsGrid.for_face_size(24), tile=8, halo=4)
    step = stepper(layout)
    geo = ExtendedFaceGeometry(layout)
    pos = layout.tile_pixel_positions()  # (n_tiles, S, S)
    lat, lon = geo.lat.reshape(-1)[pos], geo.lon.reshape(-1)[pos]
    t0, t1 = np.datetime64("2020-06-21T05:00"), np.datetime64("2020-06-21T06:00")
    want = insolation(np.array([t0, t1]), lat, lon).transpose(1, 0, 2, 3) / SOLAR_CONSTANT
    got = step.forcing(t0, t1)  # (n_tiles, 2, S, S)
    assert got.shape == want.shape and got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-6)
    assert 0.2 < float((got > 0).float().mean()) < 0.8  # day and night both present
    torch.testing.assert_close(step.forcing(t0, t1, slice(10, 20)), got[10:20], rtol=0, atol=0)


def test_the_reassembly_flags_map_onto_one_choice():
    from screamcast.rollout.stepper import Reassembly

    assert Reassembly.from_flags(False, False) is Reassembly.CROP
    assert Reassembly.from_flags(True, False) is Reassembly.INTRA_FACE
    both = Reassembly.from_flags(True, True)
    assert both is Reassembly.CROSS_FACE and both.halo_adjoint and both.cross_face
    with pytest.raises(
        ValueError, match="stepper.halo_adjoint_cross_face requires stepper.halo_adjoint"
    ):
        Reassembly.from_flags(False, True)


def test_auto_precision_is_bf16_on_cuda_and_on_cpus_with_amx_bf16(tmp_path, monkeypatch):
    """``auto`` is the fast arithmetic where the hardware has it (an output records which,
    and its resume keeps it: tests/rollout/test_inference_settings.py)."""
    from screamcast.rollout import stepper as st

    amx, plain = tmp_path / "amx", tmp_path / "plain"
    amx.write_text("processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n")
    plain.write_text("processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16\n")
    assert st.cpu_has_amx_bf16(str(amx)) and not st.cpu_has_amx_bf16(str(plain))
    assert not st.cpu_has_amx_bf16(str(tmp_path / "absent"))  # unreadable: fp32
    for has, want in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(st, "cpu_has_amx_bf16", lambda has=has: has)
        assert st.fastest_cpu_precision() == want
        assert st.resolve_precision("auto", "cpu") == want
        assert st.resolve_precision("auto", "cuda") == "bf16"
        assert st.resolve_precision("fp32", "cuda") == "fp32"
        assert st.resolve_precision("bf16", "cpu") == "bf16"
    with pytest.raises(ValueError, match="precision must be one of auto, bf16, fp32"):
        st.resolve_precision("fp16", "cpu")


@pytest.mark.parametrize(
    "value, key",
    [(0, "batch_size"), ("fp16", "precision"), ("hann", "halo_adjoint_window")],
)
def test_the_stepper_checks_its_settings_as_the_config_does(value, key):
    """The stepper takes the inference config's ``stepper`` section itself (one stepper
    config): made in code with a bad value it is refused as the config's validation refuses
    it (one check), naming the key, before anything is built."""
    from screamcast.config.inference import InferenceConfig, StepperSection
    from screamcast.config.strict import ConfigError
    from screamcast.rollout.stepper import GlobalStepper

    section = StepperSection(halo_adjoint=True, **{key: value})  # the window needs it
    with pytest.raises(ConfigError) as made:
        GlobalStepper(None, None, None, section)
    assert made.value.keys == (f"stepper.{key}",)
    assert made.value.template.startswith(f"{{stepper.{key}}} must be")
    keys = {"checkpoint.path": "c", "initial_condition.data": "d", "output.path": "o"}
    config = InferenceConfig.from_keys(keys | {f"stepper.{key}": value})
    config.stepper.halo_adjoint = True
    with pytest.raises(ConfigError) as validated:
        config.validate()
    assert validated.value.template == made.value.template


def test_a_rank_builds_only_its_own_tiles_inputs_and_they_are_the_globes():
    """A stepper for some tiles (one rank's block) holds the inputs of those tiles only:
    the static fields with their halos as the gather makes them and the position features,
    equal bit for bit to the whole globe's for the same tiles."""
    layout = TileLayout(PhysicsGrid.for_face_size(16), tile=8, halo=4)
    n = layout.n
    static = np.random.default_rng(0).normal(size=(1, 6, n, n)).astype(np.float32)
    names = PROG + STATIC
    stats = Stats({v: 0.0 for v in names}, {v: 1.0 for v in names}, {v: 1.0 for v in names})
    net = UNet(input_channels(len(PROG), len(STATIC), False, True), len(PROG), 8, 1)
    pipeline = Pipeline(net, stats, PROG, [], STATIC, grid_metric=True)
    whole = GlobalStepper(pipeline, layout, static)
    plan = ExchangePlan.build(layout, 7, 12)  # rank 7 of 12: half of face 3
    mine = plan.block.tiles(layout.tiles_per_side)
    part = GlobalStepper(pipeline, layout, static, plan=plan)
    assert mine.tolist() == [14, 15]
    assert part.static_tiles.shape == (2, 1 + 8, layout.size, layout.size)
    assert torch.equal(part.static_tiles, whole.static_tiles[mine])
    gathered = whole.op.gather(torch.as_tensor(static)[None])  # (n_tiles, 1, S, S)
    assert torch.equal(whole.static_tiles[:, :1], gathered)


MODES = [(False, False, "uniform"), (True, False, "cosine"), (True, True, "uniform")]


@pytest.mark.parametrize("adjoint, cross, window", MODES)
def test_one_rank_is_the_one_block_case_and_equals_the_halo_operator(adjoint, cross, window):
    """On one rank the stepper runs the block operator of one block (the whole cube, nothing
    exchanged); its gather and each reassembly equal the single-rank halo operator's bit for
    bit, so no rank count has a path of its own."""
    layout = TileLayout(PhysicsGrid.for_face_size(32), tile=8, halo=4)
    s = stepper(layout)
    s.halo_adjoint, s.cross_face, s.window = adjoint, cross, window
    x = torch.randn(2, 6, 32, 32, generator=torch.Generator().manual_seed(3))
    t0, t1 = np.datetime64("2000-06-01T00"), np.datetime64("2000-06-01T06")
    tiles = s.op.gather(x[None])  # (n_tiles, C, S, S), the halo operator's
    assert torch.equal(s.block.gather(x), tiles)
    y = s._forward(tiles, t0, t1)  # (n_tiles, C + D, S, S)
    want = s.op.adjoint(y, cross, window)[0] if adjoint else s.op.crop(y)[0]
    assert torch.equal(s.step(x, t0, t1), want)
    assert s.block.plan.recv_halo == {} and s.block.exchange.sent_bytes == 0
