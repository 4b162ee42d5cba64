# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Spherical-harmonic power spectra of cube fields: is the emulator blurring small scales?

A cube field is put on a Driscoll-Healy grid (equally spaced in latitude and longitude, the
sampling pyshtools expands exactly) by inverse-distance weighting of its 4 nearest cell
centres, then expanded with pyshtools (a maintained Fortran/numpy library with wheels and no
torch dependency: torch-harmonics' current wheel pins its own torch release, which would
replace a GPU container's). The power per total wavenumber ``l`` is pyshtools' ``4pi``-
normalised spectrum: a field's variance is the sum over ``l``.

The regridding smooths the smallest cube scales; :func:`regrid_transfer` measures it, and
comparisons between a rollout and its truth (both regridded the same way) are fair at every
``l``, their absolute values only where the transfer is near 1 (docs/rollout.md).
"""

from __future__ import annotations

import numpy as np

from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.regrid import latlon_points
from screamcast.grid.to_latlon import CubeToLatLon, PointsToLatLon


def default_lmax(n: int) -> int:
    """The largest degree a face size resolves, about: 6 n^2 cells ~ (l + 1)^2 coefficients,
    halved for the regridding (measured: see :func:`regrid_transfer`)."""
    return max(2, int(np.sqrt(6.0) * n) // 2)


def dh_latlon(lmax: int) -> tuple[np.ndarray, np.ndarray]:
    """The Driscoll-Healy grid for ``lmax`` (sampling 2, no repeated pole/meridian):
    ``lat (nlat,)`` from 90 down, ``lon (2 nlat,)`` from 0, degrees."""
    nlat = 2 * lmax + 2
    return 90.0 - 180.0 * np.arange(nlat) / nlat, 360.0 * np.arange(2 * nlat) / (2 * nlat)


def latlon_spectrum(values: np.ndarray) -> np.ndarray:
    """Power per degree ``l = 0..lmax`` of a field on a Driscoll-Healy grid ``(nlat, 2 nlat)``."""
    import pyshtools as pysh

    coeffs = pysh.SHGrid.from_array(np.ascontiguousarray(values), grid="DH").expand(
        normalization="4pi", csphase=1
    )
    return coeffs.spectrum(unit="per_l")


class CubeSpectrum:
    """``spectrum(field (6, n, n)) -> (lmax + 1,)`` for one grid; the regridding is built once."""

    def __init__(self, grid: PhysicsGrid, lmax: int | None = None):
        self.lmax = default_lmax(grid.n) if lmax is None else lmax
        self.to_latlon = CubeToLatLon(grid, *dh_latlon(self.lmax))

    def __call__(self, field: np.ndarray) -> np.ndarray:
        return latlon_spectrum(self.to_latlon(field))

    def transfer(self, degrees) -> np.ndarray:
        """What the regridding keeps of each degree in ``degrees``: the measured power of a
        field with all its power at that degree over its true power (1: kept; below: smoothed)."""
        out = []
        for l in degrees:
            field, true = degree_field(self.to_latlon.grid, l, self.lmax, seed=l)
            out.append(self(field)[l] / true[l])
        return np.array(out)


class LatLonSpectrum:
    """``spectrum(field (nlat, nlon)) -> (lmax + 1,)`` for a field on a global regular lat-lon
    grid (a lat-lon truth): interpolated to the Driscoll-Healy grid as cube fields are."""

    def __init__(self, lat: np.ndarray, lon: np.ndarray, lmax: int):
        self.lmax = lmax
        xyz = latlon_to_xyz(*latlon_points(lat, lon))  # (nlat nlon, 3)
        self.to_latlon = PointsToLatLon(xyz, *dh_latlon(lmax))

    def __call__(self, field: np.ndarray) -> np.ndarray:
        return latlon_spectrum(self.to_latlon(field))


def degree_field(grid: PhysicsGrid, l: int, lmax: int, seed: int = 0):
    """A random field whose power is all at degree ``l``, exactly on the cube's cell centres:
    ``(field (6, n, n), its true spectrum (lmax + 1,))``."""
    import pyshtools as pysh

    c = np.zeros((2, lmax + 1, lmax + 1))
    c[:, l, : l + 1] = np.random.default_rng(seed).standard_normal((2, l + 1))
    c[1, l, 0] = 0.0  # no sine term at m = 0
    coeffs = pysh.SHCoeffs.from_array(c, normalization="4pi", csphase=1)
    values = coeffs.expand(lat=grid.lat.ravel(), lon=grid.lon.ravel())
    return values.reshape(grid.shape), coeffs.spectrum(unit="per_l")


def regrid_transfer(grid: PhysicsGrid, degrees, lmax: int | None = None) -> np.ndarray:
    """:meth:`CubeSpectrum.transfer` for a grid (builds the regridding)."""
    return CubeSpectrum(grid, lmax).transfer(degrees)
