# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The benchmark's stages after the data: training, forecasts and their scores, the long
climate rollout, and the cost of each model on this machine."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch
import xarray as xr

from benchmarks.held_suarez import forecasts as fc
from screamcast.data.calendar import DECODER
from screamcast.data.stacked import unstack
from screamcast.evaluation import climate as cl
from screamcast.evaluation.climate_report import ke_spectra


def _open(path: Path) -> xr.Dataset:
    return unstack(xr.open_zarr(path, chunks=None, decode_times=DECODER, consolidated=False))


def found_done(work: Path) -> list[str]:
    """The training stages and cached results already in ``work`` (made by an earlier
    invocation): the record names them rather than claiming this run made them."""
    from benchmarks.held_suarez.training import STAGES

    done = [name for name, _, _ in STAGES if (work / "train" / name / "done").exists()]
    cached = [name for name in ("forecasts", "climate", "cost") if (work / f"{name}.json").exists()]
    return done + cached


def train(
    store: Path, work: Path, scale: float, overrides: list[str], global_overrides=()
) -> tuple[Path, dict]:
    from benchmarks.held_suarez import training

    return training.train_stages(store, work, scale, overrides, global_overrides=global_overrides)


def forecasts(paths: dict, checkpoint: Path, work: Path, count: int, lead_days: float) -> dict:
    """Per model, variable and start: the per-step RMSE and ACC, then their means over starts."""
    from benchmarks.held_suarez.dycore_baseline import Baseline, states_by_time

    cache = work / "forecasts.json"
    if cache.exists():
        return json.loads(cache.read_text())
    test = _open(paths["test"])
    states = states_by_time(paths["states"])
    steps = int(round(lead_days * 4))
    chosen = fc.starts(test, states, count, steps=steps)
    folder = work / "forecasts"
    folder.mkdir(exist_ok=True)
    t21 = Baseline(paths["test"])
    runs: dict[str, list] = {"free": [], "nudged": [], "t21": []}
    refs, spectra = [], {"truth": [], "free": [], "nudged": [], "t21": []}
    for k, start in enumerate(chosen):
        out = {m: folder / f"{m}_{k}.zarr" for m in runs}
        runs["free"].append(
            fc.emulator(checkpoint, paths["test"], start, steps, out["free"], paths["climatology"])
        )
        runs["nudged"].append(
            fc.emulator(
                checkpoint,
                paths["test"],
                start,
                steps,
                out["nudged"],
                paths["climatology"],
                paths["reference"],
            )
        )
        t21.forecast(states[start], steps, out["t21"])
        runs["t21"].append(
            fc.scored(out["t21"], paths["test"], paths["climatology"], folder / f"t21_{k}_report")
        )
        times = test["time"].sel(time=slice(start, None)).values[: steps + 1]
        variables = [v for v in runs["free"][-1] if v.startswith(("U[", "V[", "T["))]
        refs.append(fc.reference_scores(paths["reference"], test, times, variables))
        _spectra(spectra, out, test, times[min(20, steps)])
    result = {
        "starts": [str(s) for s in chosen],
        "models": {m: _mean_over_starts(r) for m, r in runs.items()},
        "reference_rmse": {v: np.mean([r[v] for r in refs], axis=0).tolist() for v in refs[0]},
        "spectra_day5": {m: np.mean(s, axis=0).tolist() for m, s in spectra.items() if s},
        "t21_seconds_per_day": t21.seconds_per_day,
    }
    cache.write_text(json.dumps(result))
    return result


def _mean_over_starts(tables: list[dict]) -> dict:
    """``{variable: {score: per-step mean over starts}}`` (RMSE: root of the mean square)."""
    out = {}
    for v in tables[0]:
        out[v] = {}
        for score in tables[0][v]:
            series = np.array([t[v][score] for t in tables], np.float64)
            if "rmse" in score:
                out[v][score] = np.sqrt(np.mean(series**2, axis=0)).tolist()
            else:
                out[v][score] = np.mean(series, axis=0).tolist()
    return out


