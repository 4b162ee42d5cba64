# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
import copy
import math

import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr

from screamcast.data.calendar import as_model_times
from screamcast.grid import PhysicsGrid
from screamcast.rollout.domain import blocks
from screamcast.rollout.nudging import NudgingError
from screamcast.rollout.nudging.relaxation import Relaxation
from screamcast.rollout.writer import OutputExistsError, RolloutWriter


def reference(n=4, values=(0.0, 6.0)):
    times = pd.date_range("2020-01-01", periods=len(values), freq="6h")
    data = np.stack([np.full((6, n, n), v, np.float32) for v in values])
    attrs = {"grid": PhysicsGrid.for_face_size(n).name}  # as open_store records it
    return xr.Dataset({"u": (("time", "face", "y", "x"), data)}, {"time": times}, attrs)


def grid(n):
    return PhysicsGrid.for_face_size(n)


def test_alpha_and_linear_time_interpolation():
    nudger = Relaxation(reference(n=8), ["u"], ["u", "v"], 6.0, np.timedelta64(3, "h"), grid(8))
    assert nudger.alpha == pytest.approx(1 - math.exp(-0.5))
    assert nudger.projection == "identity"
    np.testing.assert_allclose(nudger.target(np.datetime64("2020-01-01T03:00")), 3.0)
    x = torch.zeros(2, 6, 8, 8)
    nudger.apply(x, np.datetime64("2020-01-01T03:00"))
    torch.testing.assert_close(x[0], torch.full((6, 8, 8), 3.0 * nudger.alpha))
    assert float(x[1].abs().max()) == 0.0  # not nudged


def test_cubic_time_interpolation_is_exact_for_a_quadratic_in_time():
    """Samples of ``1 + t - t^2 / 36`` (t in hours) every 6 h: cubic in time gives the curve
    between them (end intervals included), linear its chords."""
    f = lambda t: 1.0 + t - t**2 / 36  # noqa: E731
    ref = reference(n=8, values=[f(6.0 * k) for k in range(5)])
    dt = np.timedelta64(1, "h")
    cubic = Relaxation(ref, ["u"], ["u"], 6.0, dt, grid(8))
    linear = Relaxation(ref, ["u"], ["u"], 6.0, dt, grid(8), time_interpolation="linear")
    assert cubic.attrs()["nudge_time"] == "cubic" and linear.attrs()["nudge_time"] == "linear"
    for hours in (1, 3, 8, 13, 20, 23):
        time = np.datetime64("2020-01-01T00:00") + np.timedelta64(hours, "h")
        np.testing.assert_allclose(cubic.target(time), f(hours), rtol=1e-6)
        assert abs(linear.target(time)[0, 0, 0, 0] - f(hours)) > 0.05
    with pytest.raises(NudgingError, match="nudging.time must be one of cubic, linear"):
        Relaxation(ref, ["u"], ["u"], 6.0, dt, grid(8), time_interpolation="spline")


def test_large_scale_nudging_keeps_small_scales():
    """With one increment per block (``increment="block"``, the default before the bilinear
    one): the block means become the reference's, what is inside each block is kept."""
    nudger = Relaxation(
        reference(n=2, values=(1.0, 1.0)),
        ["u"],
        ["u"],
        1e-6,
        np.timedelta64(1, "h"),
        grid(8),
        increment="block",
    )
    assert nudger.projection == "block mean over 4x4"
    a = torch.as_tensor(grid(8).area).reshape(1, 6, 2, 4, 2, 4)  # ne4pg2 areas, blocks of ne1

    def block_mean(x):  # area-weighted: the model's own cells
        return (x.reshape(1, 6, 2, 4, 2, 4) * a).sum((3, 5)) / a.sum((3, 5))

    x = torch.randn(1, 6, 8, 8, dtype=torch.float64)
    small = x - block_mean(x).repeat_interleave(4, 2).repeat_interleave(4, 3)
    nudger.apply(x, np.datetime64("2020-01-01T00:00"))
    coarse = block_mean(x)
    torch.testing.assert_close(coarse, torch.ones_like(coarse))  # alpha ~ 1: large scales = ref
    new_small = x - coarse.repeat_interleave(4, 2).repeat_interleave(4, 3)
    torch.testing.assert_close(new_small, small)
    # the misfit is taken at the reference's scales: 0 now, 0.5 for the state 0.5 higher
    t0 = np.datetime64("2020-01-01T00:00")
    assert nudger.misfit(x[0:1].numpy(), t0)[0] == pytest.approx(0.0, abs=1e-12)
    assert nudger.misfit(x[0:1].numpy() + 0.5, t0)[0] == pytest.approx(0.5, rel=1e-12)
    assert np.isnan(nudger.misfit(x.numpy(), np.datetime64("2020-01-02T00:00"))).all()


