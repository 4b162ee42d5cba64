# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stepper's automatic tile and precision (screamcast/rollout/inference_settings.py):
the fastest settings that keep skill by default, and a resume that keeps its output's."""

import numpy as np
import pytest

from screamcast.cli import rollout as cli
from screamcast.rollout.domain import blocks
from screamcast.rollout.inference_settings import (
    adjoint_tile,
    auto_tile,
    balanced,
    check_adjoint_tile,
    check_same_settings,
)
from screamcast.rollout.plan import RolloutError
from screamcast.rollout.stepper import resolve_precision
from tests.rollout.test_run_nudged import args, open_out


@pytest.mark.parametrize(
    "n, train, halo, levels, world, tile",
    [
        (32, 16, 8, 2, 1, 32),  # the Held-Suarez emulator: whole faces of ne16pg2
        (32, 16, 8, 2, 6, 32),  # a face a rank
        (32, 16, 8, 2, 4, 16),  # half of 3 faces each: a face of 1 tile cannot be halved
        (32, 16, 8, 2, 8, 16),  # a quarter of 3 faces: 2 x 2 tiles a face
        (2048, 128, 32, 3, 1, 256),  # ne1024pg2: a window of 576 is over the cap; 320 is not
        (2048, 128, 32, 3, 8, 256),
        (2048, 128, 32, 3, 384, 256),  # 64 rectangles a face, 8 x 8 tiles
        (96, 16, 8, 2, 1, 96),
        (30, 6, 5, 4, 1, 6),  # windows of 40, 25, 20: none halves 4 times
        (16, 8, 4, 2, 1, 16),  # the tests' tiny checkpoint
    ],
)
def test_the_automatic_tile_is_the_largest_the_grid_network_and_ranks_take(
    n, train, halo, levels, world, tile
):
    got = auto_tile(n, train, halo, levels, world)
    assert got == tile
    assert n % got == 0 and (got + 2 * halo) % 2**levels == 0
    sizes = {len(b.faces) * len(b.rows) * len(b.cols) for b in blocks(world, n // got)}
    assert len(sizes) == 1  # every rank the same tiles


def test_balanced_matches_the_blocks_tile_counts():
    for world in range(1, 25):
        for m in range(1, 9):
            try:
                every = blocks(world, m)
            except ValueError:
                assert not balanced(world, m)
                continue
            sizes = {len(b.faces) * len(b.rows) * len(b.cols) for b in every}
            assert balanced(world, m) == (len(sizes) == 1), (world, m)


def test_ranks_that_planned_different_settings_are_refused_naming_them():
    check_same_settings([(16, "bf16")] * 4)
    with pytest.raises(RolloutError, match=r"rank 1: tile 16, fp32.*give --tile and --precision"):
        check_same_settings([(16, "bf16"), (16, "fp32")])


def test_the_defaults_run_whole_faces_and_record_them(tiny_checkpoint, tiny_store, tmp_path):
    """The tiny checkpoint (tile 8, halo 4, faces of 16) steps one tile a face by default,
    as ``--tile 16`` does, bit for bit, and the output records the tile and precision."""
    auto, given = tmp_path / "auto.zarr", tmp_path / "given.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, auto, steps=2)) == 0
    fixed = ("--tile", "16", "--precision", open_out(auto).attrs["precision"])
    assert cli.main(args(tiny_checkpoint, tiny_store, given, *fixed, steps=2)) == 0
    a, b = open_out(auto), open_out(given)
    assert int(a.attrs["tile"]) == 16 and a.attrs["precision"] == resolve_precision("auto", "cpu")
    np.testing.assert_array_equal(a.u.values, b.u.values)


@pytest.mark.parametrize("recorded", ["fp32", "bf16"])
def test_a_resume_keeps_its_outputs_tile_and_precision(
    tiny_checkpoint, tiny_store, tmp_path, recorded
):
    """An output made on the training tile in ``recorded`` precision (as the old defaults
    made it, or another machine) resumes with the defaults, not refused: it continues on its
    own settings and equals the uninterrupted run bit for bit."""
    cut, whole = tmp_path / "cut.zarr", tmp_path / "whole.zarr"
    own = ("--tile", "8", "--precision", recorded)
    assert cli.main(args(tiny_checkpoint, tiny_store, whole, *own, steps=3)) == 0
    assert cli.main(args(tiny_checkpoint, tiny_store, cut, *own, steps=3)) == 0
    _killed_after_first_step(cut)
    assert cli.main(args(tiny_checkpoint, tiny_store, cut, "--resume", steps=3)) == 0
    a, b = open_out(cut), open_out(whole)
    assert int(a.attrs["tile"]) == 8 and a.attrs["precision"] == recorded
    np.testing.assert_array_equal(a.u.values, b.u.values)


def _killed_after_first_step(path) -> None:
    """``path`` as a run killed after its first step leaves it: steps 2 on not complete (and
    zeroed, so that only a resume's own steps can match the uninterrupted run's)."""
    import zarr

    group = zarr.open_group(path, mode="r+")
    group.attrs["complete_steps"] = 2
    group["u"][2:] = 0.0


@pytest.mark.parametrize(
    "n, train, halo, levels, tile",
    [
        (32, 16, 8, 2, 16),  # the Held-Suarez emulator: its training tile, 4 a face
        (16, 8, 4, 2, 8),  # the tests' tiny checkpoint
        (16, 16, 8, 2, 8),  # trained on whole faces: the largest tile that leaves seams
        (30, 6, 5, 4, 6),
    ],
)
def test_the_adjoints_automatic_tile_is_the_training_tile_or_one_with_seams(
    n, train, halo, levels, tile
):
    assert adjoint_tile(n, train, halo, levels) == tile


def test_the_intra_face_adjoint_at_one_tile_a_face_is_refused_naming_the_settings():
    check_adjoint_tile(8, 16, True, False, [4, 8, 16])  # tiles overlap: fine
    check_adjoint_tile(16, 16, True, True, [4, 8, 16])  # across the edges: it adds there
    check_adjoint_tile(16, 16, False, False, [4, 8, 16])  # the crop: nothing to do
    with pytest.raises(RolloutError) as err:
        check_adjoint_tile(16, 16, True, False, [4, 8, 16])
    said = err.value.worded(lambda key: {"stepper.tile": "--tile"}.get(key, key))
    assert "at --tile 16 each face is one tile" in said and "(tiles that fit: 4, 8)" in said


def test_the_halo_adjoint_defaults_to_the_training_tile_and_changes_the_output(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """The tiny checkpoint (tile 8, n = 16): --halo-adjoint alone rolls out on tiles of 8, and
    differs from the crop there; at --tile 16 it is refused (it had been bit-identical to the
    whole-face crop, silently)."""
    crop, adjoint = tmp_path / "crop.zarr", tmp_path / "adjoint.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, crop, "--tile", "8", steps=1)) == 0
    assert cli.main(args(tiny_checkpoint, tiny_store, adjoint, "--halo-adjoint", steps=1)) == 0
    a, b = open_out(crop), open_out(adjoint)
    assert int(b.attrs["tile"]) == 8 and b.attrs["reassembly"] != a.attrs["reassembly"]
    assert "rollout: tile 8, intra-face (cosine window) reassembly, fp32" in capsys.readouterr().err
    assert float(np.abs(a.u.values[1] - b.u.values[1]).max()) > 1e-4
    refused = tmp_path / "refused.zarr"
    argv = args(tiny_checkpoint, tiny_store, refused, "--halo-adjoint", "--tile", "16", steps=1)
    assert cli.main(argv) == 2
    said = capsys.readouterr().err
    assert "--halo-adjoint: at --tile 16 each face is one tile" in said and not refused.exists()


def test_an_older_adjoint_output_at_one_tile_a_face_still_resumes():
    """Outputs written before the refusal (the adjoint on whole faces) keep their tile on
    resume; a new run at that tile is refused."""
    import dataclasses
    from types import SimpleNamespace

    from screamcast.config.inference import InferenceConfig
    from screamcast.rollout.inference_settings import concrete

    desc = SimpleNamespace(grid=SimpleNamespace(halo=4, tile=8), model={"levels": 2})
    c = InferenceConfig()
    c = dataclasses.replace(c, stepper=dataclasses.replace(c.stepper, halo_adjoint=True))
    resumed = concrete(c, desc, 16, resumed={"tile": 16, "precision": "fp32"})
    assert resumed.stepper.tile == 16
    assert concrete(c, desc, 16).stepper.tile == 8
    new = dataclasses.replace(c, stepper=dataclasses.replace(c.stepper, tile=16))
    with pytest.raises(RolloutError, match="each face is one tile"):
        concrete(new, desc, 16)
