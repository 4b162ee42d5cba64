# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The Held-Suarez source (dinosaur, the ``dycore`` extra): exact values at cell centres,
restarts across truncations, the shipped spun-up state, history runs that survive a kill, and
the benchmark end to end at a tiny size (T21 on ne4pg2, a few days, a few training steps)."""

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

pytest.importorskip("dinosaur")

from screamcast.sources.held_suarez import (
    CellSynthesis,
    DycoreConfig,
    HeldSuarez,
    Restart,
    resize_modal,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "screamcast/sources/restarts/held_suarez_T42L20.npz"


@pytest.fixture(scope="module")
def t21():
    model = HeldSuarez(DycoreConfig(truncation=21, levels=4, dt_minutes=30.0))
    return model, model.advance(model.rest_state(0), 24.0)


def test_a_time_to_run_is_positive_and_whole_steps(t21):
    """``spinup --days -3`` said "-72 h is not a whole number of 20-minute steps" (issue 42)."""
    from screamcast.sources.held_suarez import DycoreError

    model = t21[0]
    assert model.steps_per(6.0) == 12  # 30-minute steps
    with pytest.raises(DycoreError, match="the time to run must be positive, got -72 h"):
        model.steps_per(-72.0)
    with pytest.raises(DycoreError, match="0.25 h is not a whole number of 30-minute steps"):
        model.steps_per(0.25)


def test_values_at_points_are_the_spectral_expansion(t21):
    """At the Gaussian grid's own nodes the synthesis equals dinosaur's inverse transform (the
    same expansion, evaluated), so at cell centres it is the expansion, not an interpolation."""
    from dinosaur import spherical_harmonic as sh

    model, state = t21
    g = model.coords.horizontal
    lon, sin_lat = g.nodal_axes
    LON, SL = np.meshgrid(lon, sin_lat, indexing="ij")
    synth = CellSynthesis(model, np.degrees(np.arcsin(SL)).ravel(), np.degrees(LON).ravel())
    f = synth(state)
    u, _ = sh.vor_div_to_uv_nodal(g, state.vorticity, state.divergence)
    wind = synth._scale["wind"]
    np.testing.assert_allclose(f["U"], np.asarray(u).reshape(4, -1) * wind, atol=2e-5)
    t = model.reference_temperature[:, None, None] + np.asarray(
        g.to_nodal(state.temperature_variation)
    )
    np.testing.assert_allclose(f["T"], t.reshape(4, -1) * synth._scale["temperature"], rtol=1e-6)
    assert 9.9e4 < f["PS"].mean() < 1.01e5


def test_a_restart_pads_and_truncates_across_truncations(t21, tmp_path):
    model, state = t21
    r = model.to_restart(state, 1.0, "test")
    r.save(tmp_path / "r.npz")
    back = Restart.load(tmp_path / "r.npz")
    assert back.truncation == 21 and back.day == 1.0 and back.history == "test"
    x = back.arrays["vorticity"]
    up = resize_modal(x, (85, 44))  # T42's modal shape
    assert np.array_equal(resize_modal(up, x.shape[-2:]), x) and not up[:, 43:].any()
    other = HeldSuarez(DycoreConfig(truncation=21, levels=8))
    with pytest.raises(ValueError, match="restarts change truncation, never levels"):
        other.from_restart(back)


def test_the_shipped_restart_is_a_spun_up_turbulent_state():
    from screamcast.grid import PhysicsGrid

    r = Restart.load(SHIPPED)
    assert (r.truncation, r.levels, r.day) == (42, 20, 260.0)
    assert "screamcast-dycore spinup" in r.history
    model = HeldSuarez(DycoreConfig(truncation=42))
    g = PhysicsGrid(8, 2)
    f = CellSynthesis(model, g.lat.ravel(), g.lon.ravel())(model.from_restart(r))
    u = f["U"].reshape(20, 6, 16, 16)
    assert 20 < u.max() < 120  # jets, with eddies on them
    lat = g.lat
    band = (lat > 30) & (lat < 50)
    eddy = u[5][band].std()  # at sigma ~0.275: eddies, not a zonal flow from rest
    assert eddy > 3.0, eddy
    assert 180 < f["T"].min() and f["T"].max() < 320


def test_a_killed_history_run_continues_to_the_same_files(tmp_path, monkeypatch):
    from screamcast.sources import dycore_run as run
    from screamcast.sources import eam_history

    restart = tmp_path / "r.npz"
    cfg = DycoreConfig(truncation=21, levels=4, dt_minutes=30.0)
    run.spinup(restart, 1.0, cfg)
    options = dict(days=2.0, seed=3, discard_days=0.5, file_days=1.0, ne=2, config=cfg)
    whole = run.history(run.HistoryOptions(str(restart), str(tmp_path / "whole"), **options), False)
    assert whole["days_recorded"] == 2.0 and whole["days_discarded"] == 0.5  # 2.5 simulated
    real, calls = eam_history.write_file, []

    def dies_on_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(run, "write_file", dies_on_second)
    with pytest.raises(KeyboardInterrupt):
        run.history(run.HistoryOptions(str(restart), str(tmp_path / "k"), **options), False)
    monkeypatch.setattr(run, "write_file", real)
    assert len(list((tmp_path / "k").glob("*.nc"))) == 1
    monkeypatch.chdir(tmp_path)  # the same restart by another path: the same run, continued
    summary = run.history(run.HistoryOptions("r.npz", str(tmp_path / "k"), **options), False)
    assert summary["written"] == 1 and summary["days_discarded"] == 0.0  # discarded before
    assert summary["days_recorded"] == 1.0
    for a, b in zip(
        sorted((tmp_path / "whole").glob("*.nc")),
        sorted((tmp_path / "k").glob("*.nc")),
        strict=True,
    ):
        x, y = xr.open_dataset(a), xr.open_dataset(b)
        np.testing.assert_array_equal(x["T"].values, y["T"].values)
        assert x["time"].values.tolist() == y["time"].values.tolist()
    with pytest.raises(ValueError, match="other settings"):
        run.history(
            run.HistoryOptions(str(restart), str(tmp_path / "k"), **(options | {"seed": 4})), False
        )


def test_the_benchmark_runs_end_to_end_at_a_tiny_size(tmp_path):
    from benchmarks.held_suarez.__main__ import main
    from benchmarks.held_suarez.training import STAGES

    work = tmp_path / "hs"
    over = [
        "data.n=8",
        "data.tile=4",
        "data.halo=2",
        "data.crop=8",
        "data.train_range=[0,-6]",
        "data.valid_range=[-6,0]",
        "data.valid_samples=4",
        "model.width=8",
        "model.levels=2",
    ]
    args = [
        "--workdir",
        str(work),
        "--truncation",
        "21",
        "--ne",
        "4",
        "--reference-ne",
        "2",
        "--train-days",
        "6",
        "--test-days",
        "4",
        "--discard-days",
        "1",
        "--starts",
        "1",
        "--lead-days",
        "2",
        "--climate-days",
        "2",
        "--cost-days",
        "0.25",
        "--train-scale",
        "0.002",
    ]
    for o in over:
        args += ["--train-override", o]
    assert main([*args, "--stage", "train"]) == 0  # a stage at a time: data and training
    assert not (work / "result.json").exists()
    first = json.loads((work / "stage_minutes.json").read_text())
    assert set(first) == {"data", "train"} and all(m > 0 for m in first.values())
    assert main(args) == 0  # the rest, found where the first invocation stopped
    r = json.loads((work / "result.json").read_text())
    assert set(r["stage_minutes"]) == {"data", "train", "forecasts", "climate", "cost"}
    assert r["stage_minutes"]["train"] < first["train"] + 0.05  # found done, not re-trained
    assert r["wall_minutes"] == pytest.approx(sum(r["stage_minutes"].values()))
    assert r["wall_minutes"] > r["wall_minutes_this_invocation"]
    free = r["forecasts"]["models"]["free"]
    assert set(free) == {f"{v}[{k}]" for v in "UVT" for k in range(4)} | {"PS"}
    assert len(free["PS"]["rmse"]) == 9 and np.isfinite(free["PS"]["acc"]).all()
    t21 = r["forecasts"]["models"]["t21"]["U[0]"]["rmse"]
    assert t21[0] < 0.5 and np.isfinite(t21).all()  # the T21 run starts from the T21 truth
    assert r["climate"]["bounded"] and r["climate"]["steps_run"] == 8
    assert r["found_done"] == [n for n, _, _ in STAGES]  # the first invocation made them
    assert np.isfinite(r["climate"]["ke_spectrum_last"]["rollout"][1:]).all()
    cost = r["cost"]
    assert set(cost) == {
        "emulator",
        "emulator_fp32",
        "emulator_whole_faces",
        "emulator_with_start_up",
        "dycore_T21",
    }
    assert all(0 < c["seconds_per_day"] < 1e4 for c in cost.values())
    assert cost["emulator"]["precision"] in ("bf16", "fp32")
    # once started it is cheaper than with its start-up (checkpoint, halo operator, stores)
    assert (
        cost["emulator_fp32"]["seconds_per_day"] < cost["emulator_with_start_up"]["seconds_per_day"]
    )
    store = xr.open_zarr(work / "data/test.zarr")
    assert "dinosaur" in store.attrs["history"] or store.attrs["source_files"]


def test_the_report_says_what_it_found_done_and_where_the_guard_stopped():
    """Generated sentences, not fixed ones: the stages an earlier invocation made, and the
    guard's message whole up to its pointer to the kept steps."""
    from benchmarks.held_suarez import report

    assert "made by this invocation" in report._found({"found_done": []})
    assert report._found({"found_done": ["s1_warm", "forecasts"]}).endswith("s1_warm, forecasts")
    assert "does not say" in report._found({})
    msg = (
        "the state left physics at step 416 (0002-01-31 00:00:00): PS's largest departure "
        "8269.2 is outside [0, 10 x 818.8] (the guard section); /w/c.zarr keeps the steps"
    )
    assert report._stop(msg) == msg.split("; ")[0] and "c.zarr" not in report._stop(msg)
