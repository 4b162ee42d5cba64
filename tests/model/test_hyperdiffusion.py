# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The predicted state's grid-scale dissipation: each Fourier mode loses what the operator's
symbol says, constants and the interior of a tile see true neighbours, and the pipeline
applies it to the prognostic state only."""

import math

import numpy as np
import pytest
import torch

from screamcast.data.stats import Stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator
from screamcast.model.hyperdiffusion import check_nu, hyperdiffuse, laplacian
from screamcast.model.pipeline import Pipeline


def symbol(kx: float, ky: float) -> float:
    """What one step of ``x - nu lap(lap(x))`` multiplies the mode ``(kx, ky)`` by, per nu."""
    return (4 * math.sin(kx / 2) ** 2 + 4 * math.sin(ky / 2) ** 2) ** 2


@pytest.mark.parametrize("kx, ky", [(math.pi, math.pi), (math.pi, 0.0), (2 * math.pi / 16, 0.0)])
def test_each_mode_loses_what_the_symbol_says(kx, ky):
    S, nu = 24, 1 / 200
    i = torch.arange(S, dtype=torch.float64)
    mode = torch.cos(kx * i[None, :] + ky * i[:, None])[None, None]  # (1, 1, S, S)
    got = hyperdiffuse(mode, nu)[..., 4:-4, 4:-4]  # the interior: away from the replicated edge
    want = (1 - nu * symbol(kx, ky)) * mode[..., 4:-4, 4:-4]
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    if (kx, ky) == (math.pi, math.pi):
        assert float(got[0, 0, 0, 0] / mode[0, 0, 4, 4]) == pytest.approx(1 - 64 * nu)


def test_a_constant_and_a_plane_pass_unchanged_and_nu_zero_is_the_identity():
    y, x = torch.meshgrid(torch.arange(10.0), torch.arange(10.0), indexing="ij")
    plane = (3.0 + 0.5 * x - 0.25 * y)[None, None]
    assert torch.equal(laplacian(torch.full((1, 2, 10, 10), 7.0)), torch.zeros(1, 2, 10, 10))
    torch.testing.assert_close(hyperdiffuse(plane, 0.01)[..., 2:-2, 2:-2], plane[..., 2:-2, 2:-2])
    assert hyperdiffuse(plane, 0.0) is plane


def test_on_the_cube_a_tile_interior_is_damped_as_on_its_extended_face():
    """Through the rollout's gather (halo 4 >= 2), the cropped interior of each tile equals the
    operator applied to the whole extended face: tile edges never reach the interior."""
    layout = TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=4)
    op = HaloOperator(layout)
    x = torch.randn(1, 3, 6, 8, 8, generator=torch.Generator().manual_seed(0))
    tiles = op.gather(x)  # (24, 3, 12, 12)
    per_tile = op.crop(hyperdiffuse(tiles, 0.01))[0]  # (3, 6, 8, 8)
    H, n = layout.halo, layout.n
    idx, w = layout.extended_sources()  # (k, 6 P P)
    flat = x[0].reshape(3, -1).double().numpy()  # (3, 6 n n)
    faces = (flat[:, idx] * w).sum(1).reshape(3, 6, layout.padded, layout.padded)
    whole = hyperdiffuse(torch.as_tensor(faces).permute(1, 0, 2, 3), 0.01)  # (6, 3, P, P)
    want = whole[..., H : H + n, H : H + n].permute(1, 0, 2, 3).float()  # (3, 6, n, n)
    torch.testing.assert_close(per_tile, want, rtol=1e-5, atol=1e-5)
    assert float((per_tile - x[0]).abs().max()) > 0.05  # it did something


def test_nu_is_checked_naming_the_key():
    assert check_nu(0) == 0.0 and check_nu(1 / 64) == 1 / 64
    for bad in (-1e-3, 0.02, True, "0.01"):
        with pytest.raises(ValueError, match=r"model.hyperdiffusion: a number in \[0, 1/64\]"):
            check_nu(bad)


def test_the_pipeline_damps_its_prognostic_state_only():
    prog, diag = ["u", "t"], ["precip"]
    stats = Stats(
        mean={v: 0.0 for v in prog + diag},
        std={v: 1.0 for v in prog + diag},
        diff_std={v: 1.0 for v in prog},
    )
    net = torch.nn.Conv2d(2 + 4, 3, 1)  # state + position channels -> 2 prognostic + 1 diag
    torch.nn.init.zeros_(net.weight)
    torch.nn.init.constant_(net.bias, 0.0)
    i = torch.arange(12.0)
    chk = ((-1.0) ** (i[:, None] + i[None, :]))[None, None]  # (1, 1, 12, 12)
    state = torch.cat([chk, 2 * chk], 1)  # (1, 2, 12, 12)
    static = torch.zeros(1, 4, 12, 12)  # the position features
    plain = Pipeline(net, stats, prog, diag, [], insolation=False)
    damped = Pipeline(net, stats, prog, diag, [], insolation=False, hyperdiffusion=1 / 128)
    no_forcing = torch.zeros(1, 0, 12, 12)
    a, b = plain(state, no_forcing, static), damped(state, no_forcing, static)
    torch.testing.assert_close(a[:, :2], state)  # zero increment: persistence
    inner = (..., slice(3, -3), slice(3, -3))
    torch.testing.assert_close(b[:, :2][inner], 0.5 * state[inner])  # 1 - 64 / 128
    torch.testing.assert_close(b[:, 2:], a[:, 2:])  # diagnostics untouched
    with pytest.raises(ValueError, match="model.hyperdiffusion"):
        Pipeline(net, stats, prog, diag, [], insolation=False, hyperdiffusion=0.5)
    assert np.isclose(damped.hyperdiffusion, 1 / 128)
