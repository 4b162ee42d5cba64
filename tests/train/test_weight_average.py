# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The weights' moving average (``optim.ema_decay``): the numbers of its updates, what a
checkpoint holds (the average to roll out, the raw weights to resume) and a resume that
continues both exactly."""

import pytest
import torch

from screamcast import checkpoint_io as cio
from screamcast.train.weight_average import WeightAverage
from tests.train.test_loop import config, rows


def test_the_average_follows_its_ramped_rate_and_swaps_back_exactly():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    first = net.weight.detach().clone()
    average = WeightAverage(net, decay=0.9)
    expected = first.clone()
    for k in range(30):
        with torch.no_grad():
            net.weight.add_(1.0)
        rate = min(0.9, (1 + k) / (10 + k))  # 0.1, 0.18, ... then 0.9
        expected = rate * expected + (1 - rate) * net.weight.detach()
        average.update(net)
    torch.testing.assert_close(average.shadow["weight"], expected)
    raw = net.weight.detach().clone()
    with average.swapped(net) as kept:
        torch.testing.assert_close(net.weight.detach(), expected)
        assert torch.equal(kept["weight"], raw)
    assert torch.equal(net.weight.detach(), raw)  # the raw weights back, bit for bit
    with pytest.raises(ValueError, match="optim.ema_decay must be in"):
        WeightAverage(net, decay=1.0)


def test_a_checkpoint_holds_the_average_and_a_resume_continues_both(tiny_store, tmp_path):
    """``model`` (what the rollout reads) is the average, ``model_raw`` the optimizer's
    weights; 4 + 4 steps with a resume equal 8 steps in one run, bit for bit."""
    from screamcast.train.loop import train

    base = ["experiment=pytest", f"data.url={tiny_store}", "optim.ema_decay=0.8"]
    keys = [*base, "checkpoint_every=4", "keep_every=0", "valid_every=4"]
    train(config(*keys, "steps=8", f"run_dir={tmp_path / 'whole'}"))
    train(config(*keys, "steps=4", f"run_dir={tmp_path / 'cut'}"))
    train(config(*keys, "steps=8", f"run_dir={tmp_path / 'cut'}"))
    whole = cio.load_checkpoint(tmp_path / "whole" / "latest.pth")
    cut = cio.load_checkpoint(tmp_path / "cut" / "latest.pth")
    assert whole["ema_updates"] == cut["ema_updates"] == 8
    for part in ("model", "model_raw"):
        for key, value in whole[part].items():
            assert torch.equal(value, cut[part][key]), (part, key)
    moved = [k for k, v in whole["model"].items() if not torch.equal(v, whole["model_raw"][k])]
    assert moved  # the average is not the raw weights
    # the optimizer steps the same raw weights as without an average; validation judges the
    # average (a different loss)
    plain = [k for k in keys if k != "optim.ema_decay=0.8"]
    train(config(*plain, "steps=8", f"run_dir={tmp_path / 'plain'}"))
    ema_rows, plain_rows = rows(tmp_path / "whole"), rows(tmp_path / "plain")
    assert [r["train_loss"] for r in ema_rows] == [r["train_loss"] for r in plain_rows]
    pairs = zip(ema_rows, plain_rows, strict=True)
    valid = [(a["valid_loss"], b["valid_loss"]) for a, b in pairs if a["valid_loss"]]
    assert len(valid) == 2 and all(a != b for a, b in valid)


def test_the_average_lives_where_the_weights_train_and_a_resume_without_it_takes_the_raw(
    tiny_store, tmp_path
):
    """Under ``precision=bf16-true`` Fabric casts the weights after the model is built: the
    average follows them (it was made before and failed at its first update). A run resumed
    with the average off continues from the weights the optimizer stepped (``model_raw``),
    not from the average."""
    from screamcast.train.loop import train

    base = ["experiment=pytest", f"data.url={tiny_store}", "checkpoint_every=4", "keep_every=0"]
    keys = [*base, "valid_every=4", "optim.ema_decay=0.8"]
    train(config(*keys, "precision=bf16-true", "steps=2", f"run_dir={tmp_path / 'bf16'}"))
    saved = cio.load_checkpoint(tmp_path / "bf16" / "latest.pth")
    assert saved["ema_updates"] == 2
    assert all(
        v.dtype == torch.bfloat16 for v in saved["model_raw"].values() if v.is_floating_point()
    )
    train(config(*keys, "steps=8", f"run_dir={tmp_path / 'whole'}"))
    train(config(*keys, "steps=4", f"run_dir={tmp_path / 'cut'}"))
    train(config(*base, "valid_every=4", "steps=8", f"run_dir={tmp_path / 'cut'}"))
    whole = cio.load_checkpoint(tmp_path / "whole" / "latest.pth")["model_raw"]
    cut = cio.load_checkpoint(tmp_path / "cut" / "latest.pth")["model"]  # no average: raw
    for key, value in whole.items():
        assert torch.equal(value, cut[key]), key
