# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Units from EAMxx history files to the rollout's output and tables: written history ->
ingested store -> a checkpoint trained on it -> a rollout whose every variable carries the
store's ``units`` and ``long_name``, whose printed table and metrics files say them, and whose
evaluation's report.md and skill tables do too."""

import csv
import json

import pytest
import xarray as xr

from screamcast.data.store import open_store
from screamcast.evaluation.evaluate import evaluate
from screamcast.ingest import IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history
from tests.rollout.test_run_nudged import args, cli, open_out


@pytest.fixture(scope="module")
def rolled_out(tmp_path_factory):
    from screamcast.train.loop import train
    from tests.train.test_loop import config, on_ne4pg2

    tmp = tmp_path_factory.mktemp("units")
    files = write_history(tmp / "hist", "eamxx", files=3, levels=4)
    store = tmp / "s.zarr"
    ingest(IngestOptions([str(f) for f in files], str(store), workers=0, progress=False))
    ranges = ["data.train_range=[0,-4]", "data.valid_range=[-4,0]", f"run_dir={tmp / 'run'}"]
    overrides = on_ne4pg2(store, "[T_mid,u,ps]", "[]", *ranges, "steps=2", "keep_every=0")
    ckpt = train(config(*overrides)) / "latest.pth"
    out = tmp / "o.zarr"
    return store, ckpt, out


def test_an_ingested_eamxx_store_gives_its_units_to_the_rollout(rolled_out, capsys):
    store, ckpt, out = rolled_out
    assert open_store(store, None, ["T_mid"], n=8)["T_mid[0]"].attrs["units"] == "K"
    assert cli.main(args(ckpt, store, out, steps=3)) == 0
    printed = capsys.readouterr().out
    ds = open_out(out)
    fields = [v for v in ds.data_vars if ds[v].dims[:1] == ("time",)]
    assert sorted(fields) == ["T_mid", "ps", "u"]
    for v in fields:  # every written variable, the coordinates too
        assert ds[v].attrs.get("units") and ds[v].attrs.get("long_name"), v
        assert "level" not in ds[v].attrs and "level_dim" not in ds[v].attrs
    assert ds["T_mid"].attrs == {"units": "K", "long_name": "temperature at midpoints"}
    assert ds["u"].attrs["long_name"] == "zonal component of horizontal wind"
    assert all(ds[c].attrs.get("units") for c in ("lat", "lon", "area", "lev"))
    # the printed table: a channel's units are its variable's
    assert "T_mid[0] [K]" in printed and "u[3] [m/s]" in printed and "ps [Pa]" in printed
    base = str(out).removesuffix(".zarr")
    metrics = json.loads(open(f"{base}_metrics.json").read())
    assert metrics["T_mid[2]"]["units"] == "K" and metrics["ps"]["units"] == "Pa"
    with open(f"{base}_metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["units"] for r in rows if r["variable"] == "u[0]"} == {"m/s"}
    assert float(rows[0]["rmse"]) == pytest.approx(0.0, abs=1e-3)  # step 0 is the truth


def test_the_evaluation_tables_carry_units(rolled_out, tmp_path):
    store, ckpt, out = rolled_out
    if not out.exists():
        assert cli.main(args(ckpt, store, out, steps=3)) == 0
    evaluate(str(out), str(store), tmp_path / "rep", figures=False)
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "| variable | units | RMSE | persistence |" in text
    assert "| T_mid[1] | K | " in text and "| ps | Pa | " in text
    table = json.loads((tmp_path / "rep" / "skill_metrics.json").read_text())
    assert table["u[1]"]["units"] == "m/s" and len(table["u[1]"]["rmse"]) == 4
    header = (tmp_path / "rep" / "skill_metrics.csv").read_text().splitlines()[0]
    assert header.startswith("step,time,variable,rmse,") and header.endswith(",units")
    assert xr.open_zarr(out, chunks=None)["ps"].attrs["units"] == "Pa"
