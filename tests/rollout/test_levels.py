# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A checkpoint's channels are levels, not indices: the levels it was trained on are recorded
(format 3) and every store it meets (initial condition, reference, truth, climatology) must
hold them; a rollout on a subset of levels writes a store every reader opens."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.checkpoint_format import load_for_inference
from screamcast.evaluation.evaluate import evaluate
from screamcast.ingest import IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history
from tests.rollout.test_run_nudged import args, cli

FORMAT2 = Path(__file__).resolve().parents[1] / "data/checkpoints/format2_eam_layers4_width4.pth"


def ingested(files, path, **kw) -> Path:
    ingest(IngestOptions([str(f) for f in files], str(path), workers=0, progress=False, **kw))
    return path


def trained(store, run_dir, *extra) -> Path:
    from screamcast.train.loop import train
    from tests.train.test_loop import config

    run = train(config(*overrides(store, run_dir), "steps=2", "keep_every=0", *extra))
    return run / "latest.pth"


def overrides(store, run_dir) -> list[str]:
    from tests.train.test_loop import on_ne4pg2

    ranges = ["data.train_range=[0,-4]", "data.valid_range=[-4,0]", f"run_dir={run_dir}"]
    return on_ne4pg2(store, "[T,PS]", "[PRECT]", *ranges)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("levels")
    files = write_history(tmp / "hist", "eam", files=3)
    return {
        "native": ingested(files, tmp / "native.zarr"),  # 8 levels
        "layers": ingested(files, tmp / "layers.zarr", layers="4"),
        "some": ingested(files, tmp / "some.zarr", levels=[0, 3, 7]),
        "tmp": tmp,
    }


def test_a_checkpoint_records_its_levels_and_refuses_other_ones(stores, tmp_path, capsys):
    ckpt = trained(stores["layers"], tmp_path / "run")
    levels = load_for_inference(ckpt).description.levels
    layer = xr.open_zarr(stores["layers"], chunks=None)["layer"]
    assert levels["T[1]"] == {"dim": "layer", "value": float(layer.values[1]), "bounds": [2, 4]}
    assert "PS" not in levels
    # the same channel names exist in the native store (8 levels): another level each
    out = tmp_path / "o.zarr"
    assert cli.main(args(ckpt, stores["native"], out, steps=1)) == 2
    err = capsys.readouterr().err
    assert "initial condition" in err and "'T[0]' is at lev = " in err
    assert "but checkpoint" in err and "layer = 13" in err and "interfaces 0-2" in err
    assert not out.exists()
    assert cli.main(args(ckpt, stores["layers"], out, steps=1)) == 0


def test_a_level_subset_is_checked_by_value(stores, tmp_path, capsys):
    """Trained on levels 0 and 2 of a store holding levels 0, 3, 7 (channel T[2] is level 7):
    the full store's T[2] is level 2, refused; the subset store rolls out and its output,
    whose T has 2 levels beside PS, opens and scores."""
    ckpt = trained(stores["some"], tmp_path / "run", "+data.levels={T:[0,2]}")
    lev = xr.open_zarr(stores["native"], chunks=None)["lev"].values
    assert load_for_inference(ckpt).description.levels["T[2]"]["value"] == pytest.approx(lev[7])
    assert cli.main(args(ckpt, stores["native"], tmp_path / "x.zarr", steps=1)) == 2
    assert f"'T[2]' is at lev = {lev[2]:g}" in capsys.readouterr().err
    out = tmp_path / "o.zarr"
    assert cli.main(args(ckpt, stores["some"], out, steps=2)) == 0
    ds = xr.open_zarr(out, chunks=None)
    assert ds["T"].dims[1] == "lev" and ds.sizes["lev"] == 2
    np.testing.assert_array_equal(ds["lev"].values, lev[[0, 7]])
    table = evaluate(str(out), str(stores["some"]), tmp_path / "rep", figures=False)
    assert set(table) == {"T[0]", "T[1]", "PS", "PRECT"}


def test_the_writer_gives_each_level_set_its_own_dim(tmp_path):
    """Two variables on different subsets of one store dim (what a model trained with
    data.levels on one variable writes): one dim each, and the store opens."""
    from screamcast.grid import PhysicsGrid
    from screamcast.rollout.writer import RolloutWriter

    grid = PhysicsGrid(2, 2)
    lev = ("lev", np.array([100.0, 500.0, 900.0]), {"units": "hPa"})
    times = np.array(["2020-01-01T00", "2020-01-01T06"], dtype="datetime64[ns]")
    w = RolloutWriter(
        tmp_path / "o.zarr",
        ["T[0]", "T[2]", "u[0]", "u[1]", "u[2]"],
        {},
        grid,
        {},
        times=times,
        levels={"T": lev, "u": lev},
    )
    w.create()
    ds = xr.open_zarr(tmp_path / "o.zarr", chunks=None, decode_times=False)
    assert ds["T"].dims[1] == "lev" and ds["u"].dims[1] == "lev_u"
    np.testing.assert_array_equal(ds["lev"].values, [100.0, 900.0])
    np.testing.assert_array_equal(ds["lev_u"].values, [100.0, 500.0, 900.0])


