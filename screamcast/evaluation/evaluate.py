# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Score a finished (or partial) rollout output against a truth store, and write a report.

The output is read one step at a time and fed to the same aggregators the rollout streams, so
the scores equal the rollout's own. The truth is on the output's grid, or a regular lat-lon
grid where each truth cell is compared with the output's mean over that cell
(:mod:`screamcast.evaluation.scoring_grid`).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import CalendarError, calendar_of, in_model_calendar
from screamcast.data.channels import expand, with_channels
from screamcast.data.climatology import cube_climatology, time_mean_climatology
from screamcast.data.compatible import matched_store
from screamcast.data.store import StoreError, dataset_grid, open_store
from screamcast.data.store_axes import is_latlon
from screamcast.evaluation import figures as fig
from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.drift import GlobalMeanDrift
from screamcast.evaluation.power_spectra import PowerSpectra
from screamcast.evaluation.report import report_lines
from screamcast.evaluation.rmse import RmseBias
from screamcast.evaluation.rollout_scores import truth_aggregators, truth_gaps
from screamcast.evaluation.scores import Scores
from screamcast.evaluation.scoring_grid import ScoringGrid, as_faces, sorted_latlon
from screamcast.evaluation.seams import SeamSkill


def evaluate(
    output: str,
    truth: str,
    report: str | Path,
    storage_options=None,
    climatology: str | None = None,
    tile: int | None = None,
    figures: bool = True,
    metrics=(),
) -> dict:
    """Score ``output`` against ``truth`` step by step and write the report folder.
    ``climatology``: a store whose time mean (per variable) the anomaly correlation is taken
    from; ``tile``: the tiling for the seam and imprint scores (default: the output's attr);
    ``figures=False``: the scores and report.md only (drawing takes most of a small output's
    evaluation: ~10 s of ~12 on 2 cores for a 6-variable report); ``metrics``: registered
    aggregators to add (:mod:`screamcast.evaluation.registry`)."""
    out = open_store(output, storage_options, [], (), None)
    fields = [v for v in out.data_vars if out[v].dims[:1] == ("time",)]
    variables = expand(out, fields, where=f"output {output}")  # a 3-D variable's levels
    out = with_channels(out, variables, f"output {output}")
    out, partial = _complete_steps(out, output)
    if partial:
        warnings.warn(f"{output}: {partial}", stacklevel=2)
    times, grid = out["time"].values, dataset_grid(out)
    ref = _truth(truth, storage_options, variables, out)
    scoring = ScoringGrid.latlon(grid, ref) if is_latlon(ref) else ScoringGrid.cube(grid)
    source = TruthSource(ref, variables, times, scoring.regrid)
    tile = (tile or out.attrs.get("tile")) if scoring.on_cube else None  # pixel classes: cube
    clim = _climatology(out, scoring, grid, variables, climatology, storage_options)
    aggregators = truth_aggregators(source, scoring.area, grid, tile, clim, metrics)
    spectra, spectra_line = _spectra(source, grid, len(times), scoring, ref, figures)
    units = {v: out[v].attrs.get("units", "") for v in variables}  # the store's, per channel
    scores = Scores(aggregators + ([spectra] if spectra else []), variables, times, units)
    scores.record_output(out, range(len(times)))
    report = Path(report)
    report.mkdir(parents=True, exist_ok=True)
    table = scores.write(report / "skill", figures)
    seams = scores.find(SeamSkill)
    if figures:
        _draw(report, scores, table, scoring, grid)
    spectra_line = f"Scored on {scoring.description}.\n\n{spectra_line}"
    lines = report_lines(
        output,
        truth,
        table,
        variables,
        len(times),
        spectra_line,
        seams,
        figures,
        out.attrs,
        partial,
        units,
    )
    lines += [f"- `{k}`: {v}" for k, v in out.attrs.items() if k != "screamcast_url"]
    gaps = truth_gaps(table, truth)
    lines[4:4] = [*gaps, ""] if gaps else []  # under the report's truth line
    (report / "report.md").write_text("\n".join(lines) + "\n")
    return table


