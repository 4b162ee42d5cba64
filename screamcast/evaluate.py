# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Rollout skill against a truth store, computed step by step: memory flat in the steps.

The rollout used to load every step of every variable of its output and of the truth to score
them at the end (~24 GB per variable at ne1024pg2 and 240 steps). :class:`StepSkill` takes one
predicted step at a time (as the rollout makes it, or read back from an output) and reads the
truth at that time only; what it keeps is the initial truth (persistence) and the scores.

``python -m screamcast.evaluate OUTPUT --truth STORE --report DIR`` scores any rollout output
(local or ``s3://``) against a truth store the same way, and writes a report folder. The truth
is on the output's grid, or a regular lat-lon grid where each truth cell is compared with the
output's mean over that cell (:mod:`screamcast.scoring_grid`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.channels import expand, with_channels
from screamcast.data.compatible import matched_store
from screamcast.data.store import is_latlon
from screamcast.metrics import area_weighted_bias, area_weighted_rmse
from screamcast.scoring_grid import ScoringGrid, as_faces, sorted_latlon
from screamcast.skill_extras import AnomalyCorrelation, SeamSkill, time_mean_climatology


class StepSkill:
    """Per-step area-weighted RMSE, bias and persistence RMSE of ``variables`` against
    ``truth`` at ``times`` (one per rollout step, the initial condition first).

    ``truth`` None: no truth, only ``extras`` that need none (the nudging reference's misfit).
    ``area (F, a, b)``: where the truth lives (the cube's ``(6, n, n)``, or ``(1, nlat, nlon)``
    for a lat-lon truth, with ``regrid`` taking the rollout's fields there).
    """

    def __init__(
        self,
        truth: xr.Dataset | None,
        variables: list[str],
        times: np.ndarray,
        area,
        extras=(),
        regrid=None,
    ):
        self.truth, self.variables, self.times, self.area = truth, list(variables), times, area
        self.regrid = regrid
        # more scores fed the same steps (screamcast.skill_extras: anomaly correlation, seams)
        self.extras = list(extras)
        self._weights = area / area.sum() if area is not None else None  # (6, n, n), sum 1
        self.rmse = {v: np.full(len(times), np.nan) for v in self.variables}
        self.bias = {v: np.full(len(times), np.nan) for v in self.variables}
        self.persistence = {v: np.full(len(times), np.nan) for v in self.variables}
        # area-weighted global means (drift): prediction and truth
        self.mean = {v: np.full((2, len(times)), np.nan) for v in self.variables}
        self._initial = self._truth_at(0)  # (V, F, a, b)
        self.last: tuple[np.ndarray, np.ndarray] | None = None  # (prediction, truth) of var 0
        # time-mean bias maps over the steps after the initial condition: one field per variable
        self.bias_sum = np.zeros((len(self.variables), *np.shape(area)))
        self.bias_steps = 0

    @classmethod
    def covering(cls, truth: xr.Dataset, variables, times, area, extras=()) -> StepSkill | None:
        """A scorer when ``truth`` holds every variable at every one of ``times``, else None."""
        t = truth["time"].values
        if any(v not in truth for v in variables) or not np.isin(times, t).all():
            return None
        return cls(truth, variables, times, area, extras)

    def _truth_at(self, k: int) -> np.ndarray | None:
        if self.truth is None:
            return None
        at = self.truth[self.variables].sel(time=self.times[k])  # one time is read
        return as_faces(at.to_array().values)  # (V, F, a, b)

    def add(self, k: int, fields: np.ndarray) -> None:
        """Score step ``k``: ``fields (V, 6, n, n)``, the variables in order."""
        truth = self._truth_at(k)
        for extra in self.extras:
            extra.add(k, fields, truth)
        if truth is None:
            return
        if self.regrid is not None:
            fields = self.regrid(fields)  # (V, F, a, b)
        for i, v in enumerate(self.variables):
            self.rmse[v][k] = area_weighted_rmse(fields[i], truth[i], self.area)
            self.bias[v][k] = area_weighted_bias(fields[i], truth[i], self.area)
            self.persistence[v][k] = area_weighted_rmse(self._initial[i], truth[i], self.area)
            w = self._weights
            self.mean[v][:, k] = (fields[i] * w).sum(), (truth[i] * w).sum()
        if k > 0:
            self.bias_sum += np.asarray(fields, np.float64) - truth
            self.bias_steps += 1
        if k == len(self.times) - 1:
            self.last = (np.array(fields[0]), truth[0])

    def add_from_output(self, output: xr.Dataset, steps: range) -> None:
        """Score ``steps`` of a written output, one step in memory at a time."""
        output = with_channels(output, self.variables, "output")  # 3-D variables' levels
        for k in steps:
            self.add(k, output[self.variables].isel(time=k).to_array().values)

    def table(self) -> dict:
        table = {
            v: {
                "rmse": self.rmse[v].tolist(),
                "bias": self.bias[v].tolist(),
                "persistence_rmse": self.persistence[v].tolist(),
            }
            for v in self.variables
        }
        for extra in self.extras:
            for v, scores in extra.table().items():
                table[v] |= scores
        return table

    def write(self, base: str | Path, figures: bool = True) -> dict:
        """``<base>_metrics.csv`` / ``.json`` and, once the last step is scored,
        ``<base>_last_step.png`` (prediction, truth and error of the first variable)."""
        table = self.table()
        columns = list(dict.fromkeys(c for v in self.variables for c in table[v]))
        with open(f"{base}_metrics.csv", "w") as f:
            f.write(",".join(["step", "time", "variable", *columns]) + "\n")
            for v in self.variables:
                nan = [np.nan] * len(self.times)
                scores = [table[v].get(c, nan) for c in columns]
                f.writelines(
                    f"{k},{self.times[k]},{v}," + ",".join(f"{s[k]:.6g}" for s in scores) + "\n"
                    for k in range(len(self.times))
                )
        Path(f"{base}_metrics.json").write_text(json.dumps(table, indent=1))
        if figures and self.last is not None:
            from screamcast.plot import plot_prediction

            plot_prediction(f"{base}_last_step.png", *self.last, self.variables[0])
        return table


def evaluate(
    output: str,
    truth: str,
    report: str | Path,
    storage_options=None,
    climatology: str | None = None,
    tile: int | None = None,
    figures: bool = True,
) -> dict:
    """Score ``output`` against ``truth`` step by step and write the report folder.
    ``climatology``: a store whose time mean (per variable) the anomaly correlation is taken
    from; ``tile``: the tiling for the seam and imprint scores (default: the output's attr);
    ``figures=False``: the scores and report.md only (drawing takes most of a small output's
    evaluation: ~10 s of ~12 on 2 cores for a 6-variable report)."""
    from screamcast import report as rp
    from screamcast.data.store import dataset_grid, open_store

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
    extras = _extras(out, scoring, grid, variables, len(times), climatology, tile, storage_options)
    skill = StepSkill(ref, variables, times, scoring.area, extras, scoring.regrid)
    skill.add_from_output(out, range(len(times)))
    report = Path(report)
    report.mkdir(parents=True, exist_ok=True)
    table = skill.write(report / "skill", figures)
    seams = next((e for e in extras if isinstance(e, SeamSkill)), None)
    spectra = "No figures (--no-figures)."
    if figures:
        rp.plot_leads(report / "leads.png", table, variables)
        rp.plot_drift(report / "drift.png", skill)
        rp.plot_bias_maps(report / "bias_maps.png", skill, scoring.lat, grid)
        leads = sorted({1, len(times) // 2, len(times) - 1} & set(range(1, len(times))))
        spectra = rp.plot_spectra(
            report / "spectra.png", out, ref, variables, grid, leads, scoring.coverage
        )
        if seams is not None and seams.last_map is not None:
            rp.plot_tile_imprint(report / "tile_imprint.png", seams, variables)
    spectra = f"Scored on {scoring.description}.\n\n{spectra}"
    lines = _report_lines(
        output, truth, table, variables, len(times), spectra, seams, figures, out.attrs, partial
    )
    lines += [f"- `{k}`: {v}" for k, v in out.attrs.items() if k != "screamcast_url"]
    (report / "report.md").write_text("\n".join(lines) + "\n")
    return table


def _complete_steps(out: xr.Dataset, output: str) -> tuple[xr.Dataset, str]:
    """The output's complete steps (``complete_steps`` attr: a rollout killed or still running
    has written only some), and a sentence saying so when it is partial."""
    from screamcast.data.store import StoreError

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
    from screamcast.data.calendar import CalendarError, calendar_of, in_model_calendar
    from screamcast.data.store import StoreError, open_store

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


def _extras(out, scoring, grid, variables, steps, climatology, tile, storage_options) -> list:
    """Seams and the tile imprint (on the cube only: pixel classes of the output's own grid)
    and, given a climatology store (on the output's grid or the truth's), the anomaly
    correlation."""
    from screamcast.data.store import StoreError, open_store

    extras = []
    tile = tile or out.attrs.get("tile")
    if tile and scoring.on_cube:
        extras.append(SeamSkill(grid.n, int(tile), grid.area, variables, steps))
    if climatology:
        clim = open_store(climatology, storage_options, [], (), grid.n, latlon=True)
        clim = with_channels(clim, variables, f"climatology {climatology}")
        clim = matched_store(out, clim, variables, f"climatology {climatology}")
        if is_latlon(clim) and scoring.on_cube:
            raise StoreError(
                f"climatology {climatology} is on a lat-lon grid, the truth on the output's "
                f"grid {grid.name}: give a climatology on {grid.name}"
            )
        if is_latlon(clim):
            maps = as_faces(time_mean_climatology(sorted_latlon(clim), variables))
            if maps.shape[-2:] != scoring.area.shape[-2:] or not np.allclose(
                np.sort(clim["lat"].values), scoring.lat[0, :, 0]
            ):
                raise StoreError(
                    f"climatology {climatology}: its lat-lon grid ({clim.sizes['lat']} x "
                    f"{clim.sizes['lon']}) is not the truth's ({scoring.area.shape[1]} x "
                    f"{scoring.area.shape[2]})"
                )
        else:  # on the output's grid: taken to the truth's cells as the rollout is
            maps = scoring(cube_climatology(clim, climatology, variables, grid))
        extras.append(AnomalyCorrelation(maps, scoring.area, variables, steps))
    return extras


def cube_climatology(clim: xr.Dataset, name: str, variables, grid) -> np.ndarray:
    """``(V, 6, n, n)``: the time mean of a climatology store opened on ``grid``."""
    from screamcast.data.store import StoreError

    missing = [v for v in variables if v not in clim]
    if missing:
        raise StoreError(f"climatology {name} has no variable {', '.join(missing)}")
    maps = time_mean_climatology(clim, variables)
    if maps.shape[1:] != grid.shape:
        raise StoreError(f"climatology {name} has fields {maps.shape[1:]}, expected {grid.shape}")
    return maps


def _report_lines(
    output, truth, table, variables, steps, spectra, seams, figures, attrs, partial=""
) -> list[str]:
    """report.md's text: the last step's scores, the seam classes, the figures (if drawn)."""
    last = {v: {k: x[-1] for k, x in table[v].items()} for v in variables}
    acc = "acc" in last[variables[0]]
    cols = ["variable", "RMSE", "persistence"]
    cols += ["ACC", "persistence ACC", "climatology RMSE"] if acc else []
    lines = [f"# Evaluation of {output}", "", f"Truth: {truth}; {steps} steps.", ""]
    lines += [partial, ""] if partial else []
    lines += ["At the last step:", "", _row(cols), _row(["---"] * len(cols))]
    for v in variables:
        s = last[v]
        row = [v, f"{s['rmse']:.4g}", f"{s['persistence_rmse']:.4g}"]
        if acc:
            row += [
                f"{s['acc']:.3f}",
                f"{s['persistence_acc']:.3f}",
                f"{s['climatology_rmse']:.4g}",
            ]
        lines.append(_row(row))
    lines.append("")
    if figures:
        lines += ["![skill per lead](leads.png)", "", "![last step](skill_last_step.png)", ""]
    if seams is None:
        lines += ["No seam or tile-imprint scores: they need a truth on the output's grid.", ""]
    if seams is not None and seams.last_map is not None:
        t = seams.tile
        lines += [
            "RMSE by pixel class at the last step (in brackets: over that class's own "
            "persistence RMSE, so classes with more weather are compared fairly), and the tile "
            "imprint (std over the "
            f"{t} x {t} tile-local positions of the mean |error| there, over its mean) beside "
            "its floor (what the same tiles give at random tile-local phases: an imprint near "
            "its floor is not the tiling's):",
            "",
            _row(["variable", "tile seams", "face edges", "interiors", "tile imprint", "floor"]),
            _row(["---"] * 6),
        ]
        for v in variables:
            s = last[v]
            cells = [
                f"{s[f'rmse_{c}']:.4g} ({_ratio(s[f'rmse_{c}'], s[f'persistence_rmse_{c}'])})"
                for c in ("tile_seams", "face_edges", "interiors")
            ]
            imprint = [f"{s['tile_imprint']:.3f}", f"{s['tile_imprint_floor']:.3f}"]
            lines.append(_row([v, *cells, *imprint]))
        lines += ["", *_lattice_note(attrs, seams.tile)]
        lines += ["![tile imprint](tile_imprint.png)", ""] if figures else []
    if figures:
        lines += ["![drift](drift.png)", "", f"Time-mean bias over steps 1..{steps - 1}:", ""]
        lines += ["![bias maps](bias_maps.png)", "", spectra, "", "![spectra](spectra.png)", ""]
    else:
        lines += [spectra, ""]
    return lines + ["## Provenance (the output's attrs)", ""]


def _lattice_note(attrs, tile: int) -> list[str]:
    """When the nudging reference's blocks divide the tile, what the nudging leaves at a fixed
    place in a block sits at fixed tile-local positions: the imprint cannot tell it from the
    tiling's (docs/rollout.md)."""
    block = int(attrs.get("nudge_block_cells", 1))
    if block < 2 or tile % block:
        return []
    return [
        f"The nudging reference's blocks ({block} x {block} cells) divide the {tile}-cell "
        "tile, so the tile imprint also holds the reference's lattice (what block means cannot "
        "correct sits at the same places in every block): `python scripts/imprint_analysis.py "
        "OUTPUT` divides it out; a reference whose block does not divide the tile keeps the "
        "two apart (docs/rollout.md).",
        "",
    ]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "n/a"


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m screamcast.evaluate", description=__doc__)
    ap.add_argument("output", help="a rollout output store (local path or s3://)")
    ap.add_argument(
        "--truth", required=True, help="a store on the output's grid or a regular lat-lon grid"
    )
    ap.add_argument("--report", help="folder to write (default: <output>_report)")
    ap.add_argument("--storage-options", default="{}", help="JSON, for s3:// stores")
    ap.add_argument(
        "--climatology", help="a store whose time mean is the climatology (anomaly correlation)"
    )
    ap.add_argument("--tile", type=int, help="tile size for seams and imprint (default: attr)")
    ap.add_argument(
        "--no-figures", action="store_true", help="scores and report.md only (e.g. in sweeps)"
    )
    a = ap.parse_args(argv)
    report = a.report or str(a.output).rstrip("/").removesuffix(".zarr") + "_report"
    try:
        options = json.loads(a.storage_options)
        evaluate(a.output, a.truth, report, options, a.climatology, a.tile, not a.no_figures)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {report}/report.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
