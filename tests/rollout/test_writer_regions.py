# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Several ranks write one output: each its region, in chunks no two ranks share; a resume on
another number of ranks is allowed only where the chunks fit the new blocks."""

import numpy as np
import xarray as xr

from screamcast.data.calendar import as_model_times
from screamcast.grid import PhysicsGrid
from screamcast.rollout.writer import RolloutWriter


def test_bands_write_their_rows_and_the_chunks_decide_who_may_resume(tmp_path):
    g, path = PhysicsGrid.for_face_size(16), tmp_path / "o.zarr"
    times = as_model_times(
        np.datetime64("2020-01-01T00", "ns") + np.arange(2) * np.timedelta64(1, "h")
    )
    RolloutWriter(path, ["u"], {}, g, {}, times, chunks=(8, 16)).create()
    every = slice(0, 16)
    bands = [(slice(f, f + 1), slice(y, y + 8), every) for f in range(6) for y in (0, 8)]
    for r, region in enumerate(bands):
        w = RolloutWriter(path, ["u"], {}, g, {}, times, region=region, chunks=(8, 16))
        w.append(times[0], np.full((1, 1, 8, 16), r, np.float32))
        w.close()
    u = xr.open_zarr(path, consolidated=False, chunks=None)["u"]
    assert u.encoding["chunks"] == (1, 1, 8, 16)
    np.testing.assert_array_equal(u.values[0, :, ::8, 0], np.arange(12).reshape(6, 2))
    writer = RolloutWriter(path, ["u"], {}, g, {}, times)
    faces = [(slice(f, f + 1), every, every) for f in range(6)]
    assert writer.chunked_for(bands) and writer.chunked_for(faces)  # 12 or 6 ranks may resume
    thirds = [(slice(0, 1), slice(0, 4), every), (slice(0, 1), slice(4, 16), every)]
    assert not writer.chunked_for(thirds)  # a chunk would hold two ranks' rows
    whole = tmp_path / "whole.zarr"
    RolloutWriter(whole, ["u"], {}, g, {}, times, chunks=(16, 16)).create()
    assert not RolloutWriter(whole, ["u"], {}, g, {}, times).chunked_for(bands)
    quarters = [(slice(0, 1), slice(y, y + 8), slice(x, x + 8)) for y in (0, 8) for x in (0, 8)]
    assert not writer.chunked_for(quarters)  # 2 x 2 blocks: a band's chunk spans two
