# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Analytic flows on the sphere written as cubed-sphere stores: the demo and the test data.

Every field is evaluated exactly at every output time (``../shared/reference/analytic-flows.md``),
so a rollout can be scored against an exact truth:

- ``u``, ``v``, ``vorticity``: a Rossby-Haurwitz wave (Williamson et al. 1992, case 6), an exact
  solution of the barotropic vorticity equation moving east at angular speed ``nu``;
- ``tracer``: emitted where the ground is high, carried by the wave's own wind, decaying with a
  6 h lifetime (``screamcast.sources.wave_tracer``): what moves it is in the state;
- ``temperature``: a meridional profile plus a diurnal cycle that lags the insolation by 3 h;
- ``precip``: non-negative, zero over most of the globe: a clipped function of vorticity,
  stronger in daylight;
- static ``orography`` and ``land_fraction``.

``screamcast-demo-data --help`` writes a store and its coarse nudging reference.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from screamcast import __version__
from screamcast.data.calendar import canonical, encode, parse, seconds
from screamcast.data.forcing import cos_zenith, insolation
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid, block_mean
from screamcast.sources.wave_tracer import wave_tracer

EARTH_RADIUS = 6.37122e6  # m
OMEGA = 7.292e-5  # s-1

ATTRS = {
    "u": ("m s-1", "eastward_wind", "eastward wind (Rossby-Haurwitz wave)"),
    "v": ("m s-1", "northward_wind", "northward wind (Rossby-Haurwitz wave)"),
    "vorticity": ("s-1", "atmosphere_relative_vorticity", "relative vorticity (RH wave)"),
    "tracer": ("1", "mass_fraction_of_tracer_in_air", "tracer from high ground, moved by the wave"),
    "temperature": ("K", "air_temperature", "temperature with an insolation-driven diurnal cycle"),
    "precip": ("kg m-2 s-1", "precipitation_flux", "precipitation (clipped vorticity, daylight)"),
    "orography": ("m", "surface_altitude", "surface height"),
    "land_fraction": ("1", "land_area_fraction", "land fraction"),
}
PROGNOSTIC = ("u", "v", "vorticity", "tracer", "temperature")
DIAGNOSTIC = ("precip",)
STATIC = ("orography", "land_fraction")
# what moves the tracer, in every store's attrs (a demo store built before has none)
TRACER_ATTR = "source orography / 2500 m, carried by the wave's wind, lifetime {:g} h"
# the demo's nudging reference: 3 x 3 model cells a block (ne8pg2 for n = 48), which do not
# divide its 16-cell tile, so the tile imprint measures the tiling, not the blocks' lattice
DEMO_REFERENCE_COARSEN = 3
DEMO_REFERENCE_GRID = f"ne{24 // DEMO_REFERENCE_COARSEN}pg2"  # of the demo's ne24pg2


@dataclass(frozen=True)
class FlowParameters:
    """The Rossby-Haurwitz wave; ``seed`` sets the longitude of its crests at the start
    (``lon0``; 0 for seed 0) and the tracer's lifetime is ``tracer_lifetime_hours``."""

    w: float = 7.848e-6
    K: float = 7.848e-6
    R: int = 4
    tracer_lifetime_hours: float = 6.0
    seed: int = 0

    @property
    def nu(self) -> float:
        R = self.R
        return (R * (3 + R) * self.w - 2 * OMEGA) / ((1 + R) * (2 + R))

    @property
    def lon0(self) -> float:
        """The wave's phase at the start (radians): spread over one wavelength by seed."""
        return float((self.seed * 0.6180339887498949) % 1.0) * 2 * np.pi / self.R


