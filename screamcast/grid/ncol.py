# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Columns of an unstructured (``ncol``) store <-> ``(face, y, x)`` of a :class:`CubedSphereGrid`.

SCREAM writes physics output on ``ne*pg2`` grids as a flat ``ncol`` dimension. The order of the
columns in a file is not something to trust, so each column is matched to the grid cell whose
centre is nearest: the inverse gnomonic projection gives the cell that contains the column
(for a point within half a cell of a centre that is the nearest centre, with no tree to build
over 25M columns), and the match is accepted only if the column sits within ``tol`` cell widths
of that centre and every cell is matched exactly once.
"""

from __future__ import annotations

import numpy as np

from screamcast.grid.cubed_sphere import CubedSphereGrid, latlon_to_xyz, xyz_to_face_angles


class NcolMismatchError(ValueError):
    """The columns are not the cell centres of the expected grid."""


def ncol_to_grid_index(
    grid: CubedSphereGrid, lat: np.ndarray, lon: np.ndarray, tol: float = 0.01, name: str = "store"
) -> np.ndarray:
    """Flat index into ``(6, n, n)`` of each column, ``(ncol,)``: ``field.flat[index] = columns``.

    ``lat``/``lon`` in degrees. ``tol`` is the largest accepted distance from a cell centre, in
    cell widths (E3SM's element map moves pg2 centres by ~2e-4 of a cell). Raises
    :class:`NcolMismatchError` naming ``name`` when the columns are not this grid.
    """
    lat = np.asarray(lat, dtype=np.float64).ravel()
    lon = np.asarray(lon, dtype=np.float64).ravel()
    n = grid.n
    if lat.shape != lon.shape:
        raise NcolMismatchError(f"{name}: lat has {lat.size} columns but lon has {lon.size}")
    if lat.size != 6 * n * n:
        guess = np.sqrt(lat.size / 6.0)
        hint = f" (that is face size n={int(guess)})" if guess == int(guess) else ""
        raise NcolMismatchError(
            f"{name}: {lat.size} columns{hint}, but the configured grid n={n} has 6*n^2={6 * n * n}"
        )
    xyz = latlon_to_xyz(lat, lon)  # (ncol, 3)
    face, alpha, beta = xyz_to_face_angles(xyz)
    x = np.clip(np.floor((alpha + 0.25 * np.pi) / grid.dalpha), 0, n - 1).astype(np.int64)
    y = np.clip(np.floor((beta + 0.25 * np.pi) / grid.dalpha), 0, n - 1).astype(np.int64)
    index = (face * n + y) * n + x
    centre = grid.xyz.reshape(-1, 3)[index]  # (ncol, 3)
    dist = 2.0 * np.arcsin(np.minimum(np.linalg.norm(xyz - centre, axis=1) / 2.0, 1.0))
    worst = int(np.argmax(dist))
    limit = tol * grid.cell_width()
    if dist[worst] > limit:
        raise NcolMismatchError(
            f"{name}: column {worst} (lat={lat[worst]:.6f}, lon={lon[worst]:.6f}) is "
            f"{dist[worst] / grid.cell_width():.3g} cell widths from the nearest cell centre of "
            f"the n={n} equiangular cubed sphere (tolerance {tol}): not this grid"
        )
    counts = np.bincount(index, minlength=6 * n * n)
    if counts.max() > 1:
        dup = int(np.argmax(counts))
        raise NcolMismatchError(
            f"{name}: {int((counts > 1).sum())} grid cells are matched by several columns "
            f"(cell {np.unravel_index(dup, grid.shape)} by {counts[dup]})"
        )
    return index


def columns_to_grid(values: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """``(..., ncol) -> (..., 6, n, n)`` using ``index`` from :func:`ncol_to_grid_index`."""
    out = np.empty(values.shape[:-1] + (6 * n * n,), dtype=values.dtype)
    out[..., index] = values
    return out.reshape(values.shape[:-1] + (6, n, n))


def grid_to_columns(field: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``(..., 6, n, n) -> (..., ncol)`` in the column order that ``index`` describes."""
    flat = field.reshape(field.shape[:-3] + (-1,))
    return flat[..., index]
