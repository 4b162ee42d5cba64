# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Inference tiles larger than training's (``--tile``, ``stepper.tile``): the network is
fully convolutional, so whole faces take fewer halo pixels per kept pixel."""

import numpy as np

from screamcast.cli import rollout as cli
from tests.rollout.test_run_nudged import args, open_out


def _rmse(out, truth, k: int) -> float:
    return float(np.sqrt(np.mean((out.u.values[k] - truth.u.values[k]) ** 2)))


def test_whole_face_tiles_run_record_their_tile_and_keep_the_first_steps_skill(
    tiny_checkpoint, tiny_store, tmp_path
):
    """The tiny checkpoint (tile 8, halo 4) on tiles of 16 (one a face): the output records
    tile 16, its first step is within 20% of the training tile's error against the truth,
    and the numbers differ (it is another tiling, not a flag that does nothing)."""
    from screamcast.data.store import open_store

    base, whole = tmp_path / "t8.zarr", tmp_path / "t16.zarr"
    training = ("--halo-adjoint", "--tile", "8")
    assert cli.main(args(tiny_checkpoint, tiny_store, base, *training, steps=2)) == 0
    argv = args(tiny_checkpoint, tiny_store, whole, "--tile", "16", steps=2)
    assert cli.main(argv) == 0
    a, b = open_out(base), open_out(whole)
    assert int(a.attrs["tile"]) == 8 and int(b.attrs["tile"]) == 16
    truth = open_store(str(tiny_store)).isel(time=slice(0, 3))
    e8, e16 = _rmse(a, truth, 1), _rmse(b, truth, 1)
    print(f"first step u RMSE: tile 8 {e8:.4g}, tile 16 {e16:.4g}")
    assert abs(e16 / e8 - 1) < 0.2, (e8, e16)
    assert float(np.abs(a.u.values[1] - b.u.values[1]).max()) > 0


def test_a_tile_the_grid_or_network_cannot_take_is_refused_naming_the_flag(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    for tile, said in (
        ("5", "--tile: a tile of 5 does not divide the face size 16 (tiles that fit: 4, 8, 16)"),
        (
            "2",
            "a tile of 2 has a window of 10 pixels, not divisible by 2**levels = 4 (the network's "
            "halvings; "
            "tiles that fit: 4, 8, 16)",
        ),
        ("0", "--tile must be >= 1"),
    ):
        out = tmp_path / f"t{tile}.zarr"
        assert cli.main(args(tiny_checkpoint, tiny_store, out, "--tile", tile)) == 2
        assert said in capsys.readouterr().err and not out.exists()
    out = tmp_path / "override.zarr"  # as an override, named once
    assert cli.main(args(tiny_checkpoint, tiny_store, out, "stepper.tile=5")) == 2
    err = capsys.readouterr().err
    assert "stepper.tile (override stepper.tile=5): a tile of 5 does not divide the face" in err


def test_a_resume_on_another_tile_is_refused(tiny_checkpoint, tiny_store, tmp_path, capsys):
    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, "--tile", "8", steps=2)) == 0
    resume = args(tiny_checkpoint, tiny_store, out, "--resume", "--tile", "16", steps=2)
    assert cli.main(resume) == 2
    err = capsys.readouterr().err
    assert "other settings than the ones that made it (tile: output has 8, this run 16)" in err