def assert_block_means_reach_one(nudger: Relaxation, n: int) -> None:
    """30 nudges (alpha ~ 1) of a random state toward a reference of ones, 4 x 4 blocks."""
    m = n // 4
    a = torch.as_tensor(grid(n).area).reshape(1, 6, m, 4, m, 4)
    x = torch.randn(1, 6, n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for _ in range(30):
        nudger.apply(x, np.datetime64("2020-01-01T00:00"))
    coarse = (x.reshape(1, 6, m, 4, m, 4) * a).sum((3, 5)) / a.sum((3, 5))  # (1, 6, m, m)
    torch.testing.assert_close(coarse, torch.ones_like(coarse), rtol=0, atol=1e-6)


def test_the_bilinear_increment_prints_no_blocks_and_still_reaches_the_reference():
    """The block increment broadcast back jumps at every reference cell's edge, and in the
    demo's nudged rollout those jumps piled up into a lattice of the reference's cells (alone,
    1.32x the mean |error| at its worst tile-local position at +48 h). Bilinear between block
    centres: a constant and a linear increment come back exactly (inside a face), no jump at a
    block's edge exceeds the steps inside it, and repeated nudging (alpha ~ 1) still takes the
    block means to the reference's."""
    kw = dict(variables=["u"], state_vars=["u"], tau_hours=1e-6, dt=np.timedelta64(1, "h"))
    nudger = Relaxation(reference(n=2, values=(1.0, 1.0)), grid=grid(8), increment="bilinear", **kw)
    assert nudger.projection == "block mean over 4x4, increment bilinear in each face"
    const = nudger.increment.to_cells(torch.full((6, 2, 2), 0.5, dtype=torch.float64))
    torch.testing.assert_close(const, torch.full((6, 8, 8), 0.5, dtype=torch.float64))
    ramp = torch.arange(2.0, dtype=torch.float64).repeat(6, 2, 1)  # (6, 2, 2): 0, 1 along x
    fine = nudger.increment.to_cells(ramp)[0, 0]  # (8,) along x: centres at 1.5 and 5.5
    torch.testing.assert_close(fine[2:6], (torch.arange(2, 6, dtype=torch.float64) - 1.5) / 4)
    assert float(fine[:2].sub(0).abs().max()) == 0 and float(fine[6:].sub(1).abs().max()) == 0
    step = torch.diff(nudger.increment.to_cells(ramp), dim=-1).abs().max()  # 0.25 per cell
    block = Relaxation(reference(n=2, values=(1.0, 1.0)), grid=grid(8), increment="block", **kw)
    assert float(step) == 0.25 and float(torch.diff(block.increment.to_cells(ramp)).max()) == 1.0
    assert_block_means_reach_one(nudger, 8)
    with pytest.raises(NudgingError, match="must be one of bicubic, bilinear, block, got 'x'"):
        Relaxation(reference(n=2), grid=grid(8), increment="x", **kw)


def test_the_bicubic_increment_is_exact_for_lines_and_parabolas_and_reaches_the_reference():
    """Catmull-Rom between block centres (the default): a constant and a linear increment come
    back exactly on every cell, to the face's border (the bilinear one holds its edge value
    past the last centre: 0.375 of a block's step off at the border cell); a quadratic one
    exactly from 1.5 blocks in (bilinear: 7/64 to 15/64 of t^2's off, between every two
    centres); repeated
    nudging still takes the block means to the reference's. torch's ``bicubic`` (a = -3/4)
    fails the linear check: 0.041 of a block's step off, with the blocks' period."""
    kw = dict(variables=["u"], state_vars=["u"], tau_hours=1e-6, dt=np.timedelta64(1, "h"))
    nudger = Relaxation(reference(n=6, values=(1.0, 1.0)), grid=grid(24), **kw)
    assert nudger.projection == "block mean over 4x4, increment bicubic in each face"
    bilinear = Relaxation(reference(n=6), grid=grid(24), increment="bilinear", **kw)
    c = (torch.arange(24, dtype=torch.float64) + 0.5) / 4 - 0.5  # cells in block units
    i = torch.arange(6, dtype=torch.float64)
    for f, exact_from in ((lambda t: 0.5 + 0 * t, 0), (lambda t: t, 0), (lambda t: t**2, 6)):
        coarse = f(i).repeat(6, 6, 1)  # (6, 6, 6): along x
        got = nudger.increment.to_cells(coarse)  # (6, 24, 24)
        err = (got - f(c)).abs()[..., exact_from : 24 - exact_from]
        assert float(err.max()) < 1e-12, float(err.max())
        torch.testing.assert_close(got, got[:, :1].expand_as(got))  # constant along y
    lines = bilinear.increment.to_cells(i.repeat(6, 6, 1))[0, 0]
    assert float((lines - c).abs().max()) == pytest.approx(0.375)
    parabola = bilinear.increment.to_cells((i**2).repeat(6, 6, 1))[0, 0]
    off = (parabola - c**2).abs()[6:18]  # s (1 - s) at fraction s between two centres
    assert (float(off.min()), float(off.max())) == pytest.approx((7 / 64, 15 / 64))
    torch_cubic = torch.nn.functional.interpolate(
        i.repeat(1, 1, 6, 1), scale_factor=4, mode="bicubic", align_corners=False
    )[0, 0, 0]
    assert float((torch_cubic - c).abs()[8:16].max()) == pytest.approx(0.041, abs=1e-3)
    assert_block_means_reach_one(nudger, 24)


def latlon_reference(nlat, values=(0.0, 6.0), seed=0):
    """A random field on a regular lat-lon grid, the same at every time plus ``values``."""
    times = pd.date_range("2020-01-01", periods=len(values), freq="6h")
    lat = -90 + (np.arange(nlat) + 0.5) * 180.0 / nlat
    lon = (np.arange(2 * nlat) + 0.5) * 180.0 / nlat
    base = np.random.default_rng(seed).normal(size=(nlat, 2 * nlat))
    data = np.stack([base + v for v in values]).astype(np.float32)
    return xr.Dataset(
        {"u": (("time", "lat", "lon"), data)}, coords={"time": times, "lat": lat, "lon": lon}
    )


def test_latlon_reference_nudges_the_group_means_and_keeps_small_scales():
    ref = latlon_reference(6)  # 30 degree cells on a cube of ~5.6 degree cells
    nudger = Relaxation(ref, ["u"], ["u"], 1e-6, np.timedelta64(1, "h"), grid(16))
    m = nudger.map
    assert m.n_groups == 72 and "6x12 lat-lon" in nudger.projection
    x = torch.randn(1, 6, 16, 16, dtype=torch.float64)
    area = grid(16).area

    def group_mean(field):
        sums = np.bincount(m.group.ravel(), weights=(field * area).ravel())
        return (sums / m.group_area)[m.group]

    small = x[0].numpy() - group_mean(x[0].numpy())
    time = np.datetime64("2020-01-01T03:00")  # halfway: the reference plus 3
    nudger.apply(x, time)
    target = ref.u.values[0].astype(np.float64).ravel()[m.source] + 3.0
    np.testing.assert_allclose(group_mean(x[0].numpy()), target, atol=1e-5)  # alpha ~ 1
    np.testing.assert_allclose(x[0].numpy() - group_mean(x[0].numpy()), small, atol=1e-9)
    np.testing.assert_allclose(nudger.target(time)[0], ref.u.values[0] + 3.0, rtol=1e-6)
    # after the nudge (alpha ~ 1) the group means sit on the reference: misfit ~0; a state
    # 0.25 lower in every cell misses by 0.25 (the reference's points all weighted by area)
    assert nudger.misfit(x.numpy(), time)[0] == pytest.approx(0.0, abs=1e-5)
    assert nudger.misfit(x.numpy() - 0.25, time)[0] == pytest.approx(0.25, abs=1e-5)


def test_a_finer_latlon_reference_is_grid_point_nudging_at_the_nearest_points():
    ref = latlon_reference(60, values=(1.0, 1.0))
    nudger = Relaxation(ref, ["u"], ["u"], 6.0, np.timedelta64(6, "h"), grid(4))
    assert nudger.map.n_groups == 96
    x = torch.zeros(1, 6, 4, 4, dtype=torch.float64)
    nudger.apply(x, np.datetime64("2020-01-01T00:00"))
    nearest = ref.u.values[0].astype(np.float64).ravel()[nudger.map.source]
    np.testing.assert_allclose(x[0].numpy(), nudger.alpha * nearest, rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(tau_hours=0.0), "must be positive"),
        (dict(variables=["q"]), "'q' is not a prognostic variable"),
        (dict(grid=PhysicsGrid(3, 2)), "on ne2pg2, which is not ne3pg2 coarsened by whole"),
        (dict(grid=PhysicsGrid(4, 1)), "on ne2pg2, which is not ne4pg1 coarsened by whole"),
    ],
)
def test_bad_nudging_settings(kwargs, message):
    args = (
        dict(
            reference=reference(),
            variables=["u"],
            state_vars=["u"],
            tau_hours=6.0,
            dt=np.timedelta64(1, "h"),
            grid=grid(8),
        )
        | kwargs
    )
    with pytest.raises(NudgingError, match=message):
        Relaxation(**args)


