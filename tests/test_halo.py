# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import numpy as np
import pytest
import torch

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.halo import HaloOperator, interpolate_ring


@pytest.fixture(scope="module")
def op():
    return HaloOperator(TileLayout(PhysicsGrid.for_face_size(24), tile=8, halo=4))


def explicit_gather(layout, x):
    """G x from the explicit per-pixel sources: the slow reference."""
    idx, w = layout.tile_sources()  # (k, n_tiles*S*S)
    B, C = x.shape[:2]
    flat = x.reshape(B, C, -1)
    vals = (flat[:, :, torch.as_tensor(idx)] * torch.as_tensor(w, dtype=x.dtype)).sum(2)
    S = layout.size
    return vals.reshape(B, C, layout.n_tiles, S, S).transpose(1, 2).reshape(-1, C, S, S)


def test_gather_matches_the_explicit_operator(op):
    x = torch.randn(2, 3, 6, 24, 24, dtype=torch.float64)
    torch.testing.assert_close(op.gather(x), explicit_gather(op.layout, x), rtol=0, atol=1e-15)


def test_gather_is_windows_of_the_extended_faces(op):
    x = torch.randn(1, 2, 6, 24, 24)
    ext, tiles = op.extend(x), op.gather(x)
    f, y0, x0 = op.layout.tile_origins()[17]
    torch.testing.assert_close(tiles[17], ext[0, :, f, y0 : y0 + 16, x0 : x0 + 16], rtol=0, atol=0)


