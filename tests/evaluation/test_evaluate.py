# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Skill scored step by step while the rollout runs equals the scores of the finished output."""

import json

import numpy as np
import pytest
import xarray as xr

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.metrics import area_weighted_rmse
from screamcast.evaluation.rmse import RmseBias
from screamcast.evaluation.rollout_scores import truth_aggregators
from screamcast.evaluation.scores import Scores
from screamcast.grid import PhysicsGrid
from tests.rollout.test_run_nudged import PROG, args, cli, open_out


def test_streaming_skill_equals_the_finished_outputs(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    out = tmp_path / "r.zarr"
    nudged = ["--reference", str(tiny_reference), "--halo-adjoint", "--tile", "8"]
    assert cli.main(args(tiny_checkpoint, tiny_store, out, *nudged, steps=6)) == 0
    streamed = json.loads((tmp_path / "r_metrics.json").read_text())
    output, truth = open_out(out), xr.open_zarr(tiny_store, chunks=None)
    variables = [*PROG, "precip"]
    times = output["time"].values
    grid = PhysicsGrid.for_face_size(16)
    area = grid.area
    source = TruthSource(truth, variables, times)
    offline = Scores(truth_aggregators(source, area, grid, 8), variables, times)  # tile 8
    offline.record_output(output, range(len(times)))
    # nudged: the misfit to the reference streams beside the scores (u, v, temperature)
    misfit = {v: streamed[v].pop("reference_rmse") for v in ("u", "v", "temperature")}
    units = {v: streamed[v].pop("units") for v in variables}  # the file's, not a score
    assert units["u"] == "m s-1" and units["temperature"] == "K"
    assert all(np.isfinite(m).all() for m in misfit.values())
    assert offline.summary() == streamed  # bit for bit, the seam and imprint scores too
    assert output.attrs["tile"] == 8 and streamed["u"]["tile_imprint"][-1] > 0
    # the time-mean bias map, accumulated step by step, is the mean of the whole arrays'
    pred = output.u.values[1:].astype(np.float64)
    true = truth.u.sel(time=times[1:]).values.astype(np.float64)
    np.testing.assert_allclose(
        offline.find(RmseBias).mean_bias[0], (pred - true).mean(0), rtol=1e-12, atol=1e-12
    )
    # and the scores are what the whole arrays give (the previous, all-in-memory computation)
    whole = area_weighted_rmse(output.u.values, truth.u.sel(time=times).values, area)
    np.testing.assert_array_equal(whole, streamed["u"]["rmse"])
    assert streamed["u"]["rmse"][0] == 0.0 and streamed["u"]["rmse"][-1] > 0


def test_a_resumed_rollout_scores_the_steps_it_did_not_run(tiny_checkpoint, tiny_store, tmp_path):
    from tests.rollout.test_run_nudged import kill_after_steps, run_script, start_script

    whole, cut = tmp_path / "whole.zarr", tmp_path / "cut.zarr"
    running = start_script(args(tiny_checkpoint, tiny_store, whole, steps=12))  # meanwhile:
    kill_after_steps(args(tiny_checkpoint, tiny_store, cut, steps=12), cut, 4)
    assert running.wait(timeout=120) == 0
    assert run_script(args(tiny_checkpoint, tiny_store, cut, "--resume", steps=12))
    a = json.loads((tmp_path / "whole_metrics.json").read_text())
    b = json.loads((tmp_path / "cut_metrics.json").read_text())
    assert a == b


def test_no_scores_without_the_truth(tiny_store):
    truth = xr.open_zarr(tiny_store, chunks=None)
    late = truth["time"].values[-1] + np.arange(3) * np.timedelta64(3, "h")
    assert TruthSource.covering(truth, ["u"], late) is None
    assert TruthSource.covering(truth, ["q"], truth["time"].values[:2]) is None


def test_the_evaluate_cli_scores_an_output_and_writes_a_report(
    tiny_checkpoint, tiny_store, small_store, tmp_path, capsys
):
    from screamcast.cli import evaluate

    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, "--halo-adjoint", steps=4)) == 0
    report = tmp_path / "rep"
    assert evaluate.main([str(out), "--truth", str(tiny_store), "--report", str(report)]) == 0
    streamed = json.loads((tmp_path / "r_metrics.json").read_text())
    assert json.loads((report / "skill_metrics.json").read_text()) == streamed
    text = (report / "report.md").read_text()
    assert "| u |" in text and "`halo_adjoint`: 1" in text and "![drift](drift.png)" in text
    assert (report / "drift.png").stat().st_size > 0 and (report / "skill_last_step.png").exists()
    assert (report / "spectra.png").stat().st_size > 0 and "Spectra to l = 19;" in text
    assert (
        report / "bias_maps.png"
    ).stat().st_size > 0 and "Time-mean bias over steps 1..4" in text
    assert "| u | " in text.split("tile seams")[1] and (report / "tile_imprint.png").exists()
    assert (report / "leads.png").stat().st_size > 0
    # with a climatology (here the truth's time mean): anomaly correlation per step
    clim = tmp_path / "clim.zarr"
    xr.open_zarr(tiny_store, chunks=None).mean("time", keep_attrs=True).to_zarr(clim)
    rep2 = tmp_path / "rep2"
    cmd = [str(out), "--truth", str(tiny_store), "--report", str(rep2), "--climatology", str(clim)]
    assert evaluate.main([*cmd, "--no-figures"]) == 0  # the scores alone: no PNG drawn
    table = json.loads((rep2 / "skill_metrics.json").read_text())
    assert table["u"]["acc"][0] == pytest.approx(1.0) and table["u"]["persistence_acc"][0] == 1
    assert 0.5 < table["u"]["acc"][-1] <= 1 and table["u"]["climatology_rmse"][-1] > 0
    text = (rep2 / "report.md").read_text()
    assert "| ACC | persistence ACC | climatology RMSE |" in text and "| u | " in text
    assert "![" not in text and not list(rep2.glob("*.png"))
    # a truth of another grid, or one that does not cover the output's times: one clear line
    assert evaluate.main([str(out), "--truth", str(small_store), "--report", str(report)]) == 2
    assert "face size is 8, but the configured grid has n=16" in capsys.readouterr().err
    short = tmp_path / "short.zarr"
    xr.open_zarr(tiny_store, chunks=None).isel(time=slice(0, 2)).to_zarr(short)
    assert evaluate.main([str(out), "--truth", str(short), "--report", str(report)]) == 2
    assert "lacks 3 of the output's 5 times" in capsys.readouterr().err


