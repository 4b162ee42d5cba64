# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Extension points: a new nudging method, metric and loss are each one new file (the toy
ones beside this test) plus one config entry, with nothing else in the package touched."""

import json

import numpy as np
import pytest
import xarray as xr

from screamcast.data.store import open_store
from screamcast.grid import PhysicsGrid
from tests.rollout.test_run_nudged import args, cli, open_out

METRIC = "tests.plugins.max_abs_error:max_abs_error"
CORRECTOR = "tests.plugins.global_mean_corrector:global_mean"
LOSS = "tests.plugins.area_weighted_l1:area_weighted_l1"


def test_a_new_metric_is_one_file_and_one_config_entry(tiny_checkpoint, tiny_store, tmp_path):
    out = tmp_path / "r.zarr"
    argv = args(tiny_checkpoint, tiny_store, out, f"scoring.metrics=[{METRIC}]", steps=3)
    assert cli.main(argv) == 0
    table = json.loads((tmp_path / "r_metrics.json").read_text())
    output, truth = open_out(out), xr.open_zarr(tiny_store, chunks=None)
    times = output["time"].values
    want = np.abs(output.u.values - truth.u.sel(time=times).values).reshape(4, -1).max(axis=1)
    np.testing.assert_allclose(table["u"]["max_abs_error"], want, rtol=1e-6)
    assert table["u"]["max_abs_error"][0] == 0.0 and table["u"]["max_abs_error"][-1] > 0
    header = (tmp_path / "r_metrics.csv").read_text().splitlines()[0]
    assert header.endswith(",max_abs_error,units")  # a column beside the built-in scores
    bad = args(tiny_checkpoint, tiny_store, tmp_path / "x.zarr", "--metrics", "nope", steps=1)
    assert cli.main(bad) == 2 and not (tmp_path / "x.zarr").exists()


def test_a_new_nudging_method_is_one_file_and_one_config_entry(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """The global-mean corrector moves each nudged field by one constant per step and brings
    its global mean toward the reference's, which a free run does not."""
    free, nudged = tmp_path / "free.zarr", tmp_path / "nudged.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, free, steps=6)) == 0
    plug = ["--reference", str(tiny_reference), "--nudge-vars", "u", "--nudge-tau-hours", "1"]
    argv = args(tiny_checkpoint, tiny_store, nudged, *plug, f"nudging.method={CORRECTOR}", steps=6)
    assert cli.main(argv) == 0
    a, b = open_out(free), open_out(nudged)
    assert b.attrs["nudge_method"] == CORRECTOR and b.attrs["nudge_vars"] == "u"
    shift = b.u.values[1] - a.u.values[1]  # the same first prediction, then one constant
    assert abs(float(shift.mean())) > 1e-4 and float(shift.std()) < 1e-5
    np.testing.assert_array_equal(a.v.values[1], b.v.values[1])  # not nudged: untouched
    ref = open_store(str(tiny_reference))  # stacked, as the demo's
    ref_w, w = PhysicsGrid.for_face_size(4).area, PhysicsGrid.for_face_size(16).area

    def gap(ds, k):  # |global mean of u - the reference's| at (even) step k: 3 h vs 6 h
        target = (ref.u.isel(time=k // 2).values * ref_w).sum() / ref_w.sum()
        return abs((ds.u.values[k] * w).sum() / w.sum() - target)

    assert gap(b, 6) < 0.5 * gap(a, 6)
    half = tmp_path / "half.zarr"  # its own setting, typed by its dataclass: half the shift
    argv_half = [*argv[:5], str(half), *argv[6:], "nudging.config.fraction=0.5"]
    assert cli.main(argv_half) == 0
    half_shift = open_out(half).u.values[1] - a.u.values[1]
    assert float(half_shift.mean()) == pytest.approx(0.5 * float(shift.mean()), rel=1e-3)
    misfit = json.loads((tmp_path / "nudged_metrics.json").read_text())["u"]["reference_rmse"]
    assert misfit[6] == pytest.approx(gap(b, 6), rel=1e-4)  # the corrector's own misfit
    with pytest.raises(SystemExit):  # a method nobody registered: refused before any step
        cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "x.zarr", *plug, "--nudge-method"))
    assert cli.main([*argv[:5], str(tmp_path / "y.zarr"), *argv[6:-1], "nudging.method=nope"]) == 2
    assert not (tmp_path / "y.zarr").exists()


def test_a_new_loss_is_one_file_and_one_config_entry(tiny_store, tmp_path):
    from screamcast.train.loop import train
    from tests.plugins import area_weighted_l1 as toy
    from tests.train.test_loop import config

    base = ["experiment=pytest", f"data.url={tiny_store}", "steps=2", "keep_every=0"]
    toy.CALLS.clear()
    run = train(config(*base, f"run_dir={tmp_path / 'l1'}", f"loss={LOSS}"))
    assert toy.CALLS  # the training and validation losses went through it
    mse = train(config(*base, f"run_dir={tmp_path / 'mse'}"))
    from tests.train.test_loop import rows

    l1_loss, mse_loss = (float(rows(r)[0]["train_loss"]) for r in (run, mse))
    assert abs(l1_loss - mse_loss) > 0.01  # the same first batch, another loss
    with pytest.raises(ValueError, match="loss 'nope' is not registered"):
        train(config(*base, f"run_dir={tmp_path / 'x'}", "loss=nope"))
