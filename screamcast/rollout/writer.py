# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Streaming, resumable zarr output: one write per step, a crash loses at most that step.

The group attribute ``complete_steps`` is bumped after each step's arrays are written; on
resume the rollout continues from the last complete step (a torn step is rewritten). A step is
written in a background thread while the next one is computed; the next ``append`` (or
``close``) waits for it first, so at most one step is in flight and steps land in order.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import xarray as xr
import zarr
from zarr.core.sync import sync

from screamcast.data.calendar import DECODER, encode
from screamcast.data.channels import grouped
from screamcast.grid import PhysicsGrid


class OutputExistsError(FileExistsError):
    pass


class RolloutWriter:
    """Arrays are created once for all ``times`` (NaN until written); each step writes its
    slice with plain zarr (one chunk per face and variable) and then bumps ``complete_steps``:
    much cheaper per step than an xarray append (docs/performance.md, rollout step), and a
    torn step is simply not counted."""

    def __init__(
        self,
        path: str | Path,
        variables: list[str],
        var_attrs: dict[str, dict],
        grid: PhysicsGrid,
        attrs: dict,
        times: np.ndarray | None = None,
        levels: dict[str, tuple[str, np.ndarray, dict]] | None = None,
        region: tuple[slice, slice, slice] | None = None,
        chunks: tuple[int, int] | None = None,
    ):
        """``region``: this writer's ``(faces, rows, cols)`` when several ranks write one
        output (chunks of one face and ``chunks = (rows, cols)``, so no two ranks write one
        chunk); the steps are then committed by :meth:`commit` once every rank's region is
        written."""
        self.path, self.variables, self.var_attrs = Path(path), variables, var_attrs
        self.region, self.chunks = region, chunks
        self._next: int | None = None  # the step the next append writes
        self.grid, self.attrs, self.times = grid, attrs, times
        # 3-D variables' vertical coordinates, {var: (dim, values, attrs)} (the store's)
        self.levels = levels or {}
        # where each channel goes: (output variable, position along its level dim or None)
        self.targets: list[tuple[str, int | None]] = [("", None)] * len(variables)
        for var, members in grouped(variables).items():
            for pos, (i, level) in enumerate(members):
                self.targets[i] = (var, None if level is None else pos)
        self._group = None
        self._arrays = None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future | None = None

    def create(self) -> None:
        """Create the store at ``path``, which must not exist (replacing one is the caller's
        decision: :mod:`screamcast.rollout.output`)."""
        if self.path.exists():
            raise OutputExistsError(f"output {self.path} already exists")
        n, T = self.grid.n, len(self.times)
        group = zarr.open_group(self.path, mode="w-")
        dims = ["time", "face", "y", "x"]
        # zarr pays a fixed cost per chunk written: small grids keep a whole step of a variable
        # in one chunk; large ones one face per chunk (a 2048^2 face is 16 MB already)
        chunks = (1, 6, n, n) if n <= 256 and self.region is None else (1, 1, n, n)
        if self.chunks:  # several ranks: each writes whole chunks
            chunks = (1, 1, *self.chunks)
        for var, members in grouped(self.variables).items():
            self._create_variable(group, var, members, T, chunks)
        values, units, calendar = encode(self.times)  # in the initial condition's calendar
        t = group.create_array("time", shape=(T,), dtype="int64", dimension_names=["time"])
        t[:] = values
        t.attrs.update({"units": units, "calendar": calendar, "standard_name": "time"})
        for name, values, units in (
            ("lat", self.grid.lat, "degrees_north"),
            ("lon", self.grid.lon, "degrees_east"),
            ("area", self.grid.area, "sr"),
        ):
            c = group.create_array(
                name, shape=values.shape, dtype="float64", dimension_names=dims[1:]
            )
            c[:] = values
            c.attrs["units"] = units
        extra = {"complete_steps": 0, "coordinates": "lat lon area", "grid": self.grid.name}
        group.attrs.update(dict(self.attrs) | extra)
        self._group = group

    def _create_variable(self, group, var: str, members: list, T: int, chunks: tuple) -> None:
        """A 2-D variable ``(time, face, y, x)``, or a 3-D one ``(time, lev, face, y, x)``
        holding its channels' levels with their coordinate values (the store's)."""
        n, first = self.grid.n, self.variables[members[0][0]]
        attrs = {k: v for k, v in self.var_attrs.get(first, {}).items() if k != "level"}
        attrs.pop("level_dim", None)
        if members[0][1] is None:
            shape, dims = (T, 6, n, n), ["time", "face", "y", "x"]
        else:
            dim, values, coord_attrs = self.levels[var]
            chosen = values[[level for _, level in members]]
            dim = self._level_dim(group, var, dim, chosen, coord_attrs)
            shape, dims = (T, len(members), 6, n, n), ["time", dim, "face", "y", "x"]
            chunks = (chunks[0], 1, *chunks[1:])
        arr = group.create_array(
            var,
            shape=shape,
            chunks=chunks,
            dtype="float32",
            fill_value=np.nan,
            dimension_names=dims,
        )
        arr.attrs.update(attrs)

    @staticmethod
    def _level_dim(group, var: str, dim: str, values: np.ndarray, attrs: dict) -> str:
        """The vertical dim ``var``'s levels ``values`` go on: the store's ``dim`` when it is
        new or holds the same levels; else one of ``var``'s own (``lev_T_mid``): variables
        written on subsets of one dim's levels would give the dim two sizes, and a store no
        reader can open."""
        for name in (dim, f"{dim}_{var}"):
            if name not in group:
                c = group.create_array(
                    name, shape=values.shape, dtype=values.dtype, dimension_names=[name]
                )
                c[:] = values
                c.attrs.update(attrs)
                return name
            if np.array_equal(group[name][:], values):
                return name
        raise ValueError(f"output: no vertical dim for '{var}'")  # pragma: no cover

    def _open(self):
        if self._group is None:
            self._group = zarr.open_group(self.path, mode="r+")
        return self._group

    def append(self, time: np.datetime64, fields: np.ndarray) -> None:
        """Queue the next time, ``fields (V, 6, n, n)`` (``(V, F, h, w)`` for a writer of a
        ``region``) in ``variables`` order, for writing. Returns once the previous step is on
        disk and this one is copied (the caller may reuse ``fields``); this step is written in
        the background. Errors of a background write are raised here or by :meth:`close`.
        """
        self.flush()
        group = self._open()
        if self._next is None:
            self._next = int(group.attrs.get("complete_steps", 0))
        k = self._next
        if self.times is not None and self.times[k] != time:
            raise ValueError(f"step {k} of {self.path} is {self.times[k]}, not {time}")
        if self._arrays is None:
            self._arrays = [(group[v].async_array, pos) for v, pos in self.targets]
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="rollout-writer")
        data = np.array(fields, dtype=np.float32)  # a copy: the caller's buffer is free again
        self._pending = self._pool.submit(self._write, k, data)
        self._next = k + 1

    def _write(self, k: int, data: np.ndarray) -> None:
        where = () if self.region is None else self.region

        async def write_all():  # every variable's chunks in flight at once
            await asyncio.gather(
                *(
                    a.setitem((k, *where) if pos is None else (k, pos, *where), data[i])
                    for i, (a, pos) in enumerate(self._arrays)
                )
            )

        sync(write_all())
        if self.region is None:
            self.commit(k)  # only after every chunk is written

    def commit(self, k: int) -> None:
        """Step ``k`` is complete: every chunk of it is written (by every rank)."""
        self._open().attrs["complete_steps"] = k + 1

    def chunked_for(self, regions: list[tuple[slice, slice, slice]]) -> bool:
        """Whether every variable's chunks lie each in one of ``regions`` (one face, rows and
        columns dividing every region's), so those ranks may write it."""
        group = self._open()
        chunks = [group[v].chunks for v in {var for var, _ in self.targets}]
        rows = [e for _, r, _ in regions for e in (r.start, r.stop)]
        cols = [e for _, _, c in regions for e in (c.start, c.stop)]

        def fits(c: tuple) -> bool:
            return all(e % c[-2] == 0 for e in rows) and all(e % c[-1] == 0 for e in cols)

        return all(c[-3] == 1 and fits(c) for c in chunks)

    def flush(self) -> None:
        """Wait for the step in flight; re-raise its error, naming the output."""
        pending, self._pending = self._pending, None
        if pending is not None:
            try:
                pending.result()
            except Exception as err:
                raise OSError(f"writing {self.path} failed: {type(err).__name__}: {err}") from err

    def close(self) -> None:
        """Flush and stop the writer thread (the writer can be appended to again later, also
        after ``path`` was changed: the store is reopened)."""
        try:
            self.flush()
        finally:
            if self._pool is not None:
                self._pool.shutdown()
            self._pool, self._arrays, self._group, self._next = None, None, None, None

    def close_quietly(self) -> None:
        """Close after another error: a failing write must not hide the error being raised."""
        try:
            self.close()
        except OSError:
            pass

    def complete_steps(self) -> int:
        self.flush()
        return int(self._open().attrs.get("complete_steps", 0))

    def recover(self) -> tuple[int, np.datetime64, np.ndarray]:
        """The last complete step of an interrupted output: (count, time, fields)."""
        if not self.path.exists():
            raise FileNotFoundError(f"output {self.path} does not exist")
        group = self._open()
        steps = int(group.attrs.get("complete_steps", 0))
        if steps == 0:
            raise ValueError(f"output {self.path} has no complete step")
        ds = xr.open_zarr(self.path, consolidated=False, decode_times=DECODER, chunks=None)
        if self.times is None:
            self.times = ds["time"].values
        return steps, ds["time"].values[steps - 1], self.fields_at(steps - 1)

    def fields_at(self, k: int) -> np.ndarray:
        """Step ``k``'s fields as written, ``(V, 6, n, n)`` (the whole output)."""
        group = self._open()
        return np.stack([group[v][k if pos is None else (k, pos)] for v, pos in self.targets])

    def note_resume(self, steps: int, command: str) -> None:
        """Append to the ``history`` attr: which command resumed, after which time (``steps``
        complete times were kept: the initial state's and ``steps - 1`` steps')."""
        group = self._open()
        history = group.attrs.get("history", "")
        kept = f"time index {steps - 1}, the last complete ({steps} times kept)"
        group.attrs["history"] = f"{history}resumed after {kept}: {command}\n"

    def note_stop(self, record: dict) -> None:
        """The ``stopped`` attr: where and why the guard stopped the run (its steps before
        that are complete and kept)."""
        self._open().attrs["stopped"] = record