def test_evaluate_against_a_lat_lon_truth(tiny_checkpoint, tiny_store, tmp_path):
    """Scored at the truth's lat-lon cells, against the output's mean over each cell."""
    from screamcast.data.store import open_store
    from screamcast.evaluation import evaluate
    from screamcast.grid.to_latlon import CubeToLatLonMean

    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, steps=3)) == 0
    o = open_store(out)
    grid = PhysicsGrid.from_name(o.attrs["grid"])
    lat, lon = np.arange(-84.0, 90.0, 12.0), np.arange(-174.0, 180.0, 12.0)
    to_points = CubeToLatLonMean(grid, lat, lon)
    names = [v for v in o.data_vars if o[v].dims[:1] == ("time",)]  # PROG and precip

    def latlon_store(src: xr.Dataset, offset: float, path, rows=slice(None)) -> str:
        data = {v: (("time", "lat", "lon"), to_points(src[v].values) + offset) for v in names}
        ds = xr.Dataset(data, coords={"time": src["time"].values, "lat": lat, "lon": lon})
        ds["lat"].attrs["units"], ds["lon"].attrs["units"] = "degrees_north", "degrees_east"
        ds.isel(lat=slice(None, None, -1)).isel(lat=rows).to_zarr(path)  # north first
        return str(path)

    # the output itself, 0.5 higher: RMSE 0.5 and bias -0.5 at every step, exactly
    shifted = latlon_store(o, 0.5, tmp_path / "shifted.zarr")
    evaluate.evaluate(str(out), shifted, tmp_path / "rep")
    table = json.loads((tmp_path / "rep" / "skill_metrics.json").read_text())
    for v in names:
        np.testing.assert_allclose(table[v]["rmse"], 0.5, rtol=1e-9)
        np.testing.assert_allclose(table[v]["bias"], -0.5, rtol=1e-9)
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "15 x 30 lat-lon grid (100.0% of the globe)" in text and "Spectra to l = " in text
    assert "No seam or tile-imprint scores" in text
    assert (tmp_path / "rep" / "bias_maps.png").exists()
    # the real truth on 12-degree cells: errors of the cell means, a little below the cube's
    truth = open_store(tiny_store, variables=names).sel(time=o["time"].values)
    coarse = latlon_store(truth, 0.0, tmp_path / "coarse.zarr")
    latlon_table = evaluate.evaluate(str(out), coarse, tmp_path / "rep2", figures=False)
    cube_table = evaluate.evaluate(str(out), str(tiny_store), tmp_path / "rep3", figures=False)
    for v in ("u", "v", "tracer"):
        ratio = np.array(latlon_table[v]["rmse"][1:]) / np.array(cube_table[v]["rmse"][1:])
        assert 0.3 < ratio.min() and ratio.max() <= 1.02, (v, ratio)
        assert latlon_table[v]["rmse"][0] == 0.0 and latlon_table[v]["persistence_rmse"][-1] > 0
    # a regional truth (the tropics): scored there, no spectra
    tropics = latlon_store(truth, 0.0, tmp_path / "tropics.zarr", rows=slice(5, 10))
    evaluate.evaluate(str(out), tropics, tmp_path / "rep4")
    text = (tmp_path / "rep4" / "report.md").read_text()
    assert "5 x 30 lat-lon grid (" in text and "No spectra: the lat-lon truth covers" in text


