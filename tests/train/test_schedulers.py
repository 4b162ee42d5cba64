# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import pytest
import torch

from screamcast.config import SchedulerConfig
from screamcast.train.schedulers import build_scheduler
from screamcast.train.schedulers import dampened_cosine_with_hard_restarts as f


def test_single_cycle_anneals_from_base_to_floor():
    assert f(0, 100, 1e-4, cycles=1, min_lr=1e-6) == pytest.approx(1e-4)
    assert f(50, 100, 1e-4, cycles=1, min_lr=1e-6) == pytest.approx((1e-4 + 1e-6) / 2)
    assert f(100, 100, 1e-4, cycles=1, min_lr=1e-6) == pytest.approx(1e-6)


def test_warmup_restarts_and_damping():
    kw = dict(total=110, base_lr=1.0, warmup_steps=10, cycles=2, damping=0.5, min_lr=0.0)
    assert f(0, **kw) == pytest.approx(0.1) and f(9, **kw) == pytest.approx(1.0)
    assert f(10, **kw) == pytest.approx(1.0)  # first peak
    assert f(59, **kw) < 0.01  # end of the first cycle
    assert f(60, **kw) == pytest.approx(0.5)  # hard restart at half the peak
    assert f(85, **kw) == pytest.approx(0.25)


def test_scheduler_in_an_optimizer_and_unknown_name():
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1e-4)
    cfg = SchedulerConfig(name="dampened_cosine_with_hard_restarts", min_lr=1e-6)
    sched = build_scheduler(opt, cfg, 1e-4, 10)
    lrs = []
    for _ in range(10):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs[-1] == pytest.approx(1e-6) and all(
        a >= b for a, b in zip(lrs[:-1], lrs[1:], strict=True)
    )
    with pytest.raises(ValueError, match="scheduler.name='linear'"):
        build_scheduler(opt, SchedulerConfig(name="linear"), 1e-4, 10)


def test_a_constant_rate_warms_up_when_asked():
    """scheduler.warmup_steps was ignored by the constant schedule: a high rate from step 0 is
    what collapsed training on Held-Suarez data (docs/training.md)."""
    from screamcast.config import SchedulerConfig
    from screamcast.train.schedulers import lr_lambda

    warm = lr_lambda(SchedulerConfig(name="constant", warmup_steps=100), 1e-3, 1000)
    assert [warm(s) for s in (0, 49, 99, 100, 500)] == [0.01, 0.5, 1.0, 1.0, 1.0]
    assert lr_lambda(SchedulerConfig(name="constant"), 1e-3, 1000)(0) == 1.0