def rossby_haurwitz(p: FlowParameters, t: float, lat: np.ndarray, lon: np.ndarray):
    """``u, v`` (m s-1) and relative vorticity (s-1) at time ``t`` seconds; lat/lon radians."""
    a, w, K, R = EARTH_RADIUS, p.w, p.K, p.R
    c, s = np.cos(lat), np.sin(lat)
    phase = R * (lon - p.lon0 - p.nu * t)
    u = a * w * c + a * K * c ** (R - 1) * (R * s**2 - c**2) * np.cos(phase)
    v = -a * K * R * c ** (R - 1) * s * np.sin(phase)
    zeta = 2 * w * s - K * (R + 1) * (R + 2) * c**R * s * np.cos(phase)
    return u, v, zeta


def tracer(p: FlowParameters, t, xyz: np.ndarray) -> np.ndarray:
    """The tracer at ``t`` seconds (or ``(T,)`` of them) at points ``xyz (..., 3)``:
    ``screamcast.sources.wave_tracer``."""
    return wave_tracer(p, t, xyz)


def temperature(time, lat_deg: np.ndarray, lon_deg: np.ndarray) -> np.ndarray:
    """288 K - 40 K sin^2(lat) + 6 K times the unclipped cos Z three hours earlier (``time``
    a cftime date in any calendar, or datetime64)."""
    lag = np.timedelta64(3, "h") if isinstance(time, np.datetime64) else dt.timedelta(hours=3)
    lagged = np.atleast_1d(time) - lag
    cz = cos_zenith(lagged, lat_deg, lon_deg)[0]
    return 288.0 - 40.0 * np.sin(np.radians(lat_deg)) ** 2 + 6.0 * cz


def precipitation(zeta: np.ndarray, sun: np.ndarray) -> np.ndarray:
    """2e-3 kg m-2 s-1 times the clipped excess of |vorticity| over 6e-5 s-1, boosted by day."""
    excess = np.maximum(0.0, np.abs(zeta) / 6e-5 - 1.0)
    return 2e-3 * excess**2 * (0.5 + sun / 1361.0)


def evaluate(p: FlowParameters, time, start, lat, lon) -> dict:
    """Every time-dependent field at one time, on points given by lat/lon in degrees."""
    t = seconds(time - start)
    phi, lam = np.radians(lat), np.radians(lon)
    u, v, zeta = rossby_haurwitz(p, t, phi, lam)
    sun = insolation(np.atleast_1d(time), lat, lon)[0]
    return {
        "u": u,
        "v": v,
        "vorticity": zeta,
        "tracer": tracer(p, t, latlon_to_xyz(lat, lon)),
        "temperature": temperature(time, lat, lon),
        "precip": precipitation(zeta, sun),
    }


def static_fields(lat: np.ndarray, lon: np.ndarray) -> dict:
    phi, lam = np.radians(lat), np.radians(lon)
    shape = np.sin(2 * lam + 0.5) * np.cos(3 * phi) + 0.3 * np.sin(5 * phi)
    land = (shape > 0.2).astype(np.float32)
    return {"orography": 2500.0 * np.maximum(0.0, shape - 0.2) ** 1.5, "land_fraction": land}


def output_times(
    start: str, days: float, step_hours: float, calendar: str
) -> tuple[Any, np.ndarray]:
    """The start and every output time, ``step_hours`` apart over ``days`` (both ends), as
    cftime dates of ``calendar``."""
    t0 = parse(start, canonical(calendar), "start")
    count = int(round(days * 24 / step_hours)) + 1
    step = dt.timedelta(seconds=int(round(step_hours * 3600)))
    return t0, np.array([t0 + k * step for k in range(count)], dtype=object)


def time_encoding(times: np.ndarray) -> dict:
    """Exact integer counts in the times' own calendar (a 20-min step is no whole number of
    float hours)."""
    _, units, calendar = encode(times)
    return {"units": units, "calendar": calendar, "dtype": "int64"}


def variable_attrs(name: str) -> dict:
    units, standard, long = ATTRS[name]
    return {"units": units, "standard_name": standard, "long_name": long}


