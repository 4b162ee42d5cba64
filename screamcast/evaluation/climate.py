# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A long rollout's climate against a truth run's (the Held-Suarez benchmark's and
``screamcast-evaluate --climate``): zonal means of u and T per layer, eddy
kinetic energy and eddy heat flux (deviations from the zonal mean at each time), the jets'
strength and latitude, and the global-mean temperature's drift. Zonal means on the cube are
area-weighted means over latitude bands."""

from __future__ import annotations

import numpy as np
import xarray as xr

BANDS = np.linspace(-90.0, 90.0, 37)  # 5-degree latitude bands


class ZonalStats:
    """Streams ``(U, V, T (layers, 6, n, n))`` times and keeps the zonal statistics."""

    def __init__(self, lat: np.ndarray, area: np.ndarray):
        self.band = np.clip(np.digitize(lat, BANDS) - 1, 0, len(BANDS) - 2).ravel()  # (P,)
        self.w = area.ravel()
        self.band_area = np.bincount(self.band, self.w, minlength=len(BANDS) - 1)
        self.sums = {k: 0.0 for k in ("u", "t", "eke", "vt")}
        self.count = 0
        self.global_t: list[float] = []

    def zonal(self, x: np.ndarray) -> np.ndarray:
        """``(L, P) -> (L, bands)`` area-weighted band means (0 in a band without cells: a
        coarse grid's polar band; its weight is 0 wherever bands are averaged)."""
        n = len(self.band_area)
        sums = np.stack([np.bincount(self.band, self.w * xi, minlength=n) for xi in x])
        return sums / np.where(self.band_area > 0, self.band_area, 1.0)

    def add(self, u: np.ndarray, v: np.ndarray, t: np.ndarray) -> None:
        u, v, t = (np.asarray(a, np.float64).reshape(a.shape[0], -1) for a in (u, v, t))
        zu, zv, zt = self.zonal(u), self.zonal(v), self.zonal(t)
        du, dv, dt = u - zu[:, self.band], v - zv[:, self.band], t - zt[:, self.band]
        self._last = {
            "u": zu,
            "t": zt,
            "eke": self.zonal(0.5 * (du * du + dv * dv)),
            "vt": self.zonal(dv * dt),
        }
        self.sums = {k: self.sums[k] + self._last[k] for k in self.sums}
        self.count += 1
        self.global_t.append(float((t * self.w).sum() / (t.shape[0] * self.w.sum())))

    def remove_last(self) -> None:
        """Forget the last time added (the one that departed)."""
        self.sums = {k: v - self._last[k] for k, v in self.sums.items()}
        self.count -= 1

    def means(self) -> dict[str, np.ndarray]:
        return {k: v / self.count for k, v in self.sums.items()}


def of_store(
    ds: xr.Dataset,
    every: int = 1,
    depart_kelvin: float | None = None,
    names: tuple[str, str, str] = ("U", "V", "T"),
) -> ZonalStats:
    """The zonal statistics of a cube store's ``U, V, T`` (layers), every ``every``-th time,
    up to a non-finite value or, with ``depart_kelvin``, to the first time the global-mean
    temperature is that far from its first value (a rollout that has left the climate: its
    statistics would be the runaway's; ``departed`` says when). ``names``: the eastward and
    northward winds and the temperature, each ``(time, layer, 6, n, n)`` or without layers."""
    stats = ZonalStats(ds["lat"].values, ds["area"].values)
    stats.departed = None
    for k in range(0, ds.sizes["time"], every):
        u, v, t = (_layers(ds[name].isel(time=k).values) for name in names)
        if not np.isfinite(u).all():
            break
        stats.add(u, v, t)
        if (
            depart_kelvin is not None
            and abs(stats.global_t[-1] - stats.global_t[0]) > depart_kelvin
        ):
            stats.departed = k
            stats.remove_last()
            break
    return stats


def _layers(x: np.ndarray) -> np.ndarray:
    """``(L, 6, n, n)``: a 2-D field as one layer."""
    return x if x.ndim == 4 else x[None]


def jets(zonal_u: np.ndarray) -> dict:
    """Each hemisphere's strongest zonal-mean westerly over the layers: speed, latitude, layer."""
    centres = 0.5 * (BANDS[1:] + BANDS[:-1])
    out = {}
    for name, side in (("south", centres < 0), ("north", centres > 0)):
        sub = np.where(side[None] & np.isfinite(zonal_u), zonal_u, -np.inf)
        layer, band = np.unravel_index(np.argmax(sub), sub.shape)
        out[name] = {
            "speed": float(zonal_u[layer, band]),
            "lat": float(centres[band]),
            "layer": int(layer),
        }
    return out


def compare(model: ZonalStats, truth: ZonalStats) -> dict:
    """The targets' numbers: jets, zonal-mean T bias (RMS over latitude and layer, area
    weighted by band), EKE and heat flux maxima and pattern correlations, the drift."""
    a, b = model.means(), truth.means()
    w = model.band_area / model.band_area.sum()  # (bands,)

    def corr(x, y):
        x, y = x - (x * w).sum(-1, keepdims=True), y - (y * w).sum(-1, keepdims=True)
        return float((x * y * w).sum() / np.sqrt((x * x * w).sum() * (y * y * w).sum()))

    t_bias = a["t"] - b["t"]
    g = np.array(model.global_t)
    n = max(len(g) // 10, 1)
    return {
        "jets": jets(a["u"]),
        "jets_truth": jets(b["u"]),
        "t_bias_rms": float(np.sqrt((t_bias**2 * w).sum() / a["t"].shape[0])),
        "u_bias_rms": float(np.sqrt(((a["u"] - b["u"]) ** 2 * w).sum() / a["u"].shape[0])),
        "u_pattern_corr": corr(a["u"], b["u"]),
        "t_pattern_corr": corr(a["t"], b["t"]),
        "eke_max": float(a["eke"].max()),
        "eke_max_truth": float(b["eke"].max()),
        "eke_global": float((a["eke"] * w).sum() / a["eke"].shape[0]),
        "eke_global_truth": float((b["eke"] * w).sum() / b["eke"].shape[0]),
        "eke_pattern_corr": corr(a["eke"], b["eke"]),
        "vt_max": float(np.abs(a["vt"]).max()),
        "vt_max_truth": float(np.abs(b["vt"]).max()),
        "vt_pattern_corr": corr(a["vt"], b["vt"]),
        "global_t_drift": float(g[-n:].mean() - g[:n].mean()),
        "times": model.count,
    }
