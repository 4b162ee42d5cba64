# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A tracer carried by the state's own wind: emitted where the ground is high, moved by the
Rossby-Haurwitz wave, decaying with a fixed lifetime.

Why: a tracer moved by a wind that is not in the state cannot be learnt from the state (the
demo's old tracer rode a tilted solid-body rotation; docs/training.md measured the network
fitting it by shortcut, at a cost to every other variable). This one obeys

    dq/dt + V . grad q = (S - q) / tau,    S = orography / 2500 m,

with ``V`` the wave's wind (in the state as ``u, v``) and ``S`` a function of a static input, so
``q(t + 1 h)`` is a function of what the network sees. Its statistically steady solution is the
source averaged back along the trajectory with weight ``exp(-s / tau) / tau``
(``../shared/reference/analytic-flows.md``, "A tracer in a non-rigid flow"): integrated here with
RK4 over ``memory`` lifetimes (the part left out weighs ``exp(-memory)``, 3e-4 at 8) and
Simpson's rule along the RK4 nodes.

The wave is steady in the frame turning with it at ``nu`` about the pole; there the unit-sphere
velocity is ``x cross grad F`` with the polynomial
``F = (nu - w) z + K z Re((x + i y)^R)``, so a trajectory costs no trigonometry. The wave (and
the cube) are unchanged by a quarter turn about the pole, so one quarter of the points is
integrated and the rest rotated from it.
"""

from __future__ import annotations

import numpy as np

MEMORY_LIFETIMES = 8
STEP_HOURS = 1.0  # RK4 step; departure points to ~3e-5 of the unit sphere over 13 days


def _shape_terms(x, y, z) -> tuple[np.ndarray, np.ndarray]:
    """``synthetic.static_fields``' ``shape = A + B`` at points ``(x, y, z)``, without
    trigonometry: ``A = sin(2 lon + 0.5) cos(3 lat)`` (odd under a quarter turn about the pole),
    ``B = 0.3 sin(5 lat)`` (even)."""
    c2 = x * x + y * y  # cos^2 lat
    # sin(2 lon) cos(3 lat) = 2xy / c2 * cos(lat) (4 c2 - 3), likewise cos(2 lon)
    a = (2 * x * y * np.cos(0.5) + (x * x - y * y) * np.sin(0.5)) * (4 * c2 - 3)
    a = a / np.sqrt(np.maximum(c2, 1e-300))
    return a, 0.3 * z * (16 * z**4 - 20 * z**2 + 5)


def emission(xyz: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """The source ``S`` at points ``(..., 3)``: ``synthetic.static_fields``' orography / 2500 m,
    ``max(0, shape - 0.2) ** 1.5``; ``sign=-1``: at the points turned a quarter about the pole."""
    return _source_from_terms(*_shape_terms(*np.moveaxis(xyz, -1, 0)), sign)


def _source_from_terms(a: np.ndarray, b: np.ndarray, sign: float) -> np.ndarray:
    return np.maximum(0.0, sign * a + b - 0.2) ** 1.5


def wave_velocity(p, X: np.ndarray) -> np.ndarray:
    """The Rossby-Haurwitz wind in the frame turning with the wave, on the unit sphere (1/s),
    at points ``X (3, N)`` (coordinates first, so each is one contiguous row: this is the inner
    loop of the data generator): ``x cross grad F`` (module docstring), ``(3, N)``."""
    x, y, z = X
    re, im = x, y  # Re, Im of (x + i y)^(R - 1), by repeated multiplication
    for _ in range(p.R - 2):
        re, im = re * x - im * y, re * y + im * x
    kz = p.K * z
    gx = kz * p.R * re  # d/dx of K z Re(zeta^R)
    gy = -kz * p.R * im  # d/dy
    gz = (p.nu - p.w) + p.K * (re * x - im * y)
    return np.stack([y * gz - z * gy, z * gx - x * gz, x * gy - y * gx])


def _turn(xyz: np.ndarray, angle) -> np.ndarray:
    """Points ``(..., 3)`` turned by ``angle`` (radians, broadcast over ``...``) about the pole."""
    c, s = np.cos(angle), np.sin(angle)
    x, y = xyz[..., 0], xyz[..., 1]
    z = np.broadcast_to(xyz[..., 2], np.broadcast_shapes(x.shape, np.shape(c)))
    return np.stack([c * x - s * y, s * x + c * y, z], axis=-1)


def _averaged_source(p, start: np.ndarray, angle: np.ndarray, lifetime_s: float, memory: int, h):
    """``int_0^{memory tau} exp(-s/tau)/tau S(X(-s)) ds`` along the trajectories that end at
    ``start (N, 3)`` in the wave's frame (steady there), whose frame is turned by ``angle (N,)``
    from the earth's at the end: RK4 backward, ``S`` at each node in the earth's frame (turned
    back by ``nu s``), Simpson's rule. Returns the integral for ``S`` and for ``S`` turned a
    quarter about the pole, ``(2, N)``."""
    steps = 2 * int(np.ceil(memory * lifetime_s / (2 * h)))  # even, for Simpson
    h = memory * lifetime_s / steps
    cos_end, sin_end = np.cos(angle), np.sin(angle)  # (N,)

    def source(X, s):
        """``S`` and ``S`` turned a quarter, at wave-frame points ``X`` ``s`` seconds back."""
        c = cos_end * np.cos(p.nu * s) + sin_end * np.sin(p.nu * s)  # cos(angle - nu s)
        sn = sin_end * np.cos(p.nu * s) - cos_end * np.sin(p.nu * s)
        a, b = _shape_terms(c * X[0] - sn * X[1], sn * X[0] + c * X[1], X[2])
        return _source_from_terms(a, b, 1.0), _source_from_terms(a, b, -1.0)

    X = np.ascontiguousarray(start.T)  # (3, N)
    total = np.stack(source(X, 0.0))  # (2, N); the s = 0 node has Simpson weight 1
    for j in range(1, steps + 1):
        k1 = wave_velocity(p, X)
        k2 = wave_velocity(p, X - 0.5 * h * k1)
        k3 = wave_velocity(p, X - 0.5 * h * k2)
        k4 = wave_velocity(p, X - h * k3)
        X = X - h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        X /= np.sqrt(X[0] ** 2 + X[1] ** 2 + X[2] ** 2)
        weight = (1 if j == steps else (4 if j % 2 else 2)) * np.exp(-j * h / lifetime_s)
        even, odd = source(X, j * h)
        total[0] += weight * even
        total[1] += weight * odd
    return total * h / (3 * lifetime_s)


def wave_tracer(
    p, seconds, xyz: np.ndarray, memory: int = MEMORY_LIFETIMES, step_hours: float = STEP_HOURS
) -> np.ndarray:
    """The tracer at ``seconds`` (a number, or ``(T,)`` of them in one call) after the wave's
    phase origin, at points ``xyz (..., 3)``; shape ``(...)`` or ``(T, ...)``. ``p``:
    ``synthetic.FlowParameters`` (the wave, ``lon0`` and ``tracer_lifetime_hours``)."""
    times = np.atleast_1d(np.asarray(seconds, dtype=float))  # (T,)
    points = xyz.reshape(-1, 3)  # (N, 3)
    lon = np.arctan2(points[:, 1], points[:, 0])
    quarter = np.floor(lon / (np.pi / 2)).astype(int) % 4  # (N,)
    home = _turn(points, -quarter * np.pi / 2)  # every point in the quarter 0 <= lon < 90
    _, first, inverse = np.unique(np.round(home, 9), axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)  # (N,)
    home = home[first]  # (U, 3): one point for each distinct home position
    # the points' positions in the frame turning with the wave, at each time
    angle = np.broadcast_to(p.lon0 + p.nu * times[:, None], (len(times), len(home)))  # (T, U)
    start = _turn(home[None], -angle)  # (T, U, 3)
    lifetime = p.tracer_lifetime_hours * 3600.0
    step = step_hours * 3600.0
    q = _averaged_source(p, start.reshape(-1, 3), angle.reshape(-1), lifetime, memory, step)
    q = q.reshape(2, len(times), len(home))  # (parity, T, U)
    # the wave is unchanged by a quarter turn; the source's odd part changes sign
    q = q[quarter % 2, :, inverse].T  # (T, N)
    q = q.reshape(len(times), *xyz.shape[:-1])
    return q if np.ndim(seconds) else q[0]
