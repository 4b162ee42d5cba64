# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The step's correctors: each holds what it says, to rounding, against an independent
area-weighted mean; bad entries fail naming the entry and key; a plug-in in its own file."""

import numpy as np
import pytest
import torch

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.rollout_step import tile_sums
from screamcast.step.correctors import (
    CorrectorConfigError,
    StepGeometry,
    apply_correctors,
    build_correctors,
)

CHANNELS = ("PS", "T[0]", "T[1]", "U[0]", "precip")


@pytest.fixture(scope="module")
def geometry():
    area = PhysicsGrid.for_face_size(8).area  # (6, 8, 8), unequal cells
    return StepGeometry(CHANNELS, torch.as_tensor(area, dtype=torch.float32))


def area_mean(x: np.ndarray, area: np.ndarray) -> float:
    return float((x.astype(np.float64) * area).sum() / area.sum())


def fields(seed: int, B: int = 2) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    base = torch.tensor([1e5, 250.0, 280.0, 10.0, 1e-4]).view(1, -1, 1, 1, 1)
    spread = torch.tensor([1e3, 10.0, 10.0, 5.0, 1e-4]).view(1, -1, 1, 1, 1)
    return base + spread * torch.randn(B, len(CHANNELS), 6, 8, 8, generator=g)


def test_dry_mass_holds_the_global_mean_of_surface_pressure(geometry):
    (fix,) = build_correctors([{"type": "dry_mass"}], geometry)
    before, after = fields(0)[:, :3], fields(1)
    fixed, done = fix(before, after)
    area = geometry.area.double().numpy()
    for b in range(2):
        want = area_mean(before[b, 0].numpy(), area)
        assert area_mean(fixed[b, 0].detach().numpy(), area) == pytest.approx(want, rel=1e-7)
        assert area_mean(after[b, 0].numpy(), area) != pytest.approx(want, rel=1e-5)
        shift = want - area_mean(after[b, 0].numpy(), area)
        assert float(done["dry_mass_shift"][b]) == pytest.approx(shift, rel=1e-3)
    torch.testing.assert_close(fixed[:, 1:], after[:, 1:], rtol=0, atol=0)  # only PS moved


def test_mean_temperature_holds_the_layer_weighted_mean(geometry):
    (fix,) = build_correctors(
        [{"type": "mean_temperature", "config": {"weights": [1.0, 3.0]}}], geometry
    )
    before, after = fields(2), fields(3)
    fixed, _ = fix(before, after)
    area = geometry.area.double().numpy()

    def column_mean(x):
        return (area_mean(x[0], area) + 3 * area_mean(x[1], area)) / 4

    for b in range(2):
        got = column_mean(fixed[b, 1:3].detach().numpy())
        assert got == pytest.approx(column_mean(before[b, 1:3].numpy()), rel=1e-7)
    # one shift for both layers: their difference (the stratification) is the prediction's
    torch.testing.assert_close(fixed[:, 1] - fixed[:, 2], after[:, 1] - after[:, 2])
    torch.testing.assert_close(fixed[:, [0, 3, 4]], after[:, [0, 3, 4]], rtol=0, atol=0)


def test_bounds_clip_and_record_the_share_clipped(geometry):
    (fix,) = build_correctors(
        [{"type": "bounds", "config": {"bounds": {"U[0]": [None, 12.0], "precip": [0, None]}}}],
        geometry,
    )
    after = fields(4)
    fixed, done = fix(None, after)
    assert float(fixed[:, 3].max()) == 12.0 and float(fixed[:, 4].min()) >= 0.0
    over = (after[:, 3] > 12).flatten(1).float().mean(1)
    under = (after[:, 4] < 0).flatten(1).float().mean(1)
    torch.testing.assert_close(done["bounds_clipped"], torch.maximum(over, under))


def test_correctors_pass_gradients(geometry):
    specs = [{"type": "dry_mass"}, {"type": "mean_temperature"}]
    after = fields(5).requires_grad_()
    fixed, _ = apply_correctors(build_correctors(specs, geometry), fields(6)[:, :3], after)
    fixed[:, 0, 0].sum().backward()  # PS on face 0: its fix depends on every cell's PS
    assert after.grad[:, 0, 1:].abs().sum() > 0 and after.grad[:, 1:3].abs().sum() == 0


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"type": "dry_mas"}, "step corrector 'dry_mas' is not registered"),
        (
            {"type": "dry_mass", "config": {"varable": "PS"}},
            "correctors\\[0\\]: unknown key 'varable'",
        ),
        ({"type": "dry_mass", "config": {"variable": "PSL"}}, "no channel 'PSL'"),
        ({"type": "mean_temperature", "config": {"weights": [1.0]}}, "2 non-negative weights"),
        (
            {"type": "mean_temperature", "config": {"weights": [3.0, -1.0]}},
            r"correctors\[0\]\.weights: 2 non-negative weights .*T\[0\], T\[1\].*\[3\.0, -1\.0\]",
        ),
        ({"type": "bounds", "config": {"bounds": {"PS": [2, 1]}}}, "lower <= upper"),
        ({"kind": "dry_mass"}, "a corrector is \\{type: NAME"),
    ],
)
def test_bad_entries_name_what_is_wrong(geometry, entry, message):
    with pytest.raises(CorrectorConfigError, match=message):
        build_correctors([entry], geometry)


def test_a_plug_in_with_its_own_parameter_from_one_file(geometry, tmp_path, monkeypatch):
    """docs/extending.md's example, as a user writes it: one file outside the package."""
    (tmp_path / "my_fixers.py").write_text(
        "from dataclasses import dataclass\n"
        "from screamcast.step.correctors import register_step_corrector\n\n"
        "@dataclass(frozen=True)\n"
        "class DampConfig:\n"
        "    factor: float = 0.5\n\n"
        "@register_step_corrector('damp_winds', DampConfig)\n"
        "class DampWinds:\n"
        "    name = 'damp_winds'\n"
        "    def __init__(self, config, geometry, where):\n"
        "        self.i, self.f = geometry.index('U[0]', where), config.factor\n"
        "    def __call__(self, before, after):\n"
        "        scale = after.new_ones(after.shape[1]); scale[self.i] = self.f\n"
        "        return after * scale.view(1, -1, 1, 1, 1), {}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = {"type": "my_fixers:damp_winds", "config": {"factor": 0.25}}
    (fix,) = build_correctors([spec], geometry)
    after = fields(7)
    torch.testing.assert_close(fix(None, after)[0][:, 3], after[:, 3] * 0.25)


def test_a_bounds_pair_with_equal_ends_pins_the_channel(geometry):
    """[1, 1] is a valid pair (lower <= upper): the channel is pinned at 1; [2, 1] is refused."""
    (fix,) = build_correctors(
        [{"type": "bounds", "config": {"bounds": {"U[0]": [1, 1]}}}], geometry
    )
    fixed, _ = fix(None, fields(7))
    assert torch.all(fixed[:, 3] == 1.0)
    with pytest.raises(CorrectorConfigError, match=r"lower <= upper, got \[2, 1\]"):
        build_correctors([{"type": "bounds", "config": {"bounds": {"U[0]": [2, 1]}}}], geometry)


def test_tile_sums_are_each_tiles_own_and_the_same_on_any_rank_count():
    """Each entry of ``TileSums.of`` is the sum of one 8 x 8 tile's pixels (face-major, then
    rows, then columns), checked against the tiles cut by hand; the ranks' parts (2, 6 and
    24 blocks of a 32 x 32 cube) put the same sums in the same places, to the bit, so their
    total over the ranks (zeros at the other ranks' tiles) is one rank's."""
    layout = TileLayout(PhysicsGrid.for_face_size(32), 8, 4)
    g = torch.Generator().manual_seed(3)
    area = torch.as_tensor(layout.grid.area, dtype=torch.float32).double()
    x = (1e5 + 1e3 * torch.randn(2, 6, 32, 32, generator=g)).double() * area  # as the means
    whole = tile_sums(layout, None).of(x)  # (2, 96)
    by_hand = x.reshape(2, 6, 4, 8, 4, 8).permute(0, 1, 2, 4, 3, 5).reshape(2, 96, 64)
    torch.testing.assert_close(whole, by_hand.sum(-1), rtol=1e-15, atol=0)
    counts = torch.arange(6 * 32 * 32, dtype=torch.float64).view(1, 6, 32, 32) % 7
    # face 0's tiles (0, 0) .. (0, 3), (1, 0): sum((f 1024 + y 32 + x) % 7) over its pixels
    assert tile_sums(layout, None).of(counts)[0, :5].tolist() == [189, 190, 191, 192, 193]
    for world in (2, 6, 24):
        total = torch.zeros_like(whole)
        for plan in ExchangePlan.build_all(layout, world):
            region = plan.block.region(layout.tile)
            total += tile_sums(layout, region).of(x[(slice(None), *region)])
        assert torch.equal(total, whole), world