def test_the_rollout_streams_the_anomaly_correlation_and_the_reference_misfit(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys
):
    from screamcast.cli import evaluate

    clim = tmp_path / "clim.zarr"
    xr.open_zarr(tiny_store, chunks=None).mean("time", keep_attrs=True).to_zarr(clim)
    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, "--climatology", str(clim))) == 0
    streamed = json.loads((tmp_path / "r_metrics.json").read_text())
    assert streamed["u"]["acc"][0] == pytest.approx(1.0) and 0.5 < streamed["u"]["acc"][-1] < 1
    cmd = [str(out), "--truth", str(tiny_store), "--report", str(tmp_path / "rep")]
    assert evaluate.main([*cmd, "--climatology", str(clim)]) == 0
    offline = json.loads((tmp_path / "rep" / "skill_metrics.json").read_text())
    assert offline == streamed  # RMSE, bias, persistence, ACC, seams: the same numbers
    header = (tmp_path / "r_metrics.csv").read_text().splitlines()[0]
    assert header.startswith("step,time,variable,rmse,bias,persistence_rmse,") and ",acc," in header
    # the climatology needs the truth: refused before anything is written when it is missing
    short = tmp_path / "short.zarr"
    xr.open_zarr(tiny_store, chunks=None).isel(time=slice(0, 3)).to_zarr(short)
    gone = tmp_path / "never.zarr"
    assert cli.main(args(tiny_checkpoint, short, gone, "--climatology", str(clim))) == 2
    assert "--climatology scores the rollout against the truth" in capsys.readouterr().err
    assert not gone.exists()
    # nudged past the end of the truth: scored against the reference, at its scales
    nudged = tmp_path / "n.zarr"
    flags = ["--reference", str(tiny_reference), "--nudge-vars", "u,v"]
    assert cli.main(args(tiny_checkpoint, short, nudged, *flags)) == 0
    assert "RMSE against the nudging reference" in capsys.readouterr().out
    table = json.loads((tmp_path / "n_metrics.json").read_text())
    misfit = np.array(table["u"]["reference_rmse"])
    assert "rmse" not in table["u"] and "reference_rmse" not in table["tracer"]  # no truth
    assert misfit.shape == (5,) and np.isfinite(misfit).all() and 0 < misfit[-1] < 5
    # the reference is the truth block-averaged: at the start the misfit is the float32 rounding
    assert misfit[0] < 1e-4


