# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The climate report's figures (:mod:`screamcast.evaluation.climate_report`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from screamcast.evaluation.climate import BANDS
from screamcast.evaluation.cube_net import pyplot

plt = pyplot()

CENTRES = 0.5 * (BANDS[1:] + BANDS[:-1])


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=80, bbox_inches="tight")  # no label or title clipped
    plt.close(fig)
    return path


def plot_zonal(path: Path, model: dict, truth: dict) -> Path:
    """Zonal-mean u and T by latitude and layer: truth, rollout, rollout - truth."""
    fig, axes = plt.subplots(2, 3, figsize=(12, 6), sharex=True, sharey=True)
    for row, (key, unit) in enumerate((("u", "m/s"), ("t", "K"))):
        a, b = model[key], truth[key]  # (layers, bands)
        lo, hi = np.nanmin([a.min(), b.min()]), np.nanmax([a.max(), b.max()])
        d = np.abs(a - b).max() or 1.0
        panels = (
            ("truth", b, "viridis", lo, hi),
            ("rollout", a, "viridis", lo, hi),
            ("rollout - truth", a - b, "RdBu_r", -d, d),
        )
        for ax, (title, z, cmap, vmin, vmax) in zip(axes[row], panels, strict=True):
            layers = np.arange(z.shape[0] + 1) - 0.5
            m = ax.pcolormesh(BANDS, layers, z, cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_yticks(range(z.shape[0]))  # a tick at each layer's centre
            fig.colorbar(m, ax=ax, label=unit)
            ax.set_title(f"zonal-mean {key}: {title}")
    axes[0, 0].invert_yaxis()  # once: the axes share y, each call would flip them all
    for ax in axes[:, 0]:
        ax.set_ylabel("layer (0: top)")
    for ax in axes[1]:
        ax.set_xlabel("latitude")
    return _save(fig, path)


def plot_eke(path: Path, model: np.ndarray, truth: np.ndarray) -> Path:
    """Eddy kinetic energy by latitude, each layer (rollout solid, truth dashed)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for k in range(model.shape[0]):
        (line,) = ax.plot(CENTRES, model[k], label=f"layer {k}")
        ax.plot(CENTRES, truth[k], "--", color=line.get_color())
    ax.set_xlabel("latitude")
    ax.set_ylabel("EKE (m2/s2)")
    ax.set_title("eddy kinetic energy: rollout (solid), truth (dashed)")
    ax.legend()
    return _save(fig, path)


def plot_spectrum(path: Path, spectra: dict, when: str) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, style in (("truth", "k--"), ("rollout", "C0-")):
        power = np.asarray(spectra[name])
        ax.loglog(np.arange(1, len(power)), power[1:], style, label=name)
    ax.set_xlabel("spherical-harmonic degree")
    ax.set_ylabel("kinetic energy per degree")
    ax.set_title(f"top layer's kinetic energy\nrollout at {when}; truth: its mean")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_global_t(path: Path, model: list, truth: list, step_days: float = 1.0) -> Path:
    """The rollout's global-mean T by day (``step_days`` between its times)."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(np.arange(len(model)) * step_days, model, label="rollout")
    mean, sd = float(np.mean(truth)), float(np.std(truth))
    ax.axhline(mean, color="k", ls="--", label="truth's mean")
    ax.axhspan(mean - 1.0, mean + 1.0, color="k", alpha=0.1, label="truth's mean +- 1 K")
    ax.set_xlabel("days from the rollout's start")
    ax.set_ylabel("global-mean T (K)")
    ax.set_title(f"global-mean temperature (truth's own spread {sd:.2f} K)")
    ax.legend()
    return _save(fig, path)
