# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""First-order conservative remapping of the physics grid onto a regular lat-lon grid.

Each lat-lon cell takes the mean of the cube cells it overlaps, weighted by the area of each
overlap (what ncremap, ESMF and TempestRemap call conservative, order 1): means over cells stay
means, and the global integral is kept. :class:`~screamcast.grid.to_latlon.CubeToLatLonMean`
is not this: it gives each cube cell wholly to its nearest lat-lon point, so a lat-lon cell's
value is the mean of whole cube cells around it, not of its own area.

How the overlaps are measured: the map ``(lon, lat) -> (lon, sin lat)`` keeps areas
(Lambert's cylindrical equal-area projection), and lat-lon cells are rectangles there. A cube
cell's great-circle edges become curves, drawn as :data:`POINTS_PER_EDGE` straight pieces, the
same for the two cells beside an edge, so the cells still tile the plane without gap or
overlap. A rectangle's overlap with a polygon is a line integral over the polygon's edges
(Green's theorem with ``M = clip(x, a, b) - a``), exact in closed form for straight pieces. A
cell around a pole is closed along the pole's line ``sin lat = +-1``; a corner on the pole
becomes that line's piece between its two edges' longitudes.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from screamcast.grid.physics import PhysicsGrid

POINTS_PER_EDGE = 16  # straight pieces per cube-cell edge, each with its sliver added back
_CHUNK = 4096  # (cell, lat-lon cell) pairs measured at once (memory ~ 40 MB)


def _edge_points(corners: np.ndarray, k: int) -> np.ndarray:
    """``(C, 4, 3) -> (C, 4 k, 3)``: ``k`` points along each great-circle edge, from each
    corner towards the next (counter-clockwise)."""
    s = (np.arange(k) / k)[None, None, :, None]  # (1, 1, k, 1)
    a, b = corners[:, :, None, :], np.roll(corners, -1, axis=1)[:, :, None, :]
    p = (1 - s) * a + s * b  # (C, 4, k, 3): on the great circle of a and b once normalised
    p /= np.linalg.norm(p, axis=-1, keepdims=True)
    return p.reshape(len(corners), -1, 3)


def _plane_polygons(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boundary points ``(C, L, 3)`` (unit vectors, counter-clockwise) -> the closed polygons
    ``(lon, sin lat)`` in the equal-area plane, ``(C, 2 L + 3)`` each: longitudes continuous
    along the boundary; a pole point split into two at its neighbours' longitudes; a cell
    around a pole closed along ``z = +-1`` (else the last three points repeat the last one)."""
    lon, z = np.arctan2(points[..., 1], points[..., 0]), np.clip(points[..., 2], -1, 1)
    pole = np.abs(z) > 1 - 1e-12
    lon2 = np.stack(
        [np.where(pole, np.roll(lon, 1, 1), lon), np.where(pole, np.roll(lon, -1, 1), lon)], -1
    )
    lon2 = np.unwrap(lon2.reshape(len(lon), -1), axis=1)  # (C, 2 L)
    z2 = np.repeat(z, 2, axis=1)
    close = np.angle(np.exp(1j * (lon2[:, 0] - lon2[:, -1])))  # the last piece's own turn
    winding = np.rint((lon2[:, -1] + close - lon2[:, 0]) / (2 * np.pi))  # +1 north, -1 south
    around = winding != 0
    first = lon2[:, 0] + 2 * np.pi * winding
    ex_lon = np.where(around[:, None], np.stack([first, first, lon2[:, 0]], 1), lon2[:, -1:])
    ex_z = np.where(around[:, None], np.stack([z2[:, 0], winding, winding], 1), z2[:, -1:])
    return np.concatenate([lon2, ex_lon], 1), np.concatenate([z2, ex_z], 1)


def _strip_integral(x0, y0, x1, y1, a, c, d) -> np.ndarray:
    """``sum over pieces of the integral of max(x - a, 0) dy`` over the part of each piece
    with ``c <= y <= d``, pieces ``(x0, y0) -> (x1, y1)``, ``(P, L)`` arrays, ``a, c, d``
    ``(P, 1)``: the overlap of the polygon with ``x >= a, c <= y <= d``."""
    dy = y1 - y0
    safe = np.where(dy == 0, 1.0, dy)
    tc, td = (c - y0) / safe, (d - y0) / safe
    lo = np.clip(np.minimum(tc, td), 0, 1)
    hi = np.clip(np.maximum(tc, td), 0, 1)
    gl, gh = x0 + lo * (x1 - x0) - a, x0 + hi * (x1 - x0) - a
    both = (gl >= 0) & (gh >= 0)
    mixed = (gl > 0) != (gh > 0)
    span = np.where(mixed, np.abs(gl) + np.abs(gh), 1.0)
    mean = np.where(both, 0.5 * (gl + gh), np.where(mixed, np.maximum(gl, gh) ** 2 / (2 * span), 0))
    return (np.where(dy == 0, 0.0, dy * (hi - lo)) * mean).sum(axis=1)


def _slivers(points: np.ndarray, lon_edges: np.ndarray, z_edges: np.ndarray):
    """What each straight piece leaves out: the signed area between a cell's great-circle
    piece and its chord in the equal-area plane (``integral of lon dz`` along the arc by
    8-point Gauss-Legendre, less the chord's), and the lat-lon cell of the chord's middle.
    The cell beside the piece gets the opposite area in the same lat-lon cell, so the
    lat-lon cells' sums stay exact while each cube cell's reaches its spherical area.
    ``points (C, L, 3)`` -> ``(lat-lon cell, cube cell, area)``, each ``(C L,)``."""
    p, q = points, np.roll(points, -1, axis=1)  # (C, L, 3): each piece's ends
    s, w = np.polynomial.legendre.leggauss(8)
    s, w = 0.5 * (s + 1), 0.5 * w  # on [0, 1]
    P = (1 - s)[:, None, None, None] * p + s[:, None, None, None] * q  # (8, C, L, 3)
    norm = np.linalg.norm(P, axis=-1)
    dz = (q[..., 2] - p[..., 2]) / norm - P[..., 2] * ((P * (q - p)).sum(-1)) / norm**3
    lon_p, lon_q = (np.arctan2(v[..., 1], v[..., 0]) for v in (p, q))
    lon_q = lon_p + np.angle(np.exp(1j * (lon_q - lon_p)))  # continuous along the piece
    line = lon_p + s[:, None, None] * (lon_q - lon_p)  # (8, C, L)
    lon = line + np.angle(np.exp(1j * (np.arctan2(P[..., 1], P[..., 0]) - line)))
    arc = (w[:, None, None] * lon * dz).sum(0)
    area = arc - 0.5 * (lon_p + lon_q) * (q[..., 2] - p[..., 2])
    pole = (np.abs(p[..., 2]) > 1 - 1e-12) | (np.abs(q[..., 2]) > 1 - 1e-12)  # meridians
    area = np.where(pole, 0.0, area)
    nlat, nlon, step = len(z_edges) - 1, len(lon_edges) - 1, lon_edges[1]
    row = np.clip(np.searchsorted(z_edges, 0.5 * (p[..., 2] + q[..., 2])) - 1, 0, nlat - 1)
    col = np.floor(0.5 * (lon_p + lon_q) / step).astype(int) % nlon
    cell = np.broadcast_to(np.arange(len(points))[:, None], area.shape)
    return (row * nlon + col).ravel(), cell.ravel(), area.ravel()


def _pairs(lon, z, lon_edges, z_edges):
    """Every (cell, lon index, lat row) whose boxes may overlap: the lon index ``k`` may
    pass the grid's ends (column ``k mod nlon``, its edges shifted by a turn)."""
    step = lon_edges[1] - lon_edges[0]
    k0 = np.floor((lon.min(1) - lon_edges[0]) / step).astype(int)
    k1 = np.floor((lon.max(1) - lon_edges[0]) / step).astype(int)
    nlat = len(z_edges) - 1
    r0 = np.clip(np.searchsorted(z_edges, z.min(1), "right") - 1, 0, nlat - 1)
    r1 = np.clip(np.searchsorted(z_edges, z.max(1), "left") - 1, 0, nlat - 1)
    nk, nr = k1 - k0 + 1, r1 - r0 + 1
    cell = np.repeat(np.arange(len(lon)), nk * nr)
    j = np.arange(cell.size) - np.repeat(np.cumsum(nk * nr) - nk * nr, nk * nr)  # 0.. per cell
    return cell, k0[cell] + j // nr[cell], r0[cell] + j % nr[cell]


def overlap_matrix(grid: PhysicsGrid, nlat: int, nlon: int, k: int = POINTS_PER_EDGE):
    """Overlap areas (sr) of lat-lon cells (rows, lat-major) with cube cells (columns, flat
    ``(face, y, x)``): a ``(nlat nlon, 6 n^2)`` sparse matrix. The lat-lon grid has cell
    edges every ``180 / nlat`` degrees from the south pole and ``360 / nlon`` from 0 east."""
    lon_edges = np.linspace(0, 2 * np.pi, nlon + 1)
    z_edges = np.sin(np.radians(np.linspace(-90, 90, nlat + 1)))
    z_edges[0], z_edges[-1] = -1.0, 1.0
    corners = grid.corners.reshape(-1, 4, 3)  # (6 n n, 4, 3)
    rows, cols, values = [], [], []
    for c0 in range(0, len(corners), 2048):
        points = _edge_points(corners[c0 : c0 + 2048], k)
        lon, z = _plane_polygons(points)
        row, cell, area = _slivers(points, lon_edges, z_edges)
        rows.append(row), cols.append(cell + c0), values.append(area)
        cell, kk, rr = _pairs(lon, z, lon_edges, z_edges)
        step = lon_edges[1]
        for p0 in range(0, cell.size, _CHUNK):
            c, kp, r = (x[p0 : p0 + _CHUNK] for x in (cell, kk, rr))
            x0, y0 = lon[c], z[c]
            x1, y1 = np.roll(x0, -1, 1), np.roll(y0, -1, 1)
            a, lo, hi = (kp * step)[:, None], z_edges[r][:, None], z_edges[r + 1][:, None]
            area = _strip_integral(x0, y0, x1, y1, a, lo, hi)
            area -= _strip_integral(x0, y0, x1, y1, a + step, lo, hi)
            keep = area > 0
            rows.append((r * nlon + kp % nlon)[keep])
            cols.append((c + c0)[keep])
            values.append(area[keep])
    shape = (nlat * nlon, len(corners))
    return sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=shape
    )  # duplicates (a polar cell seen at k and k + nlon) are summed


class CubeToLatLonConservative:
    """``(..., 6, n, n) -> (..., nlat, nlon)``: each lat-lon cell's area-weighted mean of the
    cube cells it overlaps. ``lat``/``lon`` are the cells' centres (degrees), ``area`` their
    areas (sr); ``lat_bounds``/``lon_bounds`` ``(nlat, 2)``/``(nlon, 2)``."""

    def __init__(self, grid: PhysicsGrid, nlat: int, nlon: int):
        if nlat < 1 or nlon < 1:
            raise ValueError(f"lat-lon grid {nlat}x{nlon}: both sizes must be positive")
        self.grid, self.shape = grid, (nlat, nlon)
        self.weights = overlap_matrix(grid, nlat, nlon)  # (P, 6 n n)
        self.covered = np.asarray(self.weights.sum(axis=1)).ravel()  # (P,) sr
        lat_e, lon_e = np.linspace(-90, 90, nlat + 1), np.linspace(0, 360, nlon + 1)
        self.lat_bounds = np.stack([lat_e[:-1], lat_e[1:]], 1)
        self.lon_bounds = np.stack([lon_e[:-1], lon_e[1:]], 1)
        self.lat, self.lon = self.lat_bounds.mean(1), self.lon_bounds.mean(1)
        band = np.diff(np.sin(np.radians(lat_e)))  # (nlat,)
        self.area = band[:, None] * np.radians(np.diff(lon_e))[None, :]  # (nlat, nlon)

    def __call__(self, fields: np.ndarray) -> np.ndarray:
        fields = np.asarray(fields, np.float64)
        lead = fields.shape[:-3]
        flat = fields.reshape(-1, int(np.prod(fields.shape[-3:]))).T  # (6 n n, M)
        mean = (self.weights @ flat) / self.covered[:, None]  # (P, M)
        return mean.T.reshape(*lead, *self.shape)  # (..., nlat, nlon)
