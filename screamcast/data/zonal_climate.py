# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Zonal climate statistics of cube states (numpy): zonal means of u and T per layer, eddy
kinetic energy and eddy heat flux (deviations from the zonal mean at each time), the jets'
strength and latitude, and their comparison with a truth's. Zonal means on the cube are
area-weighted means over latitude bands. Used by the climate report
(:mod:`screamcast.evaluation.climate`) and by training's free runs, which choose a stage's
best checkpoint by its climate (:mod:`screamcast.train.free_run`)."""

from __future__ import annotations

import numpy as np

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
