# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The evaluation report's figures: skill per lead, drift, bias maps, spectra, tile imprint.

Each function draws one PNG from a finished aggregator (or the step table);
:mod:`screamcast.evaluation.evaluate` ties them into report.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from screamcast.evaluation.cube_net import cube_net, pyplot
from screamcast.evaluation.drift import GlobalMeanDrift
from screamcast.evaluation.panel_grid import panel_grid
from screamcast.evaluation.power_spectra import PowerSpectra
from screamcast.evaluation.rmse import RmseBias


def plot_drift(path: str | Path, drift: GlobalMeanDrift) -> Path:
    """Global means of prediction and truth per step, one panel per variable (drift)."""

    plt = pyplot()
    V = len(drift.variables)
    fig, axes = plt.subplots(V, 1, figsize=(7, 2.2 * V), sharex=True, constrained_layout=True)
    for ax, v in zip(np.atleast_1d(axes), drift.variables, strict=True):
        ax.plot(drift.mean[v][1], "k-", label="truth")
        ax.plot(drift.mean[v][0], "C1-", label="rollout")
        ax.set_ylabel(f"{v} (global mean)")
    np.atleast_1d(axes)[0].legend()
    np.atleast_1d(axes)[-1].set_xlabel("step")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def plot_bias_maps(path: str | Path, skill: RmseBias, lat: np.ndarray, grid=None) -> Path:
    """Time-mean bias of every variable: on the cube net, on a 2-degree lat-lon map (when
    scored on the cube of ``grid``; a lat-lon truth's map is the first panel) and its
    area-weighted zonal mean in 5-degree latitude bands (right)."""

    plt = pyplot()
    mean_bias = skill.mean_bias  # (V, F, a, b)
    edges = np.arange(-90.0, 90.1, 5.0)
    band = np.clip(np.digitize(lat, edges) - 1, 0, edges.size - 2)  # (F, a, b)
    V = len(skill.variables)
    to_map = None
    if grid is not None and mean_bias.shape[1] == 6:
        from screamcast.grid.to_latlon import CubeToLatLon

        to_map = CubeToLatLon(grid, np.arange(-89.0, 90.0, 2.0), np.arange(-179.0, 180.0, 2.0))
    ratios = [2.2, 2.2, 1] if to_map is not None else [2.2, 1]
    fig, axes = plt.subplots(
        V,
        len(ratios),
        figsize=(5 * len(ratios) + 1, 2.6 * V),
        constrained_layout=True,
        gridspec_kw={"width_ratios": ratios},
        squeeze=False,
    )
    for i, v in enumerate(skill.variables):
        b = mean_bias[i]
        e = float(np.nanmax(np.abs(b))) or 1.0
        im = axes[i, 0].imshow(cube_net(b), origin="lower", cmap="RdBu_r", vmin=-e, vmax=e)
        axes[i, 0].set_title(f"{v}: time-mean bias")
        axes[i, 0].set_axis_off()
        fig.colorbar(im, ax=axes[i, 0], shrink=0.8)
        if to_map is not None:
            extent = (-180.0, 180.0, -90.0, 90.0)
            kw = dict(origin="lower", cmap="RdBu_r", vmin=-e, vmax=e, extent=extent)
            axes[i, 1].imshow(to_map(b), **kw)  # (90, 180)
            axes[i, 1].set_title(f"{v}: on a lat-lon map")
            axes[i, 1].set_xlabel("longitude")
            axes[i, 1].set_ylabel("latitude")
        w = np.bincount(band.ravel(), weights=skill.area.ravel(), minlength=edges.size - 1)
        zb = np.bincount(band.ravel(), weights=(b * skill.area).ravel(), minlength=edges.size - 1)
        axes[i, -1].plot(zb / np.where(w > 0, w, np.nan), 0.5 * (edges[1:] + edges[:-1]))
        axes[i, -1].axvline(0.0, color="k", lw=0.5)
        axes[i, -1].set_ylabel("latitude")
        axes[i, -1].set_title("zonal mean")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return Path(path)


def plot_spectra(path: str | Path, spectra: PowerSpectra) -> Path:
    """Power by total wavenumber of rollout (solid) and truth (dashed) at its leads."""
    plt = pyplot()
    V = len(spectra.variables)
    fig, axes = plt.subplots(V, 1, figsize=(7, 2.6 * V), constrained_layout=True)
    for ax, v in zip(np.atleast_1d(axes), spectra.variables, strict=True):
        for j, (k, (pred, true)) in enumerate(sorted(spectra.power[v].items())):
            ax.loglog(pred[1:], f"C{j}-", label=f"step {k}")
            ax.loglog(true[1:], f"C{j}--")
        ax.set_ylabel(f"{v} power")
    np.atleast_1d(axes)[0].legend(title="rollout solid, truth dashed")
    np.atleast_1d(axes)[-1].set_xlabel("total wavenumber l")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def leads_figure(table: dict, variables: list[str], units: dict | None = None):
    """RMSE per lead of the rollout, persistence and (when scored) climatology, and the anomaly
    correlation when a climatology was given: a panel (or two) per variable, in a grid of at
    most four columns; RMSE in each variable's ``units``."""
    plt = pyplot()
    acc = "acc" in table[variables[0]]
    fig, groups = panel_grid(plt, len(variables), 2 if acc else 1, (3.6, 2.3), max_columns=4)
    for v, axes in zip(variables, groups, strict=True):
        t, ax = table[v], axes[0]
        ax.plot(t["rmse"], "C1-", label="rollout")
        ax.plot(t["persistence_rmse"], "k--", label="persistence")
        if "climatology_rmse" in t:
            ax.plot(t["climatology_rmse"], "C2:", label="climatology")
        ax.set_title(v, fontsize=9)
        ax.set_ylabel(f"RMSE ({units[v]})" if units and units.get(v) else "RMSE")
        ax.set_xlabel("lead (steps)")
        if acc:
            axes[1].plot(t["acc"], "C1-", label="rollout")
            axes[1].plot(t["persistence_acc"], "k--", label="persistence")
            axes[1].set_title(f"{v}: anomaly correlation", fontsize=9)
            axes[1].set_xlabel("lead (steps)")
    groups[0][0].legend(fontsize=7)
    return fig


def plot_leads(path: str | Path, table: dict, variables: list[str], units=None) -> Path:
    """:func:`leads_figure` as a PNG."""
    fig = leads_figure(table, variables, units)
    fig.savefig(path, dpi=85)
    pyplot().close(fig)
    return Path(path)


def plot_tile_imprint(path: str | Path, seams, variables: list[str]) -> Path:
    """Mean |error| at each tile-local position at the last step (averaged over every tile):
    a pattern here is the tiling printed on the error."""

    plt = pyplot()
    V = len(variables)
    fig, axes = plt.subplots(1, V, figsize=(2.6 * V, 2.6), constrained_layout=True, squeeze=False)
    for i, v in enumerate(variables):
        im = axes[0, i].imshow(seams.last_map[i], origin="lower", cmap="magma")
        imprint, floor = seams.imprint[i, -1], seams.imprint_floor[i, -1]
        axes[0, i].set_title(f"{v}\nimprint {imprint:.2f} (floor {floor:.2f})", fontsize=8)
        axes[0, i].set_axis_off()
        fig.colorbar(im, ax=axes[0, i], shrink=0.7)
    fig.savefig(path, dpi=85)
    plt.close(fig)
    return Path(path)