def test_reference_coverage_is_checked():
    nudger = Relaxation(reference(), ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(8))
    with pytest.raises(NudgingError, match="covers .* but the rollout needs"):
        nudger.check_covers(np.datetime64("2020-01-01T01"), np.datetime64("2020-01-01T07"))


def test_the_next_reference_time_is_read_in_the_background(tiny_reference, tmp_path):
    """Reading time i + 1 overlaps the steps before it is needed; the values are the store's,
    and a read that fails in the background is raised when (and only when) it is needed."""
    import shutil

    from screamcast.data.store import open_store

    ref = open_store(tiny_reference, variables=["u"], n=4)
    times = ref["time"].values
    nudger = Relaxation(ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(4))
    np.testing.assert_array_equal(nudger.target(times[0]), ref["u"].values[None, 0])
    assert list(nudger.series._pending) == [1]  # time 1 already on its way
    mid = times[0] + np.timedelta64(3, "h")
    u = ref["u"].values[:3, None].astype(np.float64)  # (3, 1, 6, m, m)
    # the first interval, cubic in time: the quadratic through times 0, 1, 2 at its midpoint
    np.testing.assert_allclose(nudger.target(mid), 0.375 * u[0] + 0.75 * u[1] - 0.125 * u[2])
    assert list(nudger.series._pending) == [3] and sorted(nudger.series._cache) == [0, 1, 2]
    nudger.close()
    linear = Relaxation(
        ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(4), time_interpolation="linear"
    )
    np.testing.assert_allclose(linear.target(mid), 0.5 * (u[0] + u[1]))
    assert list(linear.series._pending) == [2] and sorted(linear.series._cache) == [0, 1]
    linear.close()

    broken = shutil.copytree(tiny_reference, tmp_path / "broken.zarr")
    # the stacked store's shard of time 2, face 0 (u is one of its channels)
    shard = broken / "fields" / "c" / "2" / "0" / "0" / "0" / "0"
    data = bytearray(shard.read_bytes())
    data[:16] = b"not a compressed"  # the shard's index (at its end) intact: a chunk broken
    shard.write_bytes(bytes(data))
    ref = open_store(broken, variables=["u"], n=4)
    nudger = Relaxation(ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), grid(4), name=str(broken))
    nudger.target(times[1])  # starts reading time 2 in the background: it fails there
    nudger.series._pending[2].exception(timeout=30)
    with pytest.raises(RuntimeError, match="decompression") as err:  # at the step needing it
        nudger.target(times[1] + np.timedelta64(1, "h"))
    assert f"reading the nudging reference {broken} at {times[2]}" in err.value.__notes__[-1]
    assert nudger.series._pending == {}
    nudger.close()


