# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The physics baseline: the same dycore at T21 (and the truth's own T42, for its cost), started
from the T42 truth truncated to T21, its forecasts evaluated exactly at the ne16pg2 cell
centres and averaged into the truth store's pressure-weighted layers: the same grid, layers
and truth the emulator is scored on."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.calendar import DECODER, encode
from screamcast.data.stacked import unstack
from screamcast.grid.physics import PhysicsGrid
from screamcast.ingest.layers import layer_means
from screamcast.sources.eam_history import model_time
from screamcast.sources.held_suarez import CellSynthesis, DycoreConfig, HeldSuarez, Restart

HORIZONTAL = ("face", "y", "x")


def states_by_time(folder: Path) -> dict:
    """The saved spectral states of the test run: ``{model time: path}``."""
    out = {}
    for path in sorted(Path(folder).glob("day_*.npz")):
        day = float(path.stem.removeprefix("day_"))
        out[model_time(day)] = path
    return out


class Baseline:
    """Forecasts of the dycore at ``truncation`` on the truth store's grid and layers."""

    def __init__(self, truth: Path, truncation: int = 21, dt_minutes: float = 30.0):
        self.truth = unstack(xr.open_zarr(truth, chunks=None, decode_times=DECODER))
        self.model = HeldSuarez(DycoreConfig(truncation=truncation, dt_minutes=dt_minutes))
        self.grid = PhysicsGrid.from_name(self.truth.attrs["grid"])
        self.synth = CellSynthesis(self.model, self.grid.lat.reshape(-1), self.grid.lon.reshape(-1))
        self.interfaces = list(self.truth["layer"].attrs["interfaces"])
        self.seconds_per_day = float("nan")

    def _on_layers(self, fields: dict) -> dict:
        """Synthesised ``U, V, T (L, P)``, ``PS (P,)`` -> the store's layers on the faces."""
        sigma = self.model.sigma_boundaries
        p = sigma[:, None] * fields["PS"][None].astype(np.float64)  # (L + 1, P): p = sigma PS
        dp = np.diff(p, axis=0)[None]  # (1, L, P)
        shape = (6, self.grid.n, self.grid.n)
        out = {
            v: layer_means(fields[v][None], dp, self.interfaces)[0].reshape(-1, *shape)
            for v in ("U", "V", "T")
        }
        return out | {"PS": fields["PS"].reshape(shape)}

    def forecast(self, restart: Path, steps: int, output: Path, hours: float = 6.0) -> Path:
        """A forecast store of ``steps`` steps from the state in ``restart`` (the truth's time
        of that state first), written like a rollout output (``complete_steps``)."""
        saved = Restart.load(restart)
        state, start = self.model.from_restart(saved), model_time(saved.day)
        frames = [self._on_layers(self.synth(state))]
        t0 = time.perf_counter()
        for _ in range(steps):
            state = self.model.advance(state, hours)
            frames.append(self._on_layers(self.synth(state)))
        self.seconds_per_day = (time.perf_counter() - t0) / (steps * hours / 24.0)
        times = np.array(
            [
                start + k * (self.truth["time"].values[1] - self.truth["time"].values[0])
                for k in range(steps + 1)
            ]
        )
        return self._write(frames, times, output)

    def _write(self, frames: list[dict], times, output: Path) -> Path:
        layer = self.truth["layer"]
        data = {}
        for v in ("U", "V", "T"):
            data[v] = (
                ("time", "layer", *HORIZONTAL),
                np.stack([f[v] for f in frames]).astype(np.float32),
                self.truth[v].attrs,
            )
        data["PS"] = (
            ("time", *HORIZONTAL),
            np.stack([f["PS"] for f in frames]).astype(np.float32),
            self.truth["PS"].attrs,
        )
        g = self.grid
        ds = xr.Dataset(
            data,
            coords={
                "time": times,
                "layer": (("layer",), layer.values, layer.attrs),
                "lat": (HORIZONTAL, g.lat, {"units": "degrees_north"}),
                "lon": (HORIZONTAL, g.lon, {"units": "degrees_east"}),
                "area": (HORIZONTAL, g.area, {"units": "sr"}),
            },
            attrs={
                "grid": g.name,
                "title": f"dinosaur T{self.model.config.truncation} forecast",
                "complete_steps": len(frames),
            },
        )
        _, units, calendar = encode(times)
        enc = {"time": {"units": units, "calendar": calendar, "dtype": "int64"}}
        ds.to_zarr(output, mode="w", encoding=enc, consolidated=False)
        return output


def dycore_cost(truncation: int, dt_minutes: float, days: float = 5.0) -> float:
    """Wall seconds per simulated day of the dycore on this machine (after compilation)."""
    model = HeldSuarez(DycoreConfig(truncation=truncation, dt_minutes=dt_minutes))
    state = model.advance(model.rest_state(0), 6.0)  # compiles
    state.vorticity.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(int(days * 4)):
        state = model.advance(state, 6.0)
    state.vorticity.block_until_ready()
    return (time.perf_counter() - t0) / days
