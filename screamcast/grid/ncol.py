# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Columns of an E3SM physics-grid (``ncol``) store <-> ``(face, y, x)`` of a :class:`PhysicsGrid`.

E3SM writes columns in global-id order, which :meth:`PhysicsGrid.column_index` gives exactly, so
a column store maps by index (no search over 25M columns). The store's own ``lat``/``lon`` are
still checked against the grid's exact centres, column by column, with a tolerance of
:data:`TOLERANCE_CELLS` cell widths plus the rounding of the coordinates' dtype: another grid,
a rotated cube, reordered columns or a regionally refined mesh fail by far more.
"""

from __future__ import annotations

import numpy as np

from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid

TOLERANCE_CELLS = 1e-7  # E3SM's own files match the reconstruction to ~1e-12 cell widths


class NcolMismatchError(ValueError):
    """The columns are not the cell centres of the expected grid, in E3SM's order."""


def position_tolerance(grid: PhysicsGrid, dtype: np.dtype) -> float:
    """Largest accepted distance (radians) from a cell centre for coordinates of ``dtype``:
    :data:`TOLERANCE_CELLS` cell widths, widened by a float32 degree's rounding (~7.5e-7 rad)
    when the coordinates are stored in single precision."""
    rounding = np.radians(360.0 * float(np.finfo(np.dtype(dtype)).eps)) if dtype.kind == "f" else 0
    return TOLERANCE_CELLS * grid.cell_width() + 2.0 * rounding


def worst_distance(grid_xyz: np.ndarray, lat: np.ndarray, lon: np.ndarray) -> tuple[int, float]:
    """Flat index and great-circle distance (radians) of the point farthest from its cell
    centre; ``grid_xyz (..., 3)`` against ``lat``/``lon`` in degrees of the same shape (NaN
    coordinates count as the farthest)."""
    xyz = latlon_to_xyz(np.asarray(lat, np.float64), np.asarray(lon, np.float64))
    chord = np.linalg.norm(xyz - grid_xyz, axis=-1).reshape(-1)
    worst = int(np.argmax(np.nan_to_num(chord, nan=np.inf)))
    dist = 2.0 * np.arcsin(min(float(np.nan_to_num(chord[worst], nan=2.0)) / 2.0, 1.0))
    return worst, dist


def ncol_to_grid_index(
    grid: PhysicsGrid, lat: np.ndarray, lon: np.ndarray, name: str = "store"
) -> np.ndarray:
    """Flat index into ``(6, n, n)`` of each column, ``(ncol,)``: ``field.flat[index] = columns``.

    ``lat``/``lon`` in degrees, in the store's column order. Raises :class:`NcolMismatchError`
    naming ``name``, the column and its distance when the columns are not ``grid``'s cells in
    E3SM's order.
    """
    lat, lon = np.asarray(lat).ravel(), np.asarray(lon).ravel()
    n = grid.n
    if lat.shape != lon.shape:
        raise NcolMismatchError(f"{name}: lat has {lat.size} columns but lon has {lon.size}")
    if lat.size != 6 * n * n:
        guess = np.sqrt(lat.size / 6.0)
        hint = f" (that is a face of {int(guess)} cells)" if guess == int(guess) else ""
        raise NcolMismatchError(
            f"{name}: {lat.size} columns{hint}, but the grid {grid.name} has 6*n^2={6 * n * n}"
        )
    index = grid.column_index()
    worst, dist = worst_distance(grid.xyz.reshape(-1, 3)[index], lat, lon)
    if dist > position_tolerance(grid, lat.dtype):
        cell = tuple(int(i) for i in np.unravel_index(index[worst], grid.shape))
        raise NcolMismatchError(
            f"{name}: column {worst} (lat={lat[worst]:.6f}, lon={lon[worst]:.6f}) is "
            f"{dist / grid.cell_width():.3g} cell widths ({np.degrees(dist):.3g} degrees) from "
            f"the centre of the {grid.name} cell (face, y, x) = {cell} where E3SM's column "
            f"order puts it (tolerance {TOLERANCE_CELLS:g} cell widths): another grid, a rotated "
            "cube, reordered columns or a regionally refined mesh"
        )
    return index


def columns_to_grid(values: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """``(..., ncol) -> (..., 6, n, n)`` using ``index`` from :func:`ncol_to_grid_index`."""
    out = np.empty(values.shape[:-1] + (6 * n * n,), dtype=values.dtype)
    out[..., index] = values
    return out.reshape(values.shape[:-1] + (6, n, n))  # (..., face, y, x)


def grid_to_columns(field: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``(..., 6, n, n) -> (..., ncol)`` in the column order that ``index`` describes."""
    flat = field.reshape(field.shape[:-3] + (-1,))  # (..., 6 n^2)
    return flat[..., index]