@pytest.mark.s3
def test_a_throttled_s3_reference_is_read_again(flaky_s3, small_store, monkeypatch):
    """The reference of a long rollout on S3: reads that botocore gives up on (503 SlowDown) are
    retried with backoff, and the targets equal the local store's."""
    from screamcast.data import remote
    from screamcast.data import store as st

    monkeypatch.setattr(
        remote.time, "sleep", lambda s: None
    )  # the backoff, not the retries, skipped
    proxy, options = flaky_s3("/u/c/0/0/", failures=7)  # one chunk: 7 refusals, then data
    # botocore: 2 tries per read, then ours (4 reads): 8 >= 7 refusals
    options |= {"config_kwargs": {"retries": {"mode": "standard", "max_attempts": 2}}}
    given = copy.deepcopy(options)
    remote = st.open_store("s3://data/small.zarr", options, variables=["u"], n=8)
    local = st.open_store(small_store, variables=["u"], n=8)
    kw = dict(
        variables=["u"], state_vars=["u"], tau_hours=6.0, dt=np.timedelta64(3, "h"), grid=grid(8)
    )
    nudge_remote, nudge_local = Relaxation(remote, **kw), Relaxation(local, **kw)
    for time in local["time"].values[:2]:
        np.testing.assert_array_equal(nudge_remote.target(time), nudge_local.target(time))
    assert proxy.refused == 7 and options == given  # the caller's options are left alone


