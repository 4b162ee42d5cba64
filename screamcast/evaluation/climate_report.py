# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The climate report of a long rollout against a truth run's climate (not time-matched: the
two runs' statistics over their own times), ``screamcast-evaluate OUTPUT --truth STORE
--climate``: zonal-mean ``u`` and ``T`` of truth and rollout and their difference, eddy kinetic
energy by latitude, the kinetic-energy spectrum of the top layer's winds at the rollout's last
step against the truth's mean spectrum, and the global-mean temperature's time series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER
from screamcast.data.stacked import unstack
from screamcast.evaluation import climate as cl

SPECTRUM_TIMES = 12  # truth times (evenly spaced) its mean spectrum is taken over


def open_cube(path: str | Path, storage_options: dict | None = None) -> xr.Dataset:
    """A store or rollout output with its 3-D variables on their levels ``(time, lev, 6, n, n)``."""
    ds = xr.open_zarr(
        str(path),
        chunks=None,
        decode_times=DECODER,
        consolidated=False,
        storage_options=storage_options or None,
    )
    return unstack(ds)


def _check(ds: xr.Dataset, names: tuple[str, str, str], where: str) -> None:
    missing = [v for v in names if v not in ds]
    if missing or "lat" not in ds or "area" not in ds:
        raise ValueError(
            f"{where}: a climate report needs the winds and temperature {', '.join(names)} "
            f"(missing: {', '.join(missing) or 'none'}) and the cells' lat and area"
        )


def ke_spectra(out: xr.Dataset, truth: xr.Dataset, last: int, names=("U", "V", "T")) -> dict:
    """Half the sum of u's and v's power per degree, top layer: the rollout at time index
    ``last`` (its last scored time: a run its guard stopped leaves the later times unwritten,
    NaN) and the truth's mean over :data:`SPECTRUM_TIMES` times."""
    from screamcast.evaluation.spectra import CubeSpectrum
    from screamcast.grid.physics import PhysicsGrid

    spec = CubeSpectrum(PhysicsGrid.from_name(truth.attrs["grid"]))
    u, v = names[:2]

    def ke(ds, k):
        at = ds.isel(time=k)
        top = lambda name: at[name].values[0] if at[name].ndim == 4 else at[name].values  # noqa: E731
        return 0.5 * (spec(top(u)) + spec(top(v)))

    picks = np.unique(np.linspace(0, truth.sizes["time"] - 1, SPECTRUM_TIMES).round().astype(int))
    return {"rollout": ke(out, last), "truth": np.mean([ke(truth, k) for k in picks], axis=0)}


def climate_report(
    output: str,
    truth: str,
    report: str | Path,
    storage_options=None,
    names: tuple[str, str, str] = ("U", "V", "T"),
    figures: bool = True,
) -> dict:
    """Write ``climate.md`` (and its figures) into ``report``; returns the numbers."""
    out, ref = open_cube(output, storage_options), open_cube(truth, storage_options)
    _check(out, names, f"output {output}")
    _check(ref, names, f"truth {truth}")
    model, base = cl.of_store(out, names=names), cl.of_store(ref, names=names)
    numbers = cl.compare(model, base)
    numbers["global_t"] = model.global_t
    numbers["global_t_truth_mean"] = float(np.mean(base.global_t))
    numbers["stopped"] = out.attrs.get("stopped")  # where the rollout's guard stopped it
    report = Path(report)
    if figures:
        from screamcast.evaluation import climate_figures as cf

        last = model.count - 1  # the rollout's last time before a non-finite value
        spectra = ke_spectra(out, ref, last, names)  # before the folder: it may fail
        numbers["ke_spectrum"] = {"time": str(out["time"].values[last])} | spectra
        report.mkdir(parents=True, exist_ok=True)
        cf.plot_zonal(report / "climate_zonal.png", model.means(), base.means())
        cf.plot_eke(report / "climate_eke.png", model.means()["eke"], base.means()["eke"])
        cf.plot_spectrum(report / "climate_ke_spectrum.png", spectra, str(out["time"].values[last]))
        days = _step_days(out)
        cf.plot_global_t(report / "climate_global_t.png", model.global_t, base.global_t, days)
    report.mkdir(parents=True, exist_ok=True)
    (report / "climate.md").write_text(_lines(output, truth, numbers, model, figures))
    return numbers


def _step_days(ds: xr.Dataset) -> float:
    times = ds["time"].values
    return (times[1] - times[0]).total_seconds() / 86400.0 if len(times) > 1 else 1.0


def _lines(output: str, truth: str, r: dict, model, figures: bool) -> str:
    jets, jt = r["jets"], r["jets_truth"]
    upto = "up to the step its guard stopped it at" if r.get("stopped") else "written"
    rows = [
        f"# Climate of {output}",
        "",
        f"Against the climate of {truth} (each run's statistics over its own times; the "
        f"rollout's {model.count} finite times {upto}).",
        "",
    ]
    if r.get("stopped"):
        st = r["stopped"]
        rows += [
            f"The rollout's guard stopped it at step {st['step']} ({st['time']}): "
            f"{st['channel']}'s {st['what']} {st['value']:.4g} outside {st['bound']}.",
            "",
        ]
    rows += [
        "| quantity | rollout | truth |",
        "|---|---|---|",
    ]
    for side in ("south", "north"):
        rows.append(
            f"| {side}ern jet (m/s at latitude) | {jets[side]['speed']:.1f} at "
            f"{jets[side]['lat']:.1f} | {jt[side]['speed']:.1f} at {jt[side]['lat']:.1f} |"
        )
    rows += [
        f"| global eddy kinetic energy (m2/s2) | {r['eke_global']:.1f} | "
        f"{r['eke_global_truth']:.1f} |",
        f"| zonal-mean u bias, RMS (m/s) | {r['u_bias_rms']:.2f} | |",
        f"| zonal-mean T bias, RMS (K) | {r['t_bias_rms']:.2f} | |",
        f"| global-mean T, last tenth minus first (K) | {r['global_t_drift']:.2f} | |",
        f"| global-mean T, mean (K) | {np.mean(r['global_t']):.2f} | "
        f"{r['global_t_truth_mean']:.2f} |",
    ]
    if figures:
        names = ("climate_zonal", "climate_eke", "climate_ke_spectrum", "climate_global_t")
        rows += ["", *(f"![{n}]({n}.png)" for n in names)]
    return "\n".join(rows) + "\n"