def _draw(report: Path, scores: Scores, table: dict, scoring, grid) -> None:
    """The report's figures, each from its aggregator's summary."""
    variables = scores.variables
    fig.plot_leads(report / "leads.png", table, variables, scores.units)
    fig.plot_drift(report / "drift.png", scores.find(GlobalMeanDrift))
    fig.plot_bias_maps(report / "bias_maps.png", scores.find(RmseBias), scoring.lat, grid)
    spectra, seams = scores.find(PowerSpectra), scores.find(SeamSkill)
    if spectra is not None:
        fig.plot_spectra(report / "spectra.png", spectra)
    if seams is not None and seams.last_map is not None:
        fig.plot_tile_imprint(report / "tile_imprint.png", seams, variables)


def _spectra(source, grid, steps: int, scoring, ref, figures: bool):
    """The spectra aggregator (with figures, pyshtools and a global truth), or why none."""
    if not figures:
        return None, "No figures (--no-figures)."
    if scoring.coverage < 0.999:
        return (
            None,
            f"No spectra: the lat-lon truth covers {100 * scoring.coverage:.1f}% of the globe.",
        )
    leads = sorted({1, steps // 2, steps - 1} & set(range(1, steps)))
    latlon = (ref["lat"].values, ref["lon"].values) if is_latlon(ref) else None
    try:
        spectra = PowerSpectra(source, grid, leads, latlon)
    except ImportError:  # pragma: no cover - pyshtools is in the eval and dev extras
        return None, "No spectra: `pip install screamcast[eval]` (pyshtools)."
    return spectra, spectra.description()


def _complete_steps(out: xr.Dataset, output: str) -> tuple[xr.Dataset, str]:
    """The output's complete steps (``complete_steps`` attr: a rollout killed or still running
    has written only some), and a sentence saying so when it is partial."""
    total = out.sizes["time"]
    written = int(out.attrs.get("complete_steps", total))
    if written < 1:
        raise StoreError(f"output {output} holds no complete step: nothing to score")
    if written >= total:
        return out, ""
    note = (
        f"Partial output: {written} of its {total} times were written (the rollout was "
        f"stopped or is still running); the {written} complete ones are scored."
    )
    return out.isel(time=slice(0, written)), note


def _truth(truth: str, storage_options, variables: list[str], out: xr.Dataset) -> xr.Dataset:
    """The truth store, in the output's calendar (date for date), covering every output time."""
    ref = open_store(truth, storage_options, variables, (), out.sizes["y"], latlon=True)
    if is_latlon(ref):
        ref = sorted_latlon(ref)
    times = out["time"].values
    try:  # a truth in another calendar is matched date for date (screamcast.data.calendar)
        ref = in_model_calendar(ref, calendar_of(times), truth)
    except CalendarError as err:
        raise StoreError(str(err)) from None
    ref = matched_store(out, ref, variables, f"truth {truth}")  # one set of checks for all
    missing = times[~np.isin(times, ref["time"].values)]
    if missing.size:
        raise StoreError(
            f"truth {truth} lacks {missing.size} of the output's {times.size} "
            f"times, the first {missing[0]}"
        )
    return ref


def _climatology(out, scoring, grid, variables, climatology, storage_options):
    """A climatology store's time-mean maps on the truth's grid (``(V, F, a, b)``), from a
    store on the output's grid or the truth's; None without one."""
    if not climatology:
        return None
    clim = open_store(climatology, storage_options, [], (), grid.n, latlon=True)
    clim = with_channels(clim, variables, f"climatology {climatology}")
    clim = matched_store(out, clim, variables, f"climatology {climatology}")
    if is_latlon(clim) and scoring.on_cube:
        raise StoreError(
            f"climatology {climatology} is on a lat-lon grid, the truth on the output's "
            f"grid {grid.name}: give a climatology on {grid.name}"
        )
    if not is_latlon(clim):  # on the output's grid: taken to the truth's cells as the rollout is
        return scoring(cube_climatology(clim, climatology, variables, grid))
    maps = as_faces(time_mean_climatology(sorted_latlon(clim), variables, climatology))
    if maps.shape[-2:] != scoring.area.shape[-2:] or not np.allclose(
        np.sort(clim["lat"].values), scoring.lat[0, :, 0]
    ):
        raise StoreError(
            f"climatology {climatology}: its lat-lon grid ({clim.sizes['lat']} x "
            f"{clim.sizes['lon']}) is not the truth's ({scoring.area.shape[1]} x "
            f"{scoring.area.shape[2]})"
        )
    return maps
