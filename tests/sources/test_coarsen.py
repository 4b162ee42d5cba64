# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Coarsening a store into a nudging reference: area-weighted block means, levels and attrs
kept, every k-th time, and nothing overwritten."""

import numpy as np
import pytest

from screamcast.data.store import StoreError, open_store
from screamcast.ingest import IngestOptions, ingest
from screamcast.sources.coarsen import coarsen_store
from screamcast.sources.synthetic_e3sm import write_history


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("coarsen")
    files = write_history(tmp / "h", "eam", files=2)  # ne4pg2, 8 times, 8 levels
    out = tmp / "s.zarr"
    ingest(IngestOptions([str(f) for f in files], str(out), layers="4", workers=0, progress=False))
    return out


def test_block_means_on_the_coarser_grid(store, tmp_path):
    coarse = coarsen_store(str(store), tmp_path / "c.zarr", ne=2, every=2)
    c = open_store(coarse, None, ["T", "PS"], (), None)
    f = open_store(store, None, ["T", "PS"], (), None)
    assert c.attrs["grid"] == "ne2pg2" and c.sizes["time"] == 4 and c.sizes["y"] == 4
    np.testing.assert_array_equal(c["time"].values, f["time"].values[::2])
    np.testing.assert_array_equal(c["layer"].values, f["layer"].values)
    assert c["layer"].attrs["interfaces"] == f["layer"].attrs["interfaces"]
    a = f["area"].values  # an independent block mean: face 3, block (1, 0), time index 4
    want = (f["T[2]"].values[4, 3, 2:4, 0:2] * a[3, 2:4, 0:2]).sum() / a[3, 2:4, 0:2].sum()
    assert c["T[2]"].values[2, 3, 1, 0] == pytest.approx(want, rel=1e-6)
    total = (f["PS"].values[6] * a).sum()  # area-weighted means conserve the global integral
    ca = c["area"].values
    assert (c["PS"].values[3] * ca).sum() == pytest.approx(total * ca.sum() / a.sum(), rel=1e-3)


def test_bad_requests_are_refused(store, tmp_path):
    with pytest.raises(StoreError, match="the coarse grid's ne must divide 4, got 3"):
        coarsen_store(str(store), tmp_path / "x.zarr", ne=3)
    (tmp_path / "exists.zarr").mkdir()
    with pytest.raises(StoreError, match="exists: choose another path"):
        coarsen_store(str(store), tmp_path / "exists.zarr", ne=2)


@pytest.mark.parametrize("block", [1, 3])
def test_several_blocks_equal_one_block(store, tmp_path, block):
    """Every block after the first starts at its own time (issue 42: a wrong offset there went
    unseen with one block): blocks of 1 and 3 coarse times, every=2, equal one block."""
    one = open_store(coarsen_store(str(store), tmp_path / "one.zarr", ne=2, every=2), None, [])
    many = coarsen_store(str(store), tmp_path / "many.zarr", ne=2, every=2, block=block)
    many = open_store(many, None, [])
    np.testing.assert_array_equal(many["time"].values, one["time"].values)
    assert many.sizes["time"] == 4
    for v in ("T", "PS", "U", "PRECT"):  # (time, [layer,] face, y, x)
        np.testing.assert_array_equal(many[v].values, one[v].values)


def test_non_finite_input_is_recorded_and_an_empty_store_refused(holed_stores, tmp_path):
    """A NaN fine cell makes its coarse cell NaN: the coarse store records which variables and
    times, as the ingestion does (the CLI prints it); a store with no times is refused."""
    from screamcast.cli.dycore import main

    nan, empty = holed_stores
    out = coarsen_store(str(nan), tmp_path / "c.zarr", ne=2, every=1)
    c = open_store(out, None, ["u"], (), None)
    recorded = c.attrs["non_finite"]
    assert list(recorded) == ["u"] and recorded["u"]["values"] == 6 * 4 * 4 + 1
    assert recorded["u"]["times"] == [str(c["time"].values[k]) for k in (1, 5)]
    assert np.isnan(c["u"].values[1]).all() and np.isnan(c["u"].values[5]).sum() == 1
    assert np.isfinite(c["v"].values).all()
    with pytest.raises(StoreError, match="holds no times: nothing to coarsen"):
        coarsen_store(str(empty), tmp_path / "e.zarr", ne=2)
    assert not (tmp_path / "e.zarr").exists()
    assert main(["coarsen", str(empty), "--ne", "2", "--output", str(tmp_path / "e.zarr")]) == 2


def test_the_cli_names_the_non_finite_input(holed_stores, tmp_path, capsys):
    from screamcast.cli.dycore import main

    argv = ["coarsen", str(holed_stores[0]), "--ne", "4", "--output", str(tmp_path / "c")]
    assert main(argv) == 0
    said = capsys.readouterr().out  # ne4pg2: 6 x 8 x 8 cells at time 1, one at time 5
    assert "note: u is not finite in 385 coarse cells at 2 times (first 2020-01-01 03:00" in said