def test_the_report_says_when_the_reference_blocks_divide_the_tile(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """Nudged toward 4 x 4 blocks with an 8-cell tile, the tile imprint holds the reference's
    lattice too: the output records the block and the report says so; a free run does not."""
    from screamcast.cli import evaluate

    texts = {}
    for name, flags in {"nudged": ["--reference", str(tiny_reference)], "free": []}.items():
        out = tmp_path / f"{name}.zarr"
        tiled = ("--halo-adjoint", "--tile", "8")  # seams inside a face (not the automatic 16)
        assert cli.main(args(tiny_checkpoint, tiny_store, out, *tiled, *flags)) == 0
        report = tmp_path / f"rep_{name}"
        cmd = [str(out), "--truth", str(tiny_store), "--report", str(report), "--no-figures"]
        assert evaluate.main(cmd) == 0
        texts[name] = (report / "report.md").read_text()
    assert xr.open_zarr(tmp_path / "nudged.zarr").attrs["nudge_block_cells"] == 4
    note = "reference's blocks (4 x 4 cells) divide the 8-cell tile"
    assert note in texts["nudged"] and "reference's blocks" not in texts["free"]
    assert texts["nudged"].index(note) < texts["nudged"].index("## Provenance")


def test_a_truth_with_nan_is_said_and_a_nan_climatology_refused(
    tiny_checkpoint, tiny_store, holed_stores, tmp_path, capsys
):
    """NaN in the truth at scored times gave NaN scores without a word (issue 42): the rollout
    and screamcast-evaluate name the variable and its steps, report.md too; a climatology
    with a NaN, which would make every ACC NaN, is refused; so is a truth with no times."""
    from screamcast.cli import evaluate

    nan, empty = holed_stores
    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, nan, out, steps=6)) == 0
    note = f"note: u's scores are NaN at 2 steps (from [1, 5]): the truth in {nan} is not finite"
    said = capsys.readouterr().out
    assert note in said and "v's scores" not in said
    table = json.loads((tmp_path / "r_metrics.json").read_text())
    assert np.isnan(table["u"]["rmse"][1]) and np.isfinite(table["u"]["rmse"][2])
    report = tmp_path / "rep"
    assert (
        evaluate.main([str(out), "--truth", str(nan), "--report", str(report), "--no-figures"]) == 0
    )
    assert note in capsys.readouterr().out and note in (report / "report.md").read_text()
    cmd = [str(out), "--truth", str(tiny_store), "--report", str(report), "--no-figures"]
    assert evaluate.main([*cmd, "--climatology", str(nan)]) == 2
    err = capsys.readouterr().err
    assert f"climatology {nan}: variable 'u' has 1536 non-finite values in its time mean" in err
    assert evaluate.main([str(out), "--truth", str(empty), "--report", str(report)]) == 2
    assert "has no 'time' values" in capsys.readouterr().err


def test_a_rollout_past_the_truth_says_it_is_not_scored(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """20 steps of 3 h from the first of 17 times: written, and the summary says why there
    are no scores (it printed only "wrote ...")."""
    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, steps=20)) == 0
    said = capsys.readouterr().out
    assert f"wrote {out} (not scored: {tiny_store} does not hold every output time" in said
    assert open_out(out).sizes["time"] == 21 and not (tmp_path / "r_metrics.json").exists()
