# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's guard: each bound trips on a field that breaks it and on no other, the run
stops at the step it leaves physics naming the step, time, channel and value, and the output
records where and why while keeping the steps before."""

import numpy as np
import pytest
import torch

from screamcast.config.inference import GuardSection
from screamcast.grid import PhysicsGrid
from screamcast.rollout.guard import Guard

from .test_run_nudged import args, cli, open_out

AREA = torch.as_tensor(PhysicsGrid.for_face_size(8).area)  # (6, 8, 8)


def guard(action="stop", **bounds) -> Guard:
    return Guard(["a", "b"], [0.0, 10.0], [1.0, 2.0], AREA, GuardSection(action, **bounds))


def field(seed=0) -> torch.Tensor:
    """Channel a ~ N(0, 0.9), b ~ 10 + N(0, 1.5): inside every default bound."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, 6, 8, 8, generator=g) * torch.tensor([0.9, 1.5]).view(2, 1, 1, 1) + (
        torch.tensor([0.0, 10.0]).view(2, 1, 1, 1)
    )


def one_cell_at_31(y: torch.Tensor) -> torch.Tensor:
    y[1, 2, 3, 4] = 31.0  # b: 10.5 standard deviations from its mean, one cell of 384
    return y


def test_a_field_inside_the_bounds_passes():
    assert guard().check(field(), 1, "t1") is None


@pytest.mark.parametrize(
    "change, what, channel",
    [
        (
            lambda y: y.index_add_(0, torch.tensor([1]), torch.full((1, 6, 8, 8), 4.5)),
            "global mean",
            "b",
        ),
        (lambda y: y.mul_(torch.tensor([4.0, 1.0]).view(2, 1, 1, 1)), "spread", "a"),
        (one_cell_at_31, "largest departure from the training mean", "b"),
    ],
)
def test_each_bound_trips_on_the_channel_that_breaks_it(change, what, channel):
    y = change(field())
    trip = guard().check(y, 7, "0001-01-02 18:00:00")
    assert (trip.step, trip.time, trip.channel, trip.what) == (
        7,
        "0001-01-02 18:00:00",
        channel,
        what,
    )
    message = trip.message("out.zarr")
    assert f"at step 7 (0001-01-02 18:00:00): {channel}'s {what}" in message
    assert "out.zarr keeps the steps before it" in message


def test_the_measured_value_is_the_area_weighted_one():
    y = field()
    y[1] += 4.5  # global mean 14.5 > 10 + 2 x 2
    trip = guard().check(y, 1, "t")
    a = AREA.double()
    want = float((y[1].double() * a).sum() / a.sum())
    assert trip.value == pytest.approx(want, rel=1e-12)


def test_warn_lets_the_run_go_on_and_says_so_once(caplog):
    g = guard("warn")
    y = field()
    y[0] *= 4
    assert g.check(y, 1, "t1") is None and g.check(y, 2, "t2") is None
    assert len([r for r in caplog.records if "spread" in r.getMessage()]) == 1


def test_a_non_finite_value_stops_even_when_off():
    y = field()
    y[1, 0, 0, 0] = float("inf")
    trip = guard("off").check(y, 3, "t3")
    assert trip.channel == "b" and "turned non-finite at step 3 (t3) in b" in trip.message("o")