def test_writer_appends_and_recovers_from_a_torn_step(tmp_path):
    g = grid(4)
    t0 = np.datetime64("2020-01-01T00:00", "ns")
    times = as_model_times(t0 + np.arange(5) * np.timedelta64(1, "h"))  # as the rollout has them
    w = RolloutWriter(
        tmp_path / "o.zarr", ["u", "p"], {"u": {"units": "m s-1"}}, g, {"a": 1}, times
    )
    w.create()
    buffer = np.empty((2, 6, 4, 4), np.float32)
    for k in range(3):
        buffer[:] = k  # the writer copies: the caller reuses its buffer at once
        w.append(times[k], buffer)
    buffer[:] = -1
    w.close()
    import zarr

    zarr.open_group(tmp_path / "o.zarr", mode="r+")["u"][3] = 99.0  # a step torn by a kill
    fresh = RolloutWriter(tmp_path / "o.zarr", ["u", "p"], {}, g, {"command": "again"}, times)
    steps, last, fields = fresh.recover()
    fresh.note_resume(steps, "again")
    assert steps == 3 and last == times[2] and float(fields.max()) == 2
    fresh.append(times[3], np.full((2, 6, 4, 4), 3, np.float32))  # rewrites the torn step
    fresh.flush()  # append writes in the background: read once it is on disk
    ds = xr.open_zarr(tmp_path / "o.zarr", consolidated=False, chunks=None)
    assert float(ds.u[3].max()) == 3 and np.isnan(ds.u.values[4]).all()
    assert ds.attrs["a"] == 1 and ds.u.attrs["units"] == "m s-1" and ds.lat.shape == (6, 4, 4)
    assert (
        "resumed after time index 2, the last complete (3 times kept): again" in ds.attrs["history"]
    )
    np.testing.assert_array_equal(ds.time.values, t0 + np.arange(5) * np.timedelta64(1, "h"))
    with pytest.raises(OutputExistsError, match="already exists"):
        w.create()


