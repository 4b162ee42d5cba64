# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The forcing's exact symmetries as permutations of E3SM's cube (issue 57): four quarter turns
are the identity, a zonally symmetric field is unchanged by a turn, the mirror twice is the
identity, a mirrored state's winds are consistent, and a grid that does not map onto itself
is refused."""

import numpy as np
import pytest
import xarray as xr

from screamcast.data.cube_samples import CubeSamples, window_starts
from screamcast.data.symmetry import SymmetryAugment, cell_permutation
from screamcast.grid import PhysicsGrid

GRID = PhysicsGrid(16, 2)  # ne16pg2: the Held-Suarez benchmark's grid


def test_four_quarter_turns_are_the_identity_and_the_mirror_squares_to_it():
    turn = cell_permutation(GRID, 1, False)
    cells = np.arange(turn.size)
    four = cells
    for _ in range(4):
        four = four[turn]
    assert np.array_equal(four, cells)
    assert not np.array_equal(turn, cells) and not np.array_equal(turn[turn], cells)
    mirror = cell_permutation(GRID, 0, True)
    assert np.array_equal(mirror[mirror], cells) and not np.array_equal(mirror, cells)
    # a turn of 180 degrees is two quarter turns
    assert np.array_equal(cell_permutation(GRID, 2, False), turn[turn])


def test_a_turn_moves_every_cell_by_ninety_degrees_of_longitude():
    turn = cell_permutation(GRID, 1, False)
    lat, lon = GRID.lat.ravel(), GRID.lon.ravel()
    np.testing.assert_allclose(lat, lat[turn], atol=1e-9)
    east = (lon - lon[turn]) % 360.0
    polar = np.abs(lat) > 89.999  # no longitude at a pole
    np.testing.assert_allclose(east[~polar], 90.0, atol=1e-7)


def fields(names, seed=0):
    """A zonally symmetric T and PS; U and V that vary with longitude."""
    rng = np.random.default_rng(seed)
    lat, lon = np.deg2rad(GRID.lat), np.deg2rad(GRID.lon)
    out = {
        "T": 280 - 40 * np.sin(lat) ** 2,
        "PS": 1e5 + 500 * np.cos(2 * lat),
        "U": 20 * np.cos(lat) + np.sin(3 * lon) * rng.uniform(1, 2),
        "V": 5 * np.sin(lat) * np.cos(2 * lon),
    }
    return np.stack([out[n.split("[")[0]] for n in names]).astype(np.float32)  # (C, 6, n, n)


def test_zonally_symmetric_fields_are_unchanged_by_a_turn_and_the_mirror_flips_v():
    names = ["U", "V", "T", "PS"]
    augment = SymmetryAugment(GRID, names)
    x = fields(names)
    assert len(augment) == 8
    turned = augment(x, 1)  # a quarter turn, no mirror
    np.testing.assert_allclose(turned[2:], x[2:], rtol=1e-6)  # T, PS: zonal
    assert np.abs(turned[0] - x[0]).max() > 0.5  # U varies with longitude
    mirrored = augment(x, 4)  # no turn, the mirror
    np.testing.assert_allclose(mirrored[2], x[2], rtol=1e-6)  # T even in latitude
    # V = 5 sin(lat) cos(2 lon) is odd in latitude: mirrored and sign-flipped it comes back
    np.testing.assert_allclose(mirrored[1], x[1], atol=1e-5)
    # U = 20 cos(lat) + ... is even: its mirror is itself (only its sign rule differs from V's)
    np.testing.assert_allclose(mirrored[0], x[0], atol=1e-5)
    assert np.array_equal(augment(x, 0), x)


def test_a_grid_that_does_not_map_onto_itself_is_refused():
    lon = GRID.lon.copy()
    lon[0] += 0.5  # face 0 moved: the turns take it where no cell is

    class Shifted:
        name = "shifted"
        lat, area = GRID.lat, GRID.area

    Shifted.lon = lon
    cell_permutation(Shifted, 0, True)  # the mirror still maps it (face 0 is equatorial)
    with pytest.raises(ValueError, match="grid shifted does not map onto itself under a turn"):
        cell_permutation(Shifted, 1, False)


def test_windows_stay_inside_one_run_of_a_store_of_several():
    starts = window_starts(0, 20, 2, [(0, 8), (8, 20)])
    assert starts.tolist() == [*range(0, 6), *range(8, 18)]
    assert window_starts(5, 12, 2, [(0, 8), (8, 20)]).tolist() == [5, 8, 9]


def test_cube_samples_are_augmented_in_training_only():
    names = ["U", "V", "T", "PS"]
    n = GRID.n
    values = np.stack([fields(names, s) for s in range(6)])  # (6 times, C, 6, n, n)
    ds = xr.Dataset(
        {v: (("time", "face", "y", "x"), values[:, i]) for i, v in enumerate(names)},
        attrs={"segments": [[0, 3], [3, 6]]},
    )
    assert ds.sizes["x"] == n
    augment = SymmetryAugment(GRID, names)
    train = CubeSamples(ds, names, [], (0, 6), 1, 64, seed=3, augment=augment)
    used = {train.symmetry(i) for i in range(64)}
    assert len(used) == 8 and {train.start(i) for i in range(64)} == {0, 1, 3, 4}
    i = next(i for i in range(64) if train.symmetry(i) == 5)
    t = train.start(i)
    np.testing.assert_array_equal(train[i].state.numpy(), augment(values[t], 5))
    valid = CubeSamples(ds, names, [], (0, 6), 1, 4, fixed=True, augment=augment)
    assert {valid.symmetry(i) for i in range(4)} == {0}


def test_the_mirror_flips_every_level_of_an_odd_variable():
    """3-D channels ``V[0]``, ``V[1]`` take V's sign rule (the odd list names variables, or a
    channel of one, ``v[2]``): mirrored, each comes back sign-flipped; U's and T's levels keep
    their sign; a turn alone flips nothing."""
    names = ["U[0]", "V[0]", "V[1]", "T[0]", "v[3]"]
    augment = SymmetryAugment(GRID, names, odd=("V", "v[2]"))
    assert augment.sign.tolist() == [1.0, -1.0, -1.0, 1.0, -1.0]
    x = np.concatenate([fields(names[:4]), 2 * fields(["V"])])  # V: odd in latitude
    mirrored = augment(x, 4)
    np.testing.assert_allclose(mirrored[[1, 2, 4]], x[[1, 2, 4]], atol=1e-5)
    assert np.abs(mirrored[1] + x[1]).max() > 5.0  # not merely unmoved: flipped back
    np.testing.assert_allclose(mirrored[[0, 3]], x[[0, 3]], atol=1e-4)
    turned = augment(x, 2)  # half a turn, no mirror: V's sign kept
    np.testing.assert_allclose(turned[1], x[1], atol=1e-5)  # cos(2 lon): even under 180


def test_a_grid_with_two_cells_at_one_centre_is_refused():
    """Cell 0 moved onto cell 1's centre, and its mirror image onto cell 1's: every centre
    still lands on a cell, under the identity and the mirror, but two cells land on one (a
    permutation no longer): refused, naming the grid and saying so."""
    mirror = cell_permutation(GRID, 0, True)
    lat, lon = GRID.lat.copy().ravel(), GRID.lon.copy().ravel()
    a, b = 0, 1
    assert len({a, b, mirror[a], mirror[b]}) == 4
    lat[a], lon[a] = lat[b], lon[b]
    lat[mirror[a]], lon[mirror[a]] = lat[mirror[b]], lon[mirror[b]]

    class Doubled:
        name = "doubled"

    Doubled.lat, Doubled.lon = lat.reshape(GRID.lat.shape), lon.reshape(GRID.lon.shape)
    for mirrored in (False, True):
        refused = r"grid doubled does not map .*\(two cells land on one, at 2 places\)"
        with pytest.raises(ValueError, match=refused):
            cell_permutation(Doubled, 0, mirrored)
    with pytest.raises(ValueError, match="grid doubled"):
        SymmetryAugment(Doubled, ["U"])