def test_a_run_that_blows_up_stops_at_its_first_wild_step(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """The network's last layer x 30: the state leaves the training statistics at step 1;
    the run stops there (exit 2), the output keeps the initial step and records why."""
    ckpt = torch.load(tiny_checkpoint, weights_only=True)
    last = [k for k in ckpt["model"] if k.endswith("weight")][-1]
    ckpt["model"][last] *= 30.0
    wild = tmp_path / "wild.pth"
    torch.save(ckpt, wild)
    path = tmp_path / "o.zarr"
    assert cli.main(args(wild, tiny_store, path, steps=6)) == 2
    err = capsys.readouterr().err
    assert "the state left physics at step 1 (2020-01-01 03:00:00)" in err
    ds = open_out(path)
    stopped = ds.attrs["stopped"]
    assert ds.attrs["complete_steps"] == 1 and stopped["step"] == 1
    assert stopped["channel"] in ds.data_vars and stopped["channel"] in err
    assert np.isfinite(ds.u.values[0]).all()
    # the same model with the guard off runs every step (what the guard saved the user from)
    free = tmp_path / "free.zarr"
    assert cli.main(args(wild, tiny_store, free, "--guard", "off", steps=6)) in (0, 2)
    assert open_out(free).attrs["complete_steps"] > 1


def ranged(lo, hi, action="stop", **bounds) -> Guard:
    """Channels a (mean 0, std 1) and b (mean 10, std 2) with training extremes lo, hi."""
    return Guard(
        ["a", "b"], [0.0, 10.0], [1.0, 2.0], AREA, GuardSection(action, **bounds), lo=lo, hi=hi
    )


def test_the_training_range_replaces_the_sigma_rule_where_it_is_recorded():
    """b's training range [-2, 40]: a cell at 31 (10.5 sigma, tripped by the sigma rule) is
    inside it; at 62 (40 + 0.5 x 42 = 61 is the edge) it trips, naming the range."""
    g = ranged([-4.0, -2.0], [4.0, 40.0])
    assert g.check(one_cell_at_31(field()), 1, "t") is None
    y = field()
    y[1, 2, 3, 4] = 62.0
    trip = g.check(y, 1, "t")
    assert (trip.channel, trip.what, trip.value) == ("b", "largest value", 62.0)
    assert "[-23, 61]" in trip.bound
    y[1, 2, 3, 4] = 60.5
    assert g.check(y, 1, "t") is None


def test_the_low_side_follows_its_own_extreme():
    """A sign-definite b (training range [5, 45], mean 10): a cell at -16 is 13 sigma below
    the mean and below 5 - 0.5 x 40 = -15; a cell at -14 is not."""
    g = ranged([-4.0, 5.0], [4.0, 45.0])
    y = field()
    y[1, 0, 1, 1] = -16.0
    trip = g.check(y, 1, "t")
    assert (trip.channel, trip.what, trip.value) == ("b", "smallest value", -16.0)
    y[1, 0, 1, 1] = -14.0
    assert g.check(y, 1, "t") is None


def test_a_constant_channel_is_given_its_sigma_as_width():
    """A channel constant 5 in training (lo = hi = 5, its std 1 as the statistics set it): a
    step's rounding of a few hundredths does not stop the run; the bound is 5 +- 0.5 x 1
    (sigma, not the zero width), so 5.4 passes and 5.6 trips, naming [4.5, 5.5]."""
    g = Guard(["c"], [5.0], [1.0], AREA, GuardSection(), lo=[5.0], hi=[5.0])
    y = torch.full((1, 6, 8, 8), 5.0)
    y[0, 0, 0, 0] = 5.02
    y[0, 1, 2, 3] = 4.97
    assert g.check(y, 1, "t") is None
    y[0, 3, 4, 5] = 5.4
    assert g.check(y, 1, "t") is None
    y[0, 3, 4, 5] = 5.6
    trip = g.check(y, 2, "t2")
    assert (trip.channel, trip.what, trip.value) == ("c", "largest value", pytest.approx(5.6))
    assert trip.bound.startswith("[4.5, 5.5]")


def test_the_sigma_rule_sees_a_cell_far_below_a_nonzero_mean():
    """Without extremes: b's mean is 10, a cell at -12 is 11 sigma below it."""
    y = field()
    y[1, 5, 0, 0] = -12.0
    trip = guard().check(y, 1, "t")
    assert (trip.channel, trip.what) == ("b", "largest departure from the training mean")
    assert trip.value == pytest.approx(22.0)


def test_the_spread_bound_uses_its_factor():
    """a's spread 0.9 x 2.5 = 2.25 sigma: over the default factor 2, under a factor of 3."""
    y = field()
    y[0] *= 2.5
    assert guard().check(y, 1, "t").what == "spread"
    assert guard(spread_factor=3.0).check(y, 1, "t") is None


def test_a_trip_says_how_to_go_on():
    trip = guard().check(one_cell_at_31(field()), 4, "t4")
    assert "--guard warn" in trip.message("o.zarr") and "guard.action: warn" in trip.message("o")


@pytest.mark.parametrize(
    "store", ["truth_sample.zarr", "initial_state.zarr"], ids=["truth_sample", "initial_state"]
)
def test_the_defaults_pass_every_time_of_the_shipped_held_suarez_truths(store):
    """The shipped emulator's statistics (no extremes: the sigma rule) over every time."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "scripts" / "research"))
    from guard_margins import margins

    found = margins(str(root / "benchmarks/held_suarez/emulator.pth"),
                    str(root / "benchmarks/held_suarez" / store), every=1)  # fmt: skip
    assert found["first_trip_time_index"] == {}


def test_the_defaults_pass_every_time_of_the_store_a_model_learnt_from(tiny_checkpoint, tiny_store):
    """A model's own training data never trips its guard (its extremes are the bounds' core)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "research"))
    from guard_margins import margins

    found = margins(str(tiny_checkpoint), str(tiny_store), every=1)
    assert found["first_trip_time_index"] == {} and len(found["worst"]) >= 3
