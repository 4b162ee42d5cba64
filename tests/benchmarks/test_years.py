# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Years of data (issue 57): each year's cache folder is named by what makes it, and the years
become one training store whose segments keep every sample inside one run."""

import numpy as np
import pytest
import xarray as xr

from benchmarks.held_suarez import years
from screamcast.data.cube_samples import CubeSamples, segments_of
from screamcast.data.store import open_store
from screamcast.ingest import IngestOptions, ingest
from screamcast.sources.synthetic_e3sm import write_history


def test_a_years_folder_is_keyed_by_its_content(tmp_path):
    plan = years.YearPlan()
    assert [years.year_seed(y) for y in range(4)] == [1, 3, 4, 5]  # never the test's seed 2
    a, b = years.year_folder(plan, 1, tmp_path), years.year_folder(plan, 2, tmp_path)
    assert a != b and a.parent == tmp_path and a.name.startswith("year01-seed3-")
    longer = years.year_folder(years.YearPlan(days=730.0), 1, tmp_path)
    assert longer != a and years.year_folder(plan, 1, tmp_path) == a
    with pytest.raises(ValueError, match="year must be >= 0"):
        years.year_seed(-1)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    stores = []
    for seed in (1, 2):
        files = write_history(root / f"h{seed}", "eamxx", files=2, seed=seed)
        store = root / f"run{seed}.zarr"
        ingest(IngestOptions([str(f) for f in files], str(store), layers="2", workers=0,
                             progress=False, dtype="float32"))  # fmt: skip
        stores.append(store)
    return stores


def test_the_years_become_one_store_whose_samples_stay_in_one_run(two_runs, tmp_path):
    out = years.combine(two_runs, tmp_path / "years.zarr")
    ds, parts = open_store(str(out)), [open_store(str(s)) for s in two_runs]
    sizes = [p.sizes["time"] for p in parts]
    assert ds.sizes["time"] == sum(sizes) and segments_of(ds) == [(0, 8), (8, 16)]
    np.testing.assert_array_equal(ds["ps"].values[8:], parts[1]["ps"].values)
    step = np.diff(ds["time"].values)
    assert len(set(step)) == 1  # one 6-hourly axis
    stats = ds.attrs["normalisation"]
    both = np.concatenate([p["ps"].values for p in parts])
    area = np.broadcast_to(ds["area"].values, both.shape)
    assert stats["mean"]["ps"] == pytest.approx(np.average(both, weights=area), rel=1e-6)
    assert stats["std"]["ps"] == pytest.approx(
        np.sqrt(np.average((both - stats["mean"]["ps"]) ** 2, weights=area)), rel=1e-5
    )
    assert stats["min"]["ps"] == pytest.approx(float(both.min()))
    samples = CubeSamples(ds, ["ps"], [], (0, 16), 2, 200, seed=0)
    starts = {samples.start(i) for i in range(200)}
    assert starts == {*range(0, 6), *range(8, 14)}
    again = years.combine(two_runs, tmp_path / "years.zarr")  # made once
    assert again == out and xr.open_zarr(out, consolidated=False).attrs["years"]


def test_the_ledger_sums_each_stage_over_invocations_even_a_failed_one(tmp_path):
    from benchmarks.held_suarez.ledger import Ledger

    first = Ledger(tmp_path)
    with first.stage("data"):
        pass
    with pytest.raises(KeyboardInterrupt), first.stage("train"):
        raise KeyboardInterrupt  # a killed stage's minutes were spent
    again = Ledger(tmp_path)  # the next invocation reads them back
    assert set(again.minutes) == {"data", "train"}
    before = again.minutes["data"]
    with again.stage("data"):
        sum(range(200_000))
    assert again.minutes["data"] > before
    assert again.total() == pytest.approx(sum(Ledger(tmp_path).minutes.values()))


def test_each_years_minutes_are_read_where_recorded(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "minutes").write_text("41.50\n")
    assert years.minutes_of([tmp_path / "a" / "train.zarr", tmp_path / "b" / "train.zarr"]) == [
        41.5,
        None,
    ]


def test_the_global_overrides_reach_only_the_stages_through_the_global_step():
    """The climate's losses and free runs are refused on crops: ``--global-override`` goes to
    s5-s8 only, after each stage's own keys; ``--train-override`` to every stage."""
    from benchmarks.held_suarez.training import STAGES, stage_overrides

    got = {
        name: stage_overrides(extra, ["data.symmetry=true"], ["global_unroll.valid_free_days=30"])
        for name, _, extra in STAGES
    }
    with_free = [n for n, keys in got.items() if "global_unroll.valid_free_days=30" in keys]
    assert with_free == ["s5_global_four", "s6_global_eight", "s7_dissipated_eight",
                         "s8_dissipated_sixteen"]  # fmt: skip
    assert all(keys[0] == "data.symmetry=true" for keys in got.values())
    assert got["s5_global_four"][-1] == "global_unroll.valid_free_days=30"