def write_store(
    path: str | Path,
    n: int = 48,
    days: float = 14.0,
    step_hours: float = 1.0,
    seed: int = 0,
    start: str = "2020-01-01T00:00",
    chunk: int | None = None,
    time_chunk: int = 1,
    coarsen: int = 1,
    zarr_format: int | None = None,
    block: int = 24,
    calendar: str = "proleptic_gregorian",
    layout: str = "variables",
) -> Path:
    """Write the analytic truth on E3SM's physics grid ``ne<n/2>pg2`` to a new zarr store.

    ``coarsen > 1`` evaluates on the ``n * coarsen`` grid and takes area-weighted block means
    down to ``n`` (how the coarse nudging reference is made: the same truth, resolved at lower
    resolution; the blocks are whole elements, whose union is a coarse element). Written
    ``block`` times at a time, so memory stays flat in the number of days. ``layout``:
    ``"variables"`` (one array per variable) or ``"stacked"`` (``screamcast.data.stacked``,
    what the ingestion tool writes; the demo store's layout; zarr v3 only).
    """
    if layout not in ("variables", "stacked"):
        raise ValueError(f"layout must be 'variables' or 'stacked', got {layout!r}")
    if layout == "stacked" and zarr_format == 2:
        raise ValueError("the stacked layout needs zarr v3 (sharding); got zarr_format=2")
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; remove it or choose another path")
    grid = PhysicsGrid.for_face_size(n)
    fine = PhysicsGrid(grid.ne * coarsen, grid.pg)
    p = FlowParameters(seed=seed)
    t0, times = output_times(start, days, step_hours, calendar)
    chunk = chunk or (n if n <= 64 else 128)  # fewer, larger chunks: zarr pays per chunk
    chunks = (time_chunk, 1, min(chunk, n), min(chunk, n))
    block = max(block // time_chunk, 1) * time_chunk  # appends stay chunk-aligned
    for b0 in range(0, len(times), block):
        tb = times[b0 : b0 + block]
        fields = [evaluate(p, t, t0, fine.lat, fine.lon) for t in tb]
        ds = _time_block(fields, tb, grid, fine.area, coarsen)
        # every block carries the attrs: an append replaces the store's attrs with its own
        ds.attrs = _store_attrs(grid, coarsen, p)
        if layout == "stacked":
            static = _with_statics(xr.Dataset(coords=ds.coords), fine, coarsen) if b0 == 0 else None
            _write_stacked(path, ds, b0, times, static, chunk)
        elif b0 == 0:
            ds = _with_statics(ds, fine, coarsen)
            _create_variables(path, ds, times, chunks, zarr_format)
        else:
            ds = ds.drop_vars(["lat", "lon", "area"])
            ds.to_zarr(path, append_dim="time", consolidated=zarr_format == 2)
    return path


def _create_variables(path: Path, ds: xr.Dataset, times, chunks, zarr_format) -> None:
    """The one-array-per-variable store with its first block of times."""
    encoding = {name: {"chunks": chunks} for name in PROGNOSTIC + DIAGNOSTIC}
    encoding |= {name: {"chunks": chunks[1:]} for name in STATIC}
    # exact integer counts (a 20-min step is not a whole number of float hours)
    encoding["time"] = time_encoding(times)
    consolidated = zarr_format == 2  # consolidated metadata is not part of zarr v3
    ds.to_zarr(
        path, mode="w-", encoding=encoding, zarr_format=zarr_format, consolidated=consolidated
    )


DIMS = ("face", "y", "x")


def _time_block(
    fields: list[dict], times, grid: PhysicsGrid, fine_area: np.ndarray, coarsen: int
) -> xr.Dataset:
    """The time-dependent variables of ``fields`` (one dict per time), block-averaged."""
    data_vars = {
        name: (
            ("time", *DIMS),
            block_mean(np.stack([f[name] for f in fields]), fine_area, coarsen).astype(np.float32),
            variable_attrs(name),
        )
        for name in PROGNOSTIC + DIAGNOSTIC
    }
    coords = {
        "lat": (DIMS, grid.lat, {"units": "degrees_north", "standard_name": "latitude"}),
        "lon": (DIMS, grid.lon, {"units": "degrees_east", "standard_name": "longitude"}),
        "area": (DIMS, grid.area, {"units": "sr", "long_name": "cell area (unit sphere)"}),
        "time": ("time", times),
    }
    return xr.Dataset(data_vars, coords=coords)


def _write_stacked(path, ds: xr.Dataset, b0: int, times, static, chunk: int) -> None:
    """One block of times into a stacked store, created at the first block (``static``: the
    static fields, given then): the coordinates (every time) through xarray, then ``fields``
    and ``static_fields`` (one shard a face and time; one time per chunk)."""
    import zarr

    from screamcast.data import stacked

    n = ds.sizes["y"]
    if b0 == 0:
        coords = xr.Dataset(coords=ds.drop_vars("time").coords, attrs=ds.attrs)
        coords = coords.assign_coords(time=("time", times))
        encoding = {"time": time_encoding(times)}
        coords.to_zarr(path, mode="w-", encoding=encoding, zarr_format=3, consolidated=False)
    group = zarr.open_group(path, mode="r+")
    if b0 == 0:
        entries = [(v, 1, None, ds[v].attrs) for v in PROGNOSTIC + DIAGNOSTIC]
        stacked.create_stack(group, stacked.stack_spec(entries), len(times), n, chunk, n)
        spec = stacked.stack_spec([(v, 1, None, static[v].attrs) for v in STATIC])
        stacked.create_stack(group, spec, None, n, chunk, n)
        stacked.write_stack(group, {v: static[v].values for v in STATIC})  # (C, 6, n, n)
    stacked.write_stack(group, {v: ds[v].values for v in PROGNOSTIC + DIAGNOSTIC}, b0)


def _with_statics(ds: xr.Dataset, fine: PhysicsGrid, coarsen: int) -> xr.Dataset:
    """The first block also carries the static fields."""
    statics = static_fields(fine.lat, fine.lon)
    for name in STATIC:
        ds[name] = (DIMS, block_mean(statics[name], fine.area, coarsen).astype(np.float32))
        ds[name].attrs = variable_attrs(name)
    return ds


def _store_attrs(grid: PhysicsGrid, coarsen: int, p: FlowParameters) -> dict:
    return {
        "title": "screamcast analytic flows (exact truth)",
        "source": f"screamcast {__version__} screamcast.sources.synthetic",
        "grid": grid.name,
        "seed": p.seed,
        "tracer": TRACER_ATTR.format(p.tracer_lifetime_hours),
        "coarsened_from": f"ne{grid.ne * coarsen}pg{grid.pg}",
        "Conventions": "CF-1.8",
    }


def write_latlon_reference(
    path: str | Path,
    nlat: int = 36,
    days: float = 14.0,
    step_hours: float = 6.0,
    seed: int = 0,
    start: str = "2020-01-01T00:00",
    calendar: str = "proleptic_gregorian",
) -> Path:
    """The prognostic truth on a regular ``nlat x 2*nlat`` lat-lon grid (cell centres)."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; remove it or choose another path")
    lat = -90 + (np.arange(nlat) + 0.5) * 180.0 / nlat
    lon = (np.arange(2 * nlat) + 0.5) * 180.0 / nlat
    lat2, lon2 = np.meshgrid(lat, lon, indexing="ij")
    p = FlowParameters(seed=seed)
    t0, times = output_times(start, days, step_hours, calendar)
    fields = [evaluate(p, t, t0, lat2, lon2) for t in times]
    ds = xr.Dataset(
        {
            name: (("time", "lat", "lon"), np.stack([f[name] for f in fields]).astype(np.float32))
            for name in PROGNOSTIC
        },
        coords={"time": times, "lat": ("lat", lat), "lon": ("lon", lon)},
    )
    for name in PROGNOSTIC:
        ds[name].attrs = variable_attrs(name)
    ds["lat"].attrs["units"], ds["lon"].attrs["units"] = "degrees_north", "degrees_east"
    ds.to_zarr(path, mode="w-", consolidated=False, encoding={"time": time_encoding(times)})
    return path
