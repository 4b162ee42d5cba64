# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The last step's picture: prediction, truth and error of every variable scored (up to
:data:`~screamcast.evaluation.panel_grid.LAST_STEP_VARIABLES`), three variables a row."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from screamcast.evaluation.cube_net import cube_net, pyplot
from screamcast.evaluation.panel_grid import panel_grid, with_units


def last_step_figure(pred: np.ndarray, truth: np.ndarray, variables, units=None, of=None):
    """The figure of ``pred`` and ``truth`` ``(V, F, a, b)`` for ``variables`` (their
    ``units``); ``of``: how many variables were scored, when only the first V are drawn."""
    plt = pyplot()
    fig, groups = panel_grid(plt, len(variables), 3, (2.8, 2.0), max_columns=9)
    for v, p, t, axes in zip(variables, pred, truth, groups, strict=True):
        lo, hi = float(np.nanmin(t)), float(np.nanmax(t))
        err = p - t
        e = float(np.nanmax(np.abs(err))) if np.isfinite(err).any() else 1.0
        name = with_units(v, units)
        for ax, data, what, kw in [
            (axes[0], p, "prediction", dict(vmin=lo, vmax=hi, cmap="viridis")),
            (axes[1], t, "truth", dict(vmin=lo, vmax=hi, cmap="viridis")),
            (axes[2], err, "error", dict(vmin=-(e or 1.0), vmax=e or 1.0, cmap="RdBu_r")),
        ]:
            im = ax.imshow(cube_net(data), origin="lower", **kw)
            ax.set_title(f"{name}: {what}", fontsize=9)
            ax.set_axis_off()
            fig.colorbar(im, ax=ax, shrink=0.8)
    if of is not None and of > len(variables):
        fig.suptitle(f"the first {len(variables)} of {of} variables")
    return fig


def plot_last_step(path: str | Path, pred, truth, variables, units=None, of=None) -> Path:
    """:func:`last_step_figure` as a PNG."""
    fig = last_step_figure(pred, truth, variables, units, of)
    fig.savefig(path, dpi=80)
    pyplot().close(fig)
    return Path(path)