def test_a_failed_background_write_is_raised_naming_the_output(tmp_path):
    """A real disk-full (RLIMIT_FSIZE) in the writer thread surfaces at close(), not silently."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import resource, signal, numpy as np
        from screamcast.grid import PhysicsGrid
        from screamcast.rollout.writer import RolloutWriter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of dying
        times = np.datetime64("2020-01-01", "ns") + np.arange(3) * np.timedelta64(1, "h")
        w = RolloutWriter({str(tmp_path / "o.zarr")!r}, ["u"], {{}}, PhysicsGrid(32, 2), {{}},
                          times)
        w.create()
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
        w.append(times[0], np.random.default_rng(0).normal(size=(1, 6, 64, 64)))
        try:
            w.close()
        except OSError as err:
            print("RAISED", err)
        print("complete_steps", w.complete_steps())
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert f"RAISED writing {tmp_path / 'o.zarr'} failed" in run.stdout, run.stdout
    assert "complete_steps 0" in run.stdout  # the failed step is not counted


def test_the_reference_misfit_is_area_weighted_over_the_reference_cells():
    """A state off the reference by 1 in the blocks of each face's first row of reference cells
    only (which are not a fixed share of the area): the misfit is the area-weighted RMSE,
    sqrt(sum over blocks of A_b d_b^2 / sum of A_b), and the unweighted one differs."""
    g = grid(8)
    nudger = Relaxation(
        reference(n=4, values=(0.0, 0.0)), ["u"], ["u"], 6.0, np.timedelta64(1, "h"), g
    )
    area = g.area.reshape(6, 4, 2, 4, 2).sum(axis=(2, 4))  # (6, 4, 4) block areas
    d = np.zeros((6, 4, 4))
    d[:, 0, :] = 1.0  # the first row of blocks of every face (small cells at the corners)
    x = np.repeat(np.repeat(d, 2, axis=1), 2, axis=2)[None]  # (1, 6, 8, 8): constant per block
    got = nudger.misfit(x, np.datetime64("2020-01-01T03:00"))
    want = np.sqrt((area * d**2).sum() / area.sum())
    np.testing.assert_allclose(got, [want], rtol=1e-12)
    assert abs(want - np.sqrt(0.25)) > 1e-3  # the unweighted answer (a quarter of the blocks)


def test_a_ranks_corrector_reads_only_its_faces_and_nudges_as_one_rank():
    """restrict(faces) on a cube reference: the rank's series holds only its faces (so it
    reads only their chunks), and nudging them equals nudging the globe, bit for bit."""
    rng = np.random.default_rng(0)
    ref = reference(n=8, values=(0.0, 6.0))
    ref["u"].values[:] = rng.standard_normal(ref["u"].shape).astype(np.float32)
    whole = Relaxation(ref, ["u"], ["u", "v"], 6.0, np.timedelta64(3, "h"), grid(16))
    assert whole.projection.startswith("block mean over 2x2")
    x = torch.as_tensor(rng.standard_normal((2, 6, 16, 16)), dtype=torch.float32)
    t = np.datetime64("2020-01-01T03:00")
    expected = whole.apply(x.clone(), t)
    part = whole.restrict(1, blocks(3, 2), 8, None)  # faces 2 and 3
    assert part.series.reference.sizes["face"] == 2 and whole.series.reference.sizes["face"] == 6
    assert "faces 2 to 3" in part.series.name
    got = part.apply(x[:, 2:4].clone(), t)
    assert torch.equal(got, expected[:, 2:4])
    part.close()


def test_a_bands_corrector_reads_only_its_rows_and_nudges_as_one_rank():
    """On 12 ranks a rank holds a band of a face: its series holds the band's reference rows
    and its block increment equals the globe's, bit for bit (the smooth increments swap rows
    with the neighbours: tests/distributed); a band that cuts reference cells is refused."""
    rng = np.random.default_rng(1)
    ref = reference(n=8, values=(0.0, 6.0))
    ref["u"].values[:] = rng.standard_normal(ref["u"].shape).astype(np.float32)
    settings = (["u"], ["u", "v"], 6.0, np.timedelta64(3, "h"), grid(16))
    whole = Relaxation(ref, *settings, increment="block")
    x = torch.as_tensor(rng.standard_normal((2, 6, 16, 16)), dtype=torch.float32)
    t = np.datetime64("2020-01-01T03:00")
    expected = whole.apply(x.clone(), t)
    part = whole.restrict(5, blocks(12, 2), 8, None)  # face 2, rows 8 to 15
    assert part.series.reference.sizes["y"] == 4 and "rows 4 to 7" in part.series.name
    got = part.apply(x[:, 2:3, 8:16].clone(), t)
    assert torch.equal(got, expected[:, 2:3, 8:16])
    part.close()
    corner = whole.restrict(11, blocks(24, 2), 8, None)  # face 2, 2 x 2 blocks: the last
    assert corner.series.reference.sizes["x"] == 4 and "columns 4 to 7" in corner.series.name
    got = corner.apply(x[:, 2:3, 8:16, 8:16].clone(), t)
    assert torch.equal(got, expected[:, 2:3, 8:16, 8:16])
    part.close()
    with pytest.raises(NudgingError, match="rows 0 to 4 cut the reference's blocks of 2"):
        Relaxation(ref, *settings).restrict(0, blocks(54, 16), 1, None)  # 3 x 3: 5, 5, 6 rows


def test_each_kind_of_reference_is_its_own_relaxation_class():
    """``Relaxation(reference, ...)`` is the class of the reference's kind, holding only that
    kind's state (no field set or None by mode), and a copy (a rank's ``restrict``) keeps it."""
    import copy

    from screamcast.rollout.nudging.relaxation import CubeRelaxation, LatLonRelaxation

    kw = dict(variables=["u"], state_vars=["u"], tau_hours=6.0, dt=np.timedelta64(1, "h"))
    cube = Relaxation(reference(n=4), grid=grid(8), **kw)
    latlon = Relaxation(latlon_reference(6), grid=grid(16), **kw)
    assert type(cube) is CubeRelaxation and type(latlon) is LatLonRelaxation
    assert not hasattr(cube, "nearest") and not hasattr(latlon, "factor")
    assert cube.attrs()["nudge_block_cells"] == 2 and "nudge_block_cells" not in latlon.attrs()
    assert type(copy.copy(latlon)) is LatLonRelaxation
