# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import pytest
import torch

from screamcast.data.stats import Stats
from screamcast.model.pipeline import Pipeline, input_channels
from screamcast.model.unet import UNet

PROG, DIAG, STATIC = ["u", "t"], ["precip"], ["orog"]


def stats():
    names = PROG + DIAG + STATIC
    return Stats(
        mean={v: float(i) for i, v in enumerate(names)},
        std={v: 2.0 for v in names},
        diff_std={v: 0.5 for v in names},
    )


def pipeline(relu=False, width=8):
    net = UNet(input_channels(2, 1), 3, width=width, levels=2)
    return Pipeline(net, stats(), PROG, DIAG, STATIC, do_precip_relu=relu)


def inputs(S=16, B=2):
    g = torch.Generator().manual_seed(0)
    return (
        torch.randn(B, 2, S, S, generator=g),
        torch.rand(B, 2, S, S, generator=g),
        torch.randn(B, 5, S, S, generator=g),
    )


@pytest.mark.parametrize("S", [16, 32, 40])
def test_fully_convolutional_on_every_crop_size(S):
    y = pipeline()(*inputs(S))
    assert y.shape == (2, 3, S, S)


def test_untrained_model_is_persistence():
    state, forcing, static = inputs()
    y = pipeline()(state, forcing, static)
    torch.testing.assert_close(y[:, :2], state)
    torch.testing.assert_close(y[:, 2], torch.full_like(y[:, 2], 2.0))  # the precip mean


def test_precip_relu_and_inference_clipping():
    p = pipeline()
    with torch.no_grad():
        p.net.head.bias[2] = -5.0  # a head stuck below zero
    state, forcing, static = inputs()
    assert float(p(state, forcing, static)[:, 2].max().detach()) < 0  # unclipped in training
    assert float(p.predict(state, forcing, static)[:, 2].min()) == 0.0
    relu = pipeline(relu=True)
    relu.load_state_dict(p.state_dict())
    out = relu(state, forcing, static)
    assert float(out[:, 2].max().detach()) == 0.0
    out.sum().backward()  # the ReLU'd head gets no gradient: why it is off by default
    assert float(relu.net.head.bias.grad[2]) == 0.0


def test_bad_crop_size_is_refused():
    with pytest.raises(ValueError, match="must be divisible by 2\\*\\*levels = 4"):
        pipeline()(*inputs(18))


def test_stats_travel_in_the_state_dict():
    sd = pipeline().state_dict()
    assert float(sd["mean"][0, 1]) == 1.0 and float(sd["diff_std"][0, 0]) == 0.5