@pytest.mark.parametrize("dtype, rtol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("cross_face", [True, False])
def test_adjoint_identity(op, dtype, rtol, cross_face):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 6, 24, 24, dtype=dtype, generator=gen)
    y = torch.randn(2 * op.n_tiles, 3, 16, 16, dtype=dtype, generator=gen)
    gx = op.gather(x)
    if not cross_face:  # G_m: the intra-face entries only
        gx = (
            gx * torch.as_tensor(~op.layout.cross_face_mask(), dtype=dtype).repeat(2, 1, 1)[:, None]
        )
    lhs = (gx * y).sum().item()
    rhs = (x * op.transpose(y, cross_face=cross_face)).sum().item()
    assert abs(lhs - rhs) <= rtol * abs(lhs), (lhs, rhs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_crop_and_intra_face_adjoint_invert_gather_exactly(op, dtype):
    x = torch.randn(2, 4, 6, 24, 24).to(dtype)
    tiles = op.gather(x)
    assert tiles.dtype == dtype and tiles.shape == (2 * 54, 4, 16, 16)
    assert torch.equal(op.crop(tiles), x)
    out = op.adjoint(tiles, cross_face=False)
    assert out.dtype == dtype and torch.equal(out, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cross_face_adjoint_keeps_a_constant(op, dtype):
    c = torch.full((1, 2, 6, 24, 24), 2.7, dtype=dtype)
    out = op.adjoint(op.gather(c), cross_face=True)
    ulp = (torch.nextafter(c[0, 0, 0, 0, 0], c.new_tensor(9.0)) - 2.7).item()
    err = (out - c).abs().max().item()
    # the halo values are weighted sums whose weights add up to 1 only to rounding
    assert err <= 2 * ulp, f"max |adjoint(gather(c)) - c| = {err:.3g} (1 ulp = {ulp:.3g})"


@pytest.mark.parametrize("window", ["linear", "cosine"])
@pytest.mark.parametrize("cross_face", [False, True])
def test_windowed_adjoint_is_the_window_weighted_transpose(op, window, cross_face):
    """``D_w^-1 G^T W``: the weighted adjoint identity <W G x, y> = <x, G^T W y>, a constant
    reproduced (to 2 ulp) and the windows' shape (1 on the tile, falling across the halo)."""
    from screamcast.halo import tile_window

    w = torch.as_tensor(tile_window(window, 8, 4))
    assert w[4:12, 4:12].eq(1).all() and w[0, 8] == pytest.approx(
        0.125 if window == "linear" else 0.5 * (1 - np.cos(np.pi / 8))
    )
    assert (w[:4, 8].diff() > 0).all()  # rising from the outer edge inward
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 2, 6, 24, 24, dtype=torch.float64, generator=gen)
    y = torch.randn(op.n_tiles, 2, 16, 16, dtype=torch.float64, generator=gen)
    gx = op.gather(x)
    if not cross_face:
        gx = gx * torch.as_tensor(~op.layout.cross_face_mask(), dtype=x.dtype)[:, None]
    lhs = (w * gx * y).sum().item()
    rhs = (x * op.transpose(y * w, cross_face=cross_face)).sum().item()
    assert abs(lhs - rhs) <= 1e-12 * abs(lhs)
    # normalised: the weighted transpose over the weights that reach each pixel
    want = op.transpose(y * w, cross_face) / op.counts(torch.float64, cross_face, window)
    torch.testing.assert_close(op.adjoint(y, cross_face, window), want, rtol=1e-14, atol=1e-14)
    c = torch.full((1, 2, 6, 24, 24), 2.7, dtype=torch.float32)
    err = (op.adjoint(op.gather(c), cross_face, window) - c).abs().max().item()
    assert err <= 2 * 2.4e-7, err
    # the windowed average is not the uniform one where predictions overlap
    diff = (op.adjoint(y, cross_face, window) - op.adjoint(y, cross_face)).abs()
    assert diff.max() > 1e-3


def test_a_bad_window_is_refused(op):
    with pytest.raises(ValueError, match="window must be one of uniform, linear, cosine"):
        op.adjoint(op.gather(torch.zeros(1, 1, 6, 24, 24)), window="hann")


def test_cross_face_adjoint_changes_only_pixels_near_face_edges(op):
    x = torch.randn(1, 2, 6, 24, 24, dtype=torch.float64)
    change = (op.adjoint(op.gather(x), cross_face=True) - x).abs().amax(dim=(0, 1)).numpy()
    sources = np.zeros(6 * 24 * 24, bool)
    sources[op.layout.ring_sources.ravel()] = True
    sources = sources.reshape(6, 24, 24)
    assert change[~sources].max() == 0.0
    assert change[sources].min() > 0.0
    depth = op.layout.grid.edge_distance()[sources].max()
    assert depth <= op.halo, f"cross-face terms reach {depth} pixels into a face"
    print(f"cross-face overlap-add changes {sources.sum()} of {sources.size} pixels")


# Every layout the package accepts: one tile per face (tile = n), halo = tile, halo > tile / 2,
# the widest halo (n // 2), no halo. (1, 1) is the batch/channel shape at which the tiles of a
# one-tile face used to alias the operator's scratch buffer (NaN adjoint, wrong crops).
LAYOUTS = [
    (16, 16, 4),
    (32, 32, 8),
    (8, 8, 4),
    (16, 16, 8),
    (16, 8, 8),
    (16, 4, 3),
    (16, 2, 8),
    (24, 8, 4),
    (12, 6, 5),
    (16, 16, 0),
]


@pytest.mark.parametrize("n, tile, halo", LAYOUTS)
@pytest.mark.parametrize("B, C", [(1, 1), (2, 3)])
def test_operator_identities_hold_for_every_accepted_layout(n, tile, halo, B, C):
    op = HaloOperator(TileLayout(PhysicsGrid.for_face_size(n), tile=tile, halo=halo))
    gen = torch.Generator().manual_seed(n + tile + halo)
    x = torch.randn(B, C, 6, n, n, dtype=torch.float64, generator=gen)
    tiles = op.gather(x)
    torch.testing.assert_close(tiles, explicit_gather(op.layout, x), rtol=0, atol=1e-15)
    op.gather(2 * x)  # a second call must not change the tiles the first one returned
    assert torch.equal(op.crop(tiles), x)
    # the mean of c equal copies (up to 81 here): exact when c is a power of two, else rounded
    torch.testing.assert_close(op.adjoint(tiles, cross_face=False), x, rtol=1e-14, atol=0)
    one = torch.ones_like(x)
    assert (op.adjoint(op.gather(one), cross_face=True) - 1).abs().max() <= 1e-15
    y = torch.randn(tiles.shape, dtype=torch.float64, generator=gen)
    mask = torch.as_tensor(~op.layout.cross_face_mask(), dtype=x.dtype).repeat(B, 1, 1)[:, None]
    for cross_face, gx in ((True, tiles), (False, tiles * mask)):
        lhs, rhs = (gx * y).sum().item(), (x * op.transpose(y, cross_face)).sum().item()
        assert abs(lhs - rhs) <= 1e-12 * abs(lhs), (cross_face, lhs, rhs)


def test_zero_halo_is_plain_tiling():
    op0 = HaloOperator(TileLayout(PhysicsGrid.for_face_size(8), tile=4, halo=0))
    x = torch.randn(1, 1, 6, 8, 8)
    tiles = op0.gather(x)
    torch.testing.assert_close(tiles[1, 0], x[0, 0, 0, :4, 4:], rtol=0, atol=0)
    assert torch.equal(op0.adjoint(tiles, cross_face=True), x)


def test_shape_errors_name_what_was_expected(op):
    with pytest.raises(ValueError, match=r"expected a field \(batch, channel, 6, 24, 24\)"):
        op.gather(torch.zeros(1, 6, 24, 24))
    with pytest.raises(ValueError, match=r"expected tiles \(batch \* 54, channel, 16, 16\)"):
        op.adjoint(torch.zeros(53, 1, 16, 16))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu(op):
    x = torch.randn(2, 3, 6, 24, 24)
    gpu = op.to("cuda")
    torch.testing.assert_close(gpu.gather(x.cuda()).cpu(), op.gather(x))
    y = op.gather(x)
    torch.testing.assert_close(gpu.adjoint(y.cuda(), True).cpu(), op.adjoint(y, True))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_interpolate_ring_is_the_weighted_sum_of_its_sources(k):
    """The one ring interpolation HaloOperator and a rank's block share: for any k (k = 2 by
    a lerp) the IDW sum of the k sources, into given buffers too."""
    gen = torch.Generator().manual_seed(k)
    values = torch.randn(3, 50, generator=gen, dtype=torch.float64)  # (rows, N)
    index = torch.randint(0, 50, (k, 20), generator=gen)  # (k, R)
    weights = torch.rand(k, 20, generator=gen, dtype=torch.float64)
    weights /= weights.sum(0)
    want = sum(weights[j] * values[:, index[j]] for j in range(k))  # (rows, R)
    torch.testing.assert_close(interpolate_ring(values, index, weights), want)
    out, tmp = torch.empty(3, 20, dtype=torch.float64), torch.empty(3, 20, dtype=torch.float64)
    got = interpolate_ring(values, index, weights, out=out, tmp=tmp)
    assert got.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, want)
