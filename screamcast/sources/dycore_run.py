# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Runs of the Held-Suarez dycore: spin-ups (restart -> restart) and history runs (restart ->
EAM history files on an ``ne*pg2`` grid), resumable after a kill.

Independent runs come from one spun-up restart: each ``seed`` perturbs its temperature by a
hundredth of a kelvin and discards ``discard_days`` (chaos makes the runs independent within
weeks) before the first recorded time. A history run keeps a restart of where it is after
every file (``.run_state.npz`` in its folder), so the same command continues a killed run;
other settings refuse to continue it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from screamcast.grid.physics import PhysicsGrid
from screamcast.sources.eam_history import write_file
from screamcast.sources.held_suarez import (
    CellSynthesis,
    DycoreConfig,
    DycoreError,
    HeldSuarez,
    Restart,
)

STATE = ".run_state.npz"  # a history run's own restart (where it is), in its folder
SETTINGS = "run.json"  # the settings and version that made the files


def spinup(
    output: str | Path,
    days: float,
    config: DycoreConfig,
    restart: str | Path | None = None,
    seed: int = 0,
    command: str = "",
) -> Restart:
    """From rest (``restart`` None; ``seed`` places the starting bump) or from a restart
    (padded or truncated to ``config``'s truncation), ``days`` on; saved at ``output``."""
    model = HeldSuarez(config)
    if restart is None:
        state, day, history = model.rest_state(seed), 0.0, ""
    else:
        r = Restart.load(restart)
        state, day, history = model.from_restart(r), r.day, r.history
    state = model.advance(state, days * 24.0) if days else state
    entry = f"{command or 'spinup'} (T{config.truncation} L{config.levels}, to day {day + days:g})"
    out = model.to_restart(state, day + days, "\n".join(h for h in (history, entry) if h))
    out.save(output)
    return out


@dataclass
class HistoryOptions:
    """A history run: ``days`` recorded every ``output_hours`` on ``ne<ne>pg2``, in files of
    ``file_days``, after ``discard_days`` from the ``seed``-perturbed restart."""

    restart: str
    output_dir: str
    days: float
    seed: int = 1
    discard_days: float = 30.0
    output_hours: float = 6.0
    file_days: float = 10.0
    ne: int = 16
    states_every_hours: float = 0.0  # also save the spectral state this often (baselines)
    config: DycoreConfig = DycoreConfig()


