# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The per-variable figures in a grid of a few columns, not one tall column: a 17-channel
output (four 3-D variables of four levels and the surface pressure) draws a figure of a sane
size, every variable in it, labelled with its units."""

import matplotlib.image
import numpy as np
import xarray as xr

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.figures import leads_figure, plot_leads
from screamcast.evaluation.last_step import last_step_figure
from screamcast.evaluation.panel_grid import shrunk
from screamcast.evaluation.rollout_scores import truth_aggregators
from screamcast.evaluation.scores import Scores
from screamcast.grid import PhysicsGrid

CHANNELS = [f"{v}[{k}]" for v in ("U", "V", "T", "Q") for k in range(4)] + ["PS"]  # 17
UNITS = {c: "m s-1" for c in CHANNELS if c[0] in "UV"} | {"PS": "Pa"}  # T and Q: no units


def table(acc: bool) -> dict:
    lead = np.linspace(0.0, 1.0, 9)
    scores = {"rmse": lead, "persistence_rmse": 2 * lead}
    return {
        v: scores | ({"acc": 1 - lead, "persistence_acc": 1 - 2 * lead} if acc else {})
        for v in CHANNELS
    }


def shown(fig):
    return [ax for ax in fig.axes if ax.get_visible() and (ax.lines or ax.images)]


def columns(axes) -> int:
    return axes[0].get_subplotspec().get_gridspec().ncols


def test_leads_of_17_channels_are_a_grid_of_four_columns(tmp_path):
    fig = leads_figure(table(acc=False), CHANNELS, UNITS)
    panels = shown(fig)
    assert len(panels) == 17 and columns(panels) == 4
    assert [ax.get_title() for ax in panels[:1]] == ["U[0]"]
    assert panels[0].get_ylabel() == "RMSE (m s-1)" and panels[16].get_ylabel() == "RMSE (Pa)"
    assert panels[8].get_ylabel() == "RMSE"  # T[0]: the output has no units for it
    height, width = matplotlib.image.imread(
        plot_leads(tmp_path / "leads.png", table(False), CHANNELS, UNITS)
    ).shape[:2]
    assert (width, height) == (1224, 977)  # 4 x 5 panels of 3.6 x 2.3 in at 85 dpi
    with_acc = shown(leads_figure(table(acc=True), CHANNELS, UNITS))
    assert len(with_acc) == 34 and columns(with_acc) == 4  # RMSE and ACC, two variables a row
    assert with_acc[1].get_title() == "U[0]: anomaly correlation"


def test_the_last_step_shows_every_channel_three_a_row():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(17, 6, 8, 8))
    fig = last_step_figure(truth + 0.1, truth, CHANNELS, UNITS)
    panels = shown(fig)
    assert len(panels) == 51 and columns(panels) == 9  # prediction, truth, error of each
    assert panels[0].get_title() == "U[0] (m s-1): prediction"
    assert panels[50].get_title() == "PS (Pa): error" and panels[26].get_title() == "T[0]: error"
    assert tuple(fig.get_size_inches() * 80) == (2016.0, 960.0)  # 9 x 6 panels at 80 dpi


def test_a_large_grid_is_kept_for_the_picture_as_block_means():
    field = np.arange(2 * 6 * 256 * 256, dtype=np.float64).reshape(2, 6, 256, 256)
    small = shrunk(field)
    assert small.shape == (2, 6, 128, 128)
    assert small[1, 5, 3, 4] == field[1, 5, 6:8, 8:10].mean()
    assert shrunk(field[..., :64, :64]).shape == (2, 6, 64, 64)


def test_the_scores_last_step_png_draws_every_variable(tiny_store, tmp_path):
    truth = xr.open_zarr(tiny_store, chunks=None)
    variables = ["u", "v", "vorticity", "tracer", "temperature", "precip"]
    times = truth["time"].values[:3]
    grid = PhysicsGrid.for_face_size(16)
    scores = Scores(
        truth_aggregators(TruthSource(truth, variables, times), grid.area, grid, None),
        variables,
        times,
    )
    for k in range(3):
        scores.record(k, times[k], truth[variables].isel(time=k).to_array().values + 1.0)
    scores.write(tmp_path / "r")
    height, width = matplotlib.image.imread(tmp_path / "r_last_step.png").shape[:2]
    assert (width, height) == (2016, 320)  # two rows of three variables, not the first alone
