# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest

from screamcast.data.crop_sampler import DRAW_BLOCK, CropSampler, time_range
from screamcast.data.region_sampler import RegionPlan


def test_draws_are_a_function_of_seed_epoch_and_index_in_range():
    """Any order, any process: the same draw; another epoch another, fixed ignores it; every
    origin leaves room for the crop and every start time for its targets."""
    a, b = CropSampler(20, 12, 3, 9, seed=4), CropSampler(20, 12, 3, 9, seed=4)
    order = (5, 700, 5, 255, DRAW_BLOCK)  # across blocks of draws, out of order
    first = [a.draw(i) for i in order]
    assert first == [b.draw(i) for i in reversed(order)][::-1] and first[0] == first[2]
    assert len(set(first)) == 4
    assert a.draw(5, epoch=1) != a.draw(5) and a.draw(5, epoch=1) == b.draw(5, epoch=1)
    fixed = CropSampler(20, 12, 3, 9, seed=4, fixed=True)
    assert fixed.draw(5, epoch=7) == fixed.draw(5)
    draws = np.array([a.draw(i) for i in range(2 * DRAW_BLOCK)])  # (N, 4)
    assert draws[:, 0].min() == 3 and draws[:, 0].max() == 8
    assert draws[:, 1].min() == 0 and draws[:, 1].max() == 5
    assert draws[:, 2:].min() == 0 and draws[:, 2:].max() == 20 - 12


def test_regions_group_each_ranks_crops_into_its_own_windows():
    """With regions, rank r's share of each global batch comes in windows of ``window *
    per_region`` crops cut from at most ``window`` regions (what lets a region be read once),
    and differs from the other rank's."""
    plan = RegionPlan.balanced(span=9, crop=12, stride=4, per_region=4, window=2)
    sampler = CropSampler(20, 12, 0, 6, seed=1, regions=plan)
    G, world, per = 8, 2, 2 * 4
    mine = [[], []]  # each rank's draws, in its own order
    for i in range(4 * G):
        mine[i % G % world].append(sampler.draw(i, shard=(G, world)))
    for draws in mine:
        assert len(draws) == 16
        for w in range(0, 16, per):
            regions = {
                (t, f, oy // plan.stride, ox // plan.stride) for t, f, oy, ox in draws[w : w + per]
            }
            assert len(regions) <= plan.window
    assert mine[0] != mine[1]


def test_a_config_time_range_is_resolved_and_refused_by_its_key():
    """From the end, 0 as the end; a range without room for one sample is refused naming the
    key (a one-time store, a range the wrong way round), not a division by zero later."""
    assert time_range([0, -5], 17) == (0, 12) and time_range([-5, 0], 17) == (12, 17)
    assert time_range([0, -15], 17, steps=1) == (0, 2)
    with pytest.raises(ValueError, match=r"data.train_range=\[0, -16\] selects times \[0, 1\)"):
        time_range([0, -16], 17, 1, "data.train_range")
    with pytest.raises(ValueError, match=r"\[5, 3\) of the 17 of s.zarr: a 2-step sample needs 3"):
        time_range([5, 3], 17, 2, "data.valid_range", "s.zarr")
    with pytest.raises(ValueError, match=r"times \[0, -4\) of the 1"):
        time_range([0, -5], 1, 1)


def test_starts_keep_every_window_inside_one_run():
    """A store of two runs (times 0-7 and 8-19), 2-step windows: starts 0-5 and 8-17 only,
    uniformly; without segments the draws are the old ones, bit for bit."""
    from screamcast.data.cube_samples import window_starts

    starts = window_starts(0, 20, 2, [(0, 8), (8, 20)])
    plain = CropSampler(20, 12, 0, 18, seed=1)
    runs = CropSampler(20, 12, 0, 18, seed=1, starts=starts)
    draws = np.array([runs.draw(i) for i in range(4 * DRAW_BLOCK)])
    assert set(draws[:, 0].tolist()) == set(starts.tolist())
    assert CropSampler(20, 12, 0, 18, seed=1, starts=np.arange(18)).draw(7) == plain.draw(7)
