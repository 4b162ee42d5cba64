# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Rollout skill against a truth store, computed step by step: memory flat in the steps.

The rollout used to load every step of every variable of its output and of the truth to score
them at the end (~24 GB per variable at ne1024pg2 and 240 steps). :class:`StepSkill` takes one
predicted step at a time (as the rollout makes it, or read back from an output) and reads the
truth at that time only; what it keeps is the initial truth (persistence) and the scores.

``python -m screamcast.evaluate OUTPUT --truth STORE --report DIR`` scores any rollout output
(local or ``s3://``) against a truth store of its grid the same way, and writes a report folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.channels import expand, with_channels
from screamcast.metrics import area_weighted_bias, area_weighted_rmse


class StepSkill:
    """Per-step area-weighted RMSE, bias and persistence RMSE of ``variables`` against
    ``truth`` at ``times`` (one per rollout step, the initial condition first)."""

    def __init__(self, truth: xr.Dataset, variables: list[str], times: np.ndarray, area):
        self.truth, self.variables, self.times, self.area = truth, list(variables), times, area
        self._weights = area / area.sum() if area is not None else None  # (6, n, n), sum 1
        self.rmse = {v: np.full(len(times), np.nan) for v in self.variables}
        self.bias = {v: np.full(len(times), np.nan) for v in self.variables}
        self.persistence = {v: np.full(len(times), np.nan) for v in self.variables}
        # area-weighted global means (drift): prediction and truth
        self.mean = {v: np.full((2, len(times)), np.nan) for v in self.variables}
        self._initial = self._truth_at(0)  # (V, 6, n, n)
        self.last: tuple[np.ndarray, np.ndarray] | None = None  # (prediction, truth) of var 0
        # time-mean bias maps over the steps after the initial condition: one field per variable
        self.bias_sum = np.zeros((len(self.variables), *self._initial.shape[1:]))
        self.bias_steps = 0

    @classmethod
    def covering(cls, truth: xr.Dataset, variables, times, area) -> StepSkill | None:
        """A scorer when ``truth`` holds every variable at every one of ``times``, else None."""
        t = truth["time"].values
        if any(v not in truth for v in variables) or not np.isin(times, t).all():
            return None
        return cls(truth, variables, times, area)

    def _truth_at(self, k: int) -> np.ndarray:
        at = self.truth[self.variables].sel(time=self.times[k])  # one time is read
        return at.to_array().values  # (V, 6, n, n)

    def add(self, k: int, fields: np.ndarray) -> None:
        """Score step ``k``: ``fields (V, 6, n, n)``, the variables in order."""
        truth = self._truth_at(k)
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
        return {
            v: {
                "rmse": self.rmse[v].tolist(),
                "bias": self.bias[v].tolist(),
                "persistence_rmse": self.persistence[v].tolist(),
            }
            for v in self.variables
        }

    def write(self, base: str | Path) -> dict:
        """``<base>_metrics.csv`` / ``.json`` and, once the last step is scored,
        ``<base>_last_step.png`` (prediction, truth and error of the first variable)."""
        rows = [
            (k, str(self.times[k]), v, self.rmse[v][k], self.bias[v][k], self.persistence[v][k])
            for v in self.variables
            for k in range(len(self.times))
        ]
        with open(f"{base}_metrics.csv", "w") as f:
            f.write("step,time,variable,rmse,bias,persistence_rmse\n")
            f.writelines(f"{k},{t},{v},{r:.6g},{b:.6g},{p:.6g}\n" for k, t, v, r, b, p in rows)
        table = self.table()
        Path(f"{base}_metrics.json").write_text(json.dumps(table, indent=1))
        if self.last is not None:
            from screamcast.plot import plot_prediction

            plot_prediction(f"{base}_last_step.png", *self.last, self.variables[0])
        return table


def plot_drift(path: str | Path, skill: StepSkill) -> Path:
    """Global means of prediction and truth per step, one panel per variable (drift)."""
    from screamcast.plot import pyplot

    plt = pyplot()
    V = len(skill.variables)
    fig, axes = plt.subplots(V, 1, figsize=(7, 2.2 * V), sharex=True, constrained_layout=True)
    for ax, v in zip(np.atleast_1d(axes), skill.variables, strict=True):
        ax.plot(skill.mean[v][1], "k-", label="truth")
        ax.plot(skill.mean[v][0], "C1-", label="rollout")
        ax.set_ylabel(f"{v} (global mean)")
    np.atleast_1d(axes)[0].legend()
    np.atleast_1d(axes)[-1].set_xlabel("step")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def plot_bias_maps(path: str | Path, skill: StepSkill, lat: np.ndarray) -> Path:
    """Time-mean bias of every variable: on the cube net (left) and its area-weighted zonal
    mean in 5-degree latitude bands (right)."""
    from screamcast.plot import cube_net, pyplot

    plt = pyplot()
    mean_bias = skill.bias_sum / max(skill.bias_steps, 1)  # (V, 6, n, n)
    edges = np.arange(-90.0, 90.1, 5.0)
    band = np.clip(np.digitize(lat, edges) - 1, 0, edges.size - 2)  # (6, n, n)
    V = len(skill.variables)
    fig, axes = plt.subplots(
        V,
        2,
        figsize=(11, 2.6 * V),
        constrained_layout=True,
        gridspec_kw={"width_ratios": [2.2, 1]},
        squeeze=False,
    )
    for i, v in enumerate(skill.variables):
        b = mean_bias[i]
        e = float(np.nanmax(np.abs(b))) or 1.0
        im = axes[i, 0].imshow(cube_net(b), origin="lower", cmap="RdBu_r", vmin=-e, vmax=e)
        axes[i, 0].set_title(f"{v}: time-mean bias")
        axes[i, 0].set_axis_off()
        fig.colorbar(im, ax=axes[i, 0], shrink=0.8)
        w = np.bincount(band.ravel(), weights=skill.area.ravel(), minlength=edges.size - 1)
        zb = np.bincount(band.ravel(), weights=(b * skill.area).ravel(), minlength=edges.size - 1)
        axes[i, 1].plot(zb / np.where(w > 0, w, np.nan), 0.5 * (edges[1:] + edges[:-1]))
        axes[i, 1].axvline(0.0, color="k", lw=0.5)
        axes[i, 1].set_ylabel("latitude")
        axes[i, 1].set_title("zonal mean")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return Path(path)


def plot_spectra(path, out: xr.Dataset, ref: xr.Dataset, variables, grid, leads) -> str:
    """Power by total wavenumber of rollout (solid) and truth (dashed) at ``leads``; returns a
    line for the report (or why there are no spectra)."""
    try:
        from screamcast.spectra import CubeSpectrum
    except ImportError:  # pragma: no cover - pyshtools is in the eval and dev extras
        return "No spectra: `pip install screamcast[eval]` (pyshtools)."
    from screamcast.plot import pyplot

    plt = pyplot()
    spectrum = CubeSpectrum(grid)
    V = len(variables)
    fig, axes = plt.subplots(V, 1, figsize=(7, 2.6 * V), constrained_layout=True)
    times = out["time"].values
    for ax, v in zip(np.atleast_1d(axes), variables, strict=True):
        for j, k in enumerate(leads):
            pred = spectrum(out[v].isel(time=k).values)
            true = spectrum(ref[v].sel(time=times[k]).values)
            ax.loglog(pred[1:], f"C{j}-", label=f"step {k}")
            ax.loglog(true[1:], f"C{j}--")
        ax.set_ylabel(f"{v} power")
    np.atleast_1d(axes)[0].legend(title="rollout solid, truth dashed")
    np.atleast_1d(axes)[-1].set_xlabel("total wavenumber l")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    L = spectrum.lmax
    kept = spectrum.transfer([L // 2, L - 1])
    return (
        f"Spectra to l = {L}; the regridding to the lat-lon grid keeps {kept[0]:.2f} of the "
        f"power at l = {L // 2} and {kept[1]:.2f} at l = {L - 1} (both curves alike)."
    )


def evaluate(output: str, truth: str, report: str | Path, storage_options=None) -> dict:
    """Score ``output`` against ``truth`` step by step and write the report folder."""
    from screamcast.data.calendar import CalendarError, calendar_of, in_model_calendar
    from screamcast.data.store import StoreError, dataset_grid, open_store

    out = open_store(output, storage_options, [], (), None)
    fields = [v for v in out.data_vars if out[v].dims[:1] == ("time",)]
    variables = expand(out, fields, where=f"output {output}")  # a 3-D variable's levels
    out = with_channels(out, variables, f"output {output}")
    ref = open_store(truth, storage_options, variables, (), out.sizes["y"])
    times = out["time"].values
    try:  # a truth in another calendar is matched date for date (screamcast.data.calendar)
        ref = in_model_calendar(ref, calendar_of(times), truth)
    except CalendarError as err:
        raise StoreError(str(err)) from None
    missing = times[~np.isin(times, ref["time"].values)]
    if missing.size:
        raise StoreError(
            f"truth {truth} lacks {missing.size} of the output's {times.size} "
            f"times, the first {missing[0]}"
        )
    grid = dataset_grid(out)
    skill = StepSkill(ref, variables, times, grid.area)
    skill.add_from_output(out, range(len(times)))
    report = Path(report)
    report.mkdir(parents=True, exist_ok=True)
    table = skill.write(report / "skill")
    plot_drift(report / "drift.png", skill)
    plot_bias_maps(report / "bias_maps.png", skill, grid.lat)
    leads = sorted({1, len(times) // 2, len(times) - 1} & set(range(1, len(times))))
    spectra = plot_spectra(report / "spectra.png", out, ref, variables, grid, leads)
    lines = [
        f"# Evaluation of {output}",
        "",
        f"Truth: {truth}; {len(times)} steps.",
        "",
        "| variable | RMSE at the last step | persistence |",
        "|---|---|---|",
    ]
    lines += [
        f"| {v} | {table[v]['rmse'][-1]:.4g} | {table[v]['persistence_rmse'][-1]:.4g} |"
        for v in variables
    ]
    lines += [
        "",
        "![last step](skill_last_step.png)",
        "",
        "![drift](drift.png)",
        "",
        f"Time-mean bias over steps 1..{len(times) - 1}:",
        "",
        "![bias maps](bias_maps.png)",
        "",
        spectra,
        "",
        "![spectra](spectra.png)",
        "",
        "## Provenance (the output's attrs)",
        "",
    ]
    lines += [f"- `{k}`: {v}" for k, v in out.attrs.items() if k != "screamcast_url"]
    (report / "report.md").write_text("\n".join(lines) + "\n")
    return table


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m screamcast.evaluate", description=__doc__)
    ap.add_argument("output", help="a rollout output store (local path or s3://)")
    ap.add_argument("--truth", required=True, help="a store of the same grid holding the truth")
    ap.add_argument("--report", help="folder to write (default: <output>_report)")
    ap.add_argument("--storage-options", default="{}", help="JSON, for s3:// stores")
    a = ap.parse_args(argv)
    report = a.report or str(a.output).rstrip("/").removesuffix(".zarr") + "_report"
    try:
        evaluate(a.output, a.truth, report, json.loads(a.storage_options))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {report}/report.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
