# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The gather and the reassembly with gradients: the rollout's values bit for bit, and
gradients that are the operator's transposes (autograd's finite-difference check)."""

import pytest
import torch

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator
from screamcast.step import differentiable_halo as dh


@pytest.fixture(scope="module")
def op():
    return HaloOperator(TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=2))


def test_values_are_the_rollout_operators(op):
    x = torch.randn(2, 3, 6, 8, 8)
    torch.testing.assert_close(dh.gather(op, x), op.gather(x), rtol=0, atol=0)
    tiles = op.gather(x) * 1.5
    for cross in (False, True):
        got = dh.reassemble(op, tiles, True, cross, "cosine")
        want = op.adjoint(tiles, cross_face=cross, window="cosine")
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(dh.reassemble(op, tiles, False, False, "uniform"), op.crop(tiles))


def test_the_gathers_gradient_is_its_transpose(op):
    x = torch.randn(1, 2, 6, 8, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: dh.gather(op, v), (x,), eps=1e-6, atol=1e-8)


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("window", ["uniform", "cosine"])
def test_the_reassemblys_gradient_is_its_transpose(op, cross, window):
    tiles = torch.randn(op.n_tiles, 2, op.size, op.size, dtype=torch.float64, requires_grad=True)
    f = lambda t: dh.reassemble(op, t, True, cross, window)  # noqa: E731
    assert torch.autograd.gradcheck(f, (tiles,), eps=1e-6, atol=1e-8)


def test_a_gradient_crosses_a_cube_edge(op):
    """A loss on one face's pixels reaches its four neighbours' state through the halo: what
    training on crops with a truth ring never sees."""
    x = torch.randn(1, 1, 6, 8, 8, requires_grad=True)
    tiles = dh.gather(op, x)  # (24, 1, 8, 8)
    blur = torch.nn.functional.avg_pool2d(tiles, 3, stride=1, padding=1)  # a model's stencil
    y = dh.reassemble(op, blur, True, False, "cosine")
    y[0, 0, 0].sum().backward()  # a loss on face 0 only
    reached = x.grad[0, 0].abs().flatten(1).sum(1) > 0  # (6,)
    assert reached[0] and int(reached.sum()) == 5  # itself and its four neighbours