def test_a_format2_checkpoint_migrates_with_unknown_levels(stores, tmp_path):
    assert load_for_inference(FORMAT2).description.levels is None
    out = tmp_path / "o.zarr"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cli.main(args(FORMAT2, stores["layers"], out, steps=1)) == 0
    assert any("before level values were recorded" in str(w.message) for w in seen)


def _truth_variant(src: Path, dst: Path, change) -> Path:
    ds = xr.open_zarr(src, chunks=None)
    change(ds.load()).to_zarr(dst)
    return dst


def test_evaluate_checks_the_truth_as_the_rollout_checks_its_inputs(stores, tmp_path):
    from screamcast.data.stacked import unstack
    from screamcast.data.store import StoreError

    ckpt = trained(stores["layers"], tmp_path / "run")
    out = tmp_path / "o.zarr"
    assert cli.main(args(ckpt, stores["layers"], out, steps=2)) == 0
    truth = unstack(xr.open_zarr(stores["layers"], chunks=None)).load()
    truth = truth.drop_vars([v for v in truth.data_vars if v.startswith("fields")])
    (tmp_path / "t").mkdir()
    layers_shifted = truth.assign_coords(layer=truth["layer"] * 1.1)
    layers_shifted.to_zarr(tmp_path / "t/levels.zarr")
    with pytest.raises(StoreError, match=r"truth .*levels.zarr: 'T\[0\]' is at layer = "):
        evaluate(str(out), str(tmp_path / "t/levels.zarr"), tmp_path / "r1", figures=False)
    from screamcast.grid import PhysicsGrid

    pg1 = PhysicsGrid(8, 1)  # the same face size (8), other cells
    dims = ("face", "y", "x")
    other = truth.assign_coords(lat=(dims, pg1.lat), lon=(dims, pg1.lon), area=(dims, pg1.area))
    other.assign_attrs(grid="ne8pg1").to_zarr(tmp_path / "t/grid.zarr")
    with pytest.raises(StoreError, match="is on grid ne8pg1, the model's data on ne4pg2"):
        evaluate(str(out), str(tmp_path / "t/grid.zarr"), tmp_path / "r2", figures=False)
    import zarr

    truth.assign(PS=truth["PS"].assign_attrs(units="hPa")).to_zarr(tmp_path / "t/units.zarr")
    zarr.open_group(out, mode="r+")["PS"].attrs["units"] = "Pa"  # the output in Pa
    zarr.consolidate_metadata(str(out))  # after a hand edit (docs/rollout.md)
    with pytest.raises(StoreError, match="variable 'PS' is in 'hPa', the model's in 'Pa'"):
        evaluate(str(out), str(tmp_path / "t/units.zarr"), tmp_path / "r3", figures=False)


def test_evaluate_scores_the_complete_steps_of_a_partial_output(stores, tmp_path):
    import zarr

    ckpt = trained(stores["layers"], tmp_path / "run")
    out = tmp_path / "o.zarr"
    assert cli.main(args(ckpt, stores["layers"], out, steps=4)) == 0
    whole = evaluate(str(out), str(stores["layers"]), tmp_path / "whole", figures=False)
    zarr.open_group(out, mode="r+").attrs["complete_steps"] = 3  # killed after 2 steps
    with pytest.warns(UserWarning, match="Partial output: 3 of its 5 times were written"):
        part = evaluate(str(out), str(stores["layers"]), tmp_path / "part", figures=False)
    assert len(part["PS"]["rmse"]) == 3 and np.isfinite(part["PS"]["rmse"]).all()
    assert part["PS"]["rmse"] == whole["PS"]["rmse"][:3]
    assert "Partial output" in (tmp_path / "part/report.md").read_text()
    # persistence, computed here from the truth alone: the initial truth against each later one
    from screamcast.data.stacked import unstack

    truth = unstack(xr.open_zarr(stores["layers"], chunks=None))
    ps, w = truth["PS"].values[:5].astype(np.float64), truth["area"].values
    want = [np.sqrt((w * (ps[0] - ps[k]) ** 2).sum() / w.sum()) for k in range(5)]
    np.testing.assert_allclose(whole["PS"]["persistence_rmse"], want, rtol=1e-5)
    assert want[2] > 0


def test_one_step_skill_runs_on_a_store_of_3d_variables(stores, tmp_path, capsys):
    """screamcast-skill builds the network from the checkpoint's channels (it
    raised KeyError on the configured names 'T' before), and --help prints its use."""
    from screamcast.cli import skill

    run_dir = tmp_path / "run"
    trained(stores["layers"], run_dir)
    assert skill.main(overrides(stores["layers"], run_dir)) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("T[", "PS"))]
    assert [r[0] for r in rows] == ["T[0]", "T[1]", "T[2]", "T[3]", "PS"]
    assert all(float(r[1]) > 0 and float(r[2]) > 0 for r in rows)
    assert skill.main(["--help"]) == 0 and "one-step skill" in capsys.readouterr().out