def history(options: HistoryOptions, progress: bool = True) -> dict:
    """Write (or continue) a history run; returns a summary (files, seconds per day)."""
    o = options
    folder = Path(o.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    model = HeldSuarez(o.config)
    per_file = _per_file(o)
    total = int(round(o.days * 24.0 / o.output_hours))
    files = -(-total // per_file)
    state, written, start_day, discard_s = _resume_or_start(model, o, folder)
    discarded = o.discard_days if written == 0 else 0.0  # a resumed run discards nothing
    synth = CellSynthesis(model, *_cell_centres(o.ne))
    grid = PhysicsGrid(o.ne, 2)
    attrs = {
        "source": "Held-Suarez (1994) on dinosaur (Google's spectral dynamical core)",
        "dycore": f"dinosaur {_dinosaur_version()} T{o.config.truncation} L{o.config.levels}",
        "seed": o.seed,
        "placement": "spectral expansion evaluated exactly at the cell centres",
    }
    t0, stepped = time.perf_counter(), 0.0
    for f in range(written, files):
        days, fields = [], []
        for k in range(f * per_file, min((f + 1) * per_file, total)):
            state = model.advance(state, o.output_hours)
            stepped += o.output_hours / 24.0
            day = start_day + (k + 1) * o.output_hours / 24.0
            days.append(day)
            fields.append(_in_column_order(synth(state), grid))
            _maybe_save_state(model, state, day, o, folder, k)
        name = f"held_suarez.eam.h0.{_stamp(days[0])}.nc"
        write_file(folder / name, days, fields, grid, model.sigma_boundaries, attrs)
        model.to_restart(state, days[-1], json.dumps({"file": f + 1, "start_day": start_day})).save(
            folder / STATE
        )
        if progress:
            rate = (time.perf_counter() - t0 + discard_s) / max(stepped + discarded, 1e-9)
            print(
                f"{name}: file {f + 1}/{files}, {rate:.2f} s per simulated day "
                f"({stepped + discarded:g} days simulated, {discarded:g} of them discarded)",
                flush=True,
            )
    seconds = time.perf_counter() - t0
    return {
        "files": files,
        "written": files - written,
        "days_recorded": stepped,
        "days_discarded": discarded,
        "seconds_per_day": (seconds + discard_s) / max(stepped + discarded, 1e-9),
    }


def _per_file(o: HistoryOptions) -> int:
    per_file = o.file_days * 24.0 / o.output_hours
    if abs(per_file - round(per_file)) > 1e-9 or per_file < 1:
        raise DycoreError(f"--file-days {o.file_days:g}: a whole number of outputs per file")
    return int(round(per_file))


def _resume_or_start(model: HeldSuarez, o: HistoryOptions, folder: Path):
    """``(state, files already written, simulated day of the run's time 0, seconds spent
    discarding ``discard_days`` here)``."""
    settings = {k: v for k, v in asdict(o).items() if k != "output_dir"}
    # the restart by its bytes: the same file named by another path is the same run
    settings["restart"] = "sha256:" + hashlib.sha256(Path(o.restart).read_bytes()).hexdigest()
    settings["dinosaur"] = _dinosaur_version()
    meta = folder / SETTINGS
    if (folder / STATE).exists():
        have = json.loads(meta.read_text()) if meta.exists() else {}
        want = json.loads(json.dumps(settings))  # as JSON keeps it (tuples become lists)
        diff = [k for k in want if have.get(k) != want[k]]
        if diff:
            raise DycoreError(
                f"{folder} holds a run made with other settings ({', '.join(diff)}): continue "
                "it with its own settings (run.json), or write to another folder"
            )
        r = Restart.load(folder / STATE)
        where = json.loads(r.history)
        return model.from_restart(r), int(where["file"]), float(where["start_day"]), 0.0
    if any(folder.glob("*.nc")):
        raise DycoreError(f"{folder} already holds history files: write to another folder")
    r = Restart.load(o.restart)
    state = model.perturbed(model.from_restart(r), o.seed)
    t0 = time.perf_counter()
    state = model.advance(state, o.discard_days * 24.0) if o.discard_days else state
    meta.write_text(json.dumps(settings | {"restart_history": r.history}, indent=1))
    return state, 0, r.day + o.discard_days, time.perf_counter() - t0


def _maybe_save_state(model, state, day, o: HistoryOptions, folder: Path, k: int) -> None:
    if o.states_every_hours <= 0:
        return
    every = int(round(o.states_every_hours / o.output_hours))
    if (k + 1) % every == 0:
        (folder / "states").mkdir(exist_ok=True)
        model.to_restart(state, day, f"history seed {o.seed}").save(
            folder / "states" / f"day_{day:010.4f}.npz"
        )


def _cell_centres(ne: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``ne<ne>pg2`` cell centres (degrees), ``(6 * n * n,)`` in the grid's flat order."""
    g = PhysicsGrid(ne, 2)
    return g.lat.reshape(-1), g.lon.reshape(-1)


def _in_column_order(fields: dict, grid: PhysicsGrid) -> dict:
    """Fields on the grid's flat ``(face, y, x)`` order -> E3SM's column order."""
    order = grid.column_index()
    return {k: v[..., order] for k, v in fields.items()}


def _stamp(day: float) -> str:
    from screamcast.sources.eam_history import model_time

    return model_time(day).strftime("%Y-%m-%d-%H")


def _dinosaur_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dinosaur")
    except PackageNotFoundError:  # pragma: no cover - the extra is installed to get here
        return "unknown"
