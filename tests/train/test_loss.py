# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The k-step loss: what each step sees, what it is scored on, where gradients flow."""

import numpy as np
import pytest
import torch

from screamcast.data.batch import CropBatch, first_lead
from screamcast.model.state import State
from screamcast.model.stepper import CropStepper
from screamcast.train.loss import area_weighted_mse, rollout_loss


class Recorder(torch.nn.Module):
    """A stand-in network with a closed form: prognostic ``x -> a * x + 1`` and one diagnostic,
    the channel mean; it records the state each step was given."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.5))
        self.seen = []

    def loss_scale(self):
        return torch.tensor([1.0, 2.0, 4.0]).view(1, 3, 1, 1)

    def forward(self, state, forcing, static):
        self.seen.append(state.detach().clone())
        prog = self.a * state + 1  # (B, 2, S, S)
        return torch.cat([prog, prog.mean(dim=1, keepdim=True)], dim=1)  # (B, 3, S, S)


def batch(k=3, S=8, B=2):
    g = torch.Generator().manual_seed(0)
    return CropBatch(
        state=torch.randn(B, 2, S, S, generator=g),
        target=torch.randn(B, k, 3, S, S, generator=g),
        forcing=torch.zeros(B, k + 1, 1, S, S),
        static=torch.zeros(B, 0, S, S),
        area=0.5 + torch.rand(B, S, S, generator=g),
        time=torch.tensor([0, 5])[:B],  # the store's time index of each crop's state
    )


# the store's model times (6-hourly), which the batch's time indexes
TIMES = np.datetime64("2020-01-01T00") + np.arange(10) * np.timedelta64(6, "h")


def test_each_crop_steps_with_the_forcing_of_its_own_times():
    """The step's model times find each step's forcing among the batch's: lead j takes the
    forcing at t + j and t + j + 1 (a crop steps on the globe's contract, by model times)."""
    b = batch(k=3)
    forcing = torch.arange(4.0).view(1, 4, 1, 1, 1).expand(2, 4, 1, 8, 8)  # position j: j
    b = b._replace(forcing=forcing)
    seen = []

    class Forcings(Recorder):
        def forward(self, state, forcing, static):
            seen.append(forcing[:, :, 0, 0].tolist())  # (B, 2): t, t+1
            return super().forward(state, forcing, static)

    rollout_loss(Forcings(), b, TIMES, 0)
    assert seen == [[[j, j + 1]] * 2 for j in range(3)]
    when = TIMES[[[0, 1, 2, 3], [5, 6, 7, 8]]]  # (B, k + 1)
    stepper = CropStepper(Recorder(), forcing, b.static, when)
    with pytest.raises(ValueError, match="not times of this batch"):
        stepper.step(State(b.state, TIMES[[4, 4]]), TIMES[[5, 5]])
    with pytest.raises(ValueError, match="next time"):
        stepper.step(State(b.state, when[:, 0]), when[:, 2])


@pytest.mark.parametrize("halo", [0, 2])
def test_each_step_sees_its_prediction_inside_and_the_truth_on_the_ring(halo):
    b, net = batch(), Recorder()
    total, first = rollout_loss(net, b, TIMES, halo)
    assert len(net.seen) == 3
    torch.testing.assert_close(net.seen[0], b.state, rtol=0, atol=0)
    expected_total = 0.0
    state = b.state
    for j in range(3):
        pred = 0.5 * state + 1
        pred = torch.cat([pred, pred.mean(dim=1, keepdim=True)], dim=1)
        per_var = area_weighted_mse(pred, b.target[:, j], b.area, net.loss_scale())
        expected_total += per_var.mean()
        if j == 0:
            torch.testing.assert_close(first, per_var)
        nxt = pred[:, :2].clone()
        if halo:  # the lateral boundary: the truth, as the neighbour tiles give it
            nxt[..., :halo, :] = b.target[:, j, :2, :halo, :]
            nxt[..., -halo:, :] = b.target[:, j, :2, -halo:, :]
            nxt[..., :, :halo] = b.target[:, j, :2, :, :halo]
            nxt[..., :, -halo:] = b.target[:, j, :2, :, -halo:]
        if j < 2:
            torch.testing.assert_close(net.seen[j + 1], nxt, rtol=0, atol=0)
        state = nxt
    torch.testing.assert_close(total, expected_total)


def test_gradients_flow_through_the_interior_of_the_unroll_only():
    """d loss / d a: through every step's prediction of the interior; the ring is reset to
    the truth, which carries no gradient. Checked against a finite difference."""
    b = batch(k=2)
    net = Recorder()
    total, _ = rollout_loss(net, b, TIMES, 2)
    total.backward()
    eps = 1e-3
    with torch.no_grad():
        net.a += eps
        up, _ = rollout_loss(net, b, TIMES, 2)
        net.a -= 2 * eps
        down, _ = rollout_loss(net, b, TIMES, 2)
    torch.testing.assert_close(net.a.grad, (up - down) / (2 * eps), rtol=1e-3, atol=1e-4)
    # without the unroll's dependence (k = 1) the gradient differs: the second step counts
    net.a.grad = None
    one, _ = rollout_loss(net, first_lead(b), TIMES, 2)
    one.backward()
    assert abs(float(net.a.grad) - float((up - down) / (2 * eps))) > 1e-2


def test_variable_weights_replace_the_mean():
    b, net = batch(k=1), Recorder()
    w = torch.tensor([1.0, 0.0, 3.0])
    total, first = rollout_loss(net, b, TIMES, 0, weights=w)
    torch.testing.assert_close(total, (first * w).sum())
