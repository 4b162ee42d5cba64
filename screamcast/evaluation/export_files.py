# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Write an export (:mod:`screamcast.evaluation.export`) as EAMxx-named netCDF files or one
zarr store, refusing to overwrite anything unless asked and never leaving half a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import xarray as xr

from screamcast.evaluation import export_cf as cf
from screamcast.evaluation.export import (
    FORMATS,
    LatLonLayout,
    NativeLayout,
    build,
    open_source,
)

FILL = 1e20  # EAM's missing value


class ExportExistsError(FileExistsError):
    """An output the export would write already exists (and overwriting was not asked)."""


def _encoding(ds: xr.Dataset, average: str) -> dict:
    """CF encodings: times in days since the file's first (bounds alike), no fill value on
    coordinates, fields' missing values as EAM writes them (``_FillValue = 1e20``)."""
    _, _, _, time_enc = cf.time_variables([(ds.time_bnds.values[0, 0],) * 2], average)["time"]
    enc = {t: dict(time_enc, _FillValue=None) for t in ("time", "time_bnds")}
    enc |= {c: {"_FillValue": None} for c in ds.coords if c not in enc}
    return enc | {v: {"_FillValue": FILL} for v in ds.data_vars if ds[v].dtype.kind == "f"}


def _plan(periods: list, output: str, fmt: str, per_file: int | None) -> list[tuple[Path, list]]:
    """``[(path, periods)]`` of every file (one zarr store, or netCDF files of ``per_file``
    times each, all in one file when None)."""
    if fmt == "zarr":
        return [(Path(output), periods)]
    per_file = per_file or len(periods)
    chunks = [periods[i : i + per_file] for i in range(0, len(periods), per_file)]
    return [(Path(f"{output}.{cf.file_date(c[0][1])}.nc"), c) for c in chunks]


def _refuse_existing(paths: list[Path], overwrite: bool, source: str) -> None:
    """No output may be the source, and ``--overwrite`` replaces only an earlier export (its
    title says so): never a rollout output, a store or a folder the user named by mistake."""
    for path in paths:
        if "://" not in source and path.resolve() == Path(source).resolve():
            raise ExportExistsError(f"output {path} is the source: choose another --output")
        if overwrite and path.exists() and not _is_export(path):
            raise ExportExistsError(
                f"output {path} exists and is not a screamcast export: --overwrite replaces "
                "only an earlier export; choose another --output"
            )
        if path.parent.exists() and not path.parent.is_dir():
            raise FileExistsError(f"output {path}: {path.parent} is a file, not a directory")
        if path.exists() and not overwrite:
            raise ExportExistsError(
                f"output {path} already exists: choose another --output or pass --overwrite"
            )


def _is_export(path: Path) -> bool:
    """Whether ``path`` (a netCDF file or a zarr store) is one this command wrote."""
    try:
        if path.is_dir():
            with xr.open_zarr(path, consolidated=None, chunks=None) as ds:
                return str(ds.attrs.get("title", "")).startswith("screamcast export")
        with xr.open_dataset(path, engine="netcdf4") as ds:
            return str(ds.attrs.get("title", "")).startswith("screamcast export")
    except (OSError, ValueError, KeyError):
        return False


def _write(ds: xr.Dataset, path: Path, fmt: str, average: str) -> None:
    """Write beside ``path`` and rename over it: a failed write leaves the old one."""
    partial = path.with_name(f".{path.name}.partial")
    if partial.is_dir():
        shutil.rmtree(partial)
    partial.unlink(missing_ok=True)
    try:
        if fmt == "zarr":
            ds.to_zarr(partial, mode="w-", encoding=_encoding(ds, average), consolidated=True)
            if path.is_dir():
                shutil.rmtree(path)
        else:
            ds.to_netcdf(
                partial, engine="netcdf4", format="NETCDF4", encoding=_encoding(ds, average)
            )
        os.replace(partial, path)
    finally:
        if partial.is_dir():
            shutil.rmtree(partial)
        partial.unlink(missing_ok=True)


def export(
    source: str,
    output: str,
    fmt: str = "netcdf",
    variables=(),
    average: str = "none",
    latlon: tuple[int, int] | None = None,
    times_per_file: int | None = None,
    overwrite: bool = False,
    storage_options=None,
) -> list[Path]:
    """Export ``source`` and return the files written. ``output``: the netCDF files'
    prefix (``<output>.<date>.nc``) or the zarr store; ``latlon``: ``(nlat, nlon)`` for a
    regular grid, else E3SM's native columns."""
    if fmt not in FORMATS:
        raise ValueError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if times_per_file is not None and times_per_file < 1:
        raise ValueError(f"--times-per-file: {times_per_file} must be a positive integer")
    src = open_source(source, variables, storage_options)
    periods = cf.periods(src.ds["time"].values, average)
    plan = _plan(periods, output, fmt, times_per_file)
    _refuse_existing([path for path, _ in plan], overwrite, str(source))
    for path, _ in plan:  # after every check: a refused export makes no folder
        path.parent.mkdir(parents=True, exist_ok=True)
    layout = NativeLayout(src.grid) if latlon is None else LatLonLayout(src.grid, *latlon)
    for path, chunk in plan:
        _write(build(src, layout, chunk, average), path, fmt, average)
    return [path for path, _ in plan]


def parse_latlon(text: str) -> tuple[int, int]:
    """``"180x360"`` -> ``(180, 360)``; anything else is refused, naming it."""
    parts = str(text).lower().split("x")
    if len(parts) == 2 and all(p.strip().isdigit() and int(p) > 0 for p in parts):
        return int(parts[0]), int(parts[1])
    raise ValueError(f"--latlon {text!r}: expected NLATxNLON with positive sizes, e.g. 180x360")