def _spectra(spectra: dict, out: dict, test: xr.Dataset, time) -> None:
    """Kinetic-energy spectra of the top layer's winds at ``time`` (half the sum of u's and
    v's power per degree: the spectrum of the velocity components, not of the rotational and
    divergent parts)."""
    from screamcast.data.channels import with_channels
    from screamcast.evaluation.spectra import CubeSpectrum
    from screamcast.grid.physics import PhysicsGrid

    grid = PhysicsGrid.from_name(test.attrs["grid"])
    spec = CubeSpectrum(grid)

    def ke(ds):
        ds = with_channels(ds, ["U[0]", "V[0]"])
        at = ds.sel(time=time)
        return (0.5 * (spec(at["U[0]"].values) + spec(at["V[0]"].values))).tolist()

    spectra["truth"].append(ke(test))
    for m, path in out.items():
        spectra[m].append(ke(_open(path)))


def _steps_written(output: Path) -> int:
    import zarr

    return int(zarr.open_group(output, mode="r").attrs["complete_steps"]) - 1


DEPART_KELVIN = 5.0  # a rollout whose global-mean T moved this far has left the climate


def climate(paths: dict, checkpoint: Path, work: Path, days: float) -> dict:
    """A free rollout of ``days`` from the first test time with a state, its zonal climate
    against the training year's, its cost."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.rollout.run import run_rollout

    cache = work / "climate.json"
    if cache.exists():
        return json.loads(cache.read_text())
    output = work / "climate_rollout.zarr"
    steps = int(round(days * 4))
    test = _open(paths["test"])
    if output.exists():
        import shutil

        shutil.rmtree(output)
    from screamcast.rollout.plan import RolloutError

    start = test["time"].values[3].strftime("%Y-%m-%dT%H:%M")
    options = InferenceConfig.from_keys(
        {
            "checkpoint.path": str(checkpoint),
            "initial_condition.data": str(paths["test"]),
            "initial_condition.start": start,
            "output.path": str(output),
            "output.steps": steps,
            "output.progress": False,
            "stepper.halo_adjoint": True,  # intra-face
        }
    )
    t0, stopped = time.perf_counter(), ""
    try:
        run_rollout(options)
    except RolloutError as err:  # a blow-up: the steps before it are kept and scored
        stopped = str(err)
    seconds = time.perf_counter() - t0
    model = cl.of_store(_open(output), depart_kelvin=DEPART_KELVIN)
    truth = cl.of_store(_open(paths["train"]))
    clim_t = float(np.mean(truth.global_t))
    outside = np.flatnonzero(np.abs(np.array(model.global_t) - clim_t) > 1.0)
    result = cl.compare(model, truth) | {
        "days": days,
        "steps_run": model.count - 1,
        "bounded": bool(model.count == steps + 1),
        "stopped": stopped,
        # the statistics are over the steps before this (the global-mean T left its start by
        # more than DEPART_KELVIN): a climate only when it is None
        "departure_day": None if model.departed is None else model.departed / 4.0,
        # the steps the rollout wrote (before a non-finite value), not those scored
        "emulator_seconds_per_day": seconds / (_steps_written(output) / 4.0),
        "zonal": {k: v.tolist() for k, v in model.means().items()},
        "zonal_truth": {k: v.tolist() for k, v in truth.means().items()},
        "global_t": model.global_t,
        "global_t_truth": truth.global_t,
        # days until the global-mean T first left 1 K of the truth's climatology
        "days_within_1k": (int(outside[0]) if len(outside) else len(model.global_t) - 1) / 4.0,
        "ke_spectrum_last": {
            k: v.tolist()
            for k, v in ke_spectra(_open(output), _open(paths["train"]), model.count - 1).items()
        },
    }
    cache.write_text(json.dumps(result))
    return result


def emulator_cost(
    paths: dict, checkpoint: Path, work: Path, days: float, precision: str, whole_faces=False
):
    """Wall seconds per simulated day of the emulator's step once started (one step taken
    first): the rollout's own step (gather, network, reassembly, correctors) and guard from
    the first test state, as the dycore is timed after its compilation; the writer, like the
    dycore's output, is left out (the climate rollout's cost includes both). ``whole_faces``:
    on inference tiles of a face each (``stepper.tile``; skill kept: the tiles lab book)."""
    from screamcast.config.inference import InferenceConfig
    from screamcast.grid.physics import PhysicsGrid
    from screamcast.model.state import State
    from screamcast.rollout.advance import GuardStop, advance
    from screamcast.rollout.driver import Part
    from screamcast.rollout.exchange import LocalExchange
    from screamcast.rollout.plan import plan_rollout
    from screamcast.rollout.rollout_step import build_guard, build_step

    steps = max(int(round(days * 4)), 1)
    test = _open(paths["test"])
    # whole faces, or the checkpoint's training tile (not the automatic one)
    tile = PhysicsGrid.from_name(test.attrs["grid"]).n if whole_faces else _tile(checkpoint)
    keys = {
        "checkpoint.path": str(checkpoint),
        "initial_condition.data": str(paths["test"]),
        "initial_condition.start": test["time"].values[3].strftime("%Y-%m-%dT%H:%M"),
        "output.path": str(work / "cost_rollout_never_written.zarr"),
        "output.steps": steps + 1,
        # intra-face at the training tile, as the climate rollout; whole faces have no seams
        # inside a face, so there it is the crop (the intra-face adjoint is refused)
        "stepper.halo_adjoint": not whole_faces,
        "stepper.precision": precision,
        "guard.action": "off",  # a cost, not a climate
        "stepper.tile": tile,
    }
    plan, inputs = plan_rollout(InferenceConfig.from_keys(keys))
    stepper = Part(plan, inputs, LocalExchange()).stepper("cpu")  # the rollout's, on one rank
    x = torch.as_tensor(inputs.initial[: len(plan.prog)])  # (C, 6, n, n)
    marks = []  # each step's end; the first step (cold) is not timed

    def emit(k: int, y: torch.Tensor) -> None:
        marks.append(time.perf_counter())

    step, guard = build_step(plan, stepper), build_guard(plan)
    try:
        state = State.one(x, plan.out_times[0])
        advance(step, guard, state, plan.out_times, range(steps + 1), emit)
    except GuardStop:  # a non-finite state (the guard is off otherwise): the steps before it
        pass
    if len(marks) < 2:
        return float("nan")
    return (marks[-1] - marks[0]) / ((len(marks) - 1) / 4.0)


def _tile(checkpoint: Path) -> int:
    """The checkpoint's training tile."""
    from screamcast.checkpoint_format import load_for_inference

    return int(load_for_inference(checkpoint).description.grid.tile)


def cost(climate_result: dict, truncation: int, days: float, emulator: dict, fastest: str) -> dict:
    """Simulated days per wall day: the emulator's once started (``emulator``: seconds per
    day by precision and on whole faces, :func:`emulator_cost`; ``fastest``: this CPU's best
    precision) and with its start-up (the long rollout, default settings), and the dycore's at the
    truth's truncation and at T21 (after compilation), measured here."""
    from benchmarks.held_suarez.dycore_baseline import dycore_cost

    per_day = {
        "emulator": emulator[fastest],
        "emulator_fp32": emulator["fp32"],
        "emulator_whole_faces": emulator["whole_faces"],
        "emulator_with_start_up": climate_result["emulator_seconds_per_day"],
        f"dycore_T{truncation}": dycore_cost(truncation, 20.0, days),
        "dycore_T21": dycore_cost(21, 30.0, days),
    }
    out = {k: {"seconds_per_day": s, "days_per_wall_day": 86400.0 / s} for k, s in per_day.items()}
    out["emulator"]["precision"] = out["emulator_whole_faces"]["precision"] = fastest
    return out
