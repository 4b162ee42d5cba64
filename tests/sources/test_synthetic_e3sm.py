# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The synthetic E3SM history files carry what E3SM's carry: ``units`` and ``long_name`` on
every variable, and values in physical ranges (specific humidity positive and below 0.03
kg/kg, precipitation a rate in m/s of liquid water)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.sources.synthetic_e3sm import write_history

ROOT = Path(__file__).resolve().parents[2]

UNITS = {
    "eam": {"T": "K", "U": "m/s", "V": "m/s", "Q": "kg/kg", "PS": "Pa", "PRECT": "m/s"},
    "eamxx": {"T_mid": "K", "horiz_winds": "m/s", "qv": "kg/kg", "ps": "Pa"},
}


@pytest.mark.parametrize("layout", ["eam", "eamxx"])
def test_every_history_variable_has_units_and_a_long_name(layout, tmp_path):
    (path,) = write_history(tmp_path, layout, files=1, times_per_file=2)
    ds = xr.open_dataset(path)
    for name in ds.data_vars:
        assert ds[name].attrs.get("units") and ds[name].attrs.get("long_name"), name
    assert {v: ds[v].attrs["units"] for v in UNITS[layout]} == UNITS[layout]
    assert ds["P0"].attrs["units"] == "Pa" and ds["hyai"].attrs["units"] == "1"


def test_history_values_are_in_physical_ranges(tmp_path):
    """Over 3 days: q between 3e-6 and 0.03 kg/kg, moister at the surface than aloft;
    precipitation non-negative and below 100 mm/day; T 150 to 330 K; PS about 1000 hPa."""
    files = write_history(tmp_path, "eam", files=3)
    ds = xr.open_mfdataset(
        [str(f) for f in files],
        combine="by_coords",
        data_vars="minimal",
        coords="minimal",
        compat="override",
    )
    q, prect = ds["Q"].values, ds["PRECT"].values
    assert q.min() >= 3e-6 * (1 - 1e-6) and 0.01 < q.max() < 0.03
    assert q[:, -1].mean() > 100 * q[:, 0].mean()  # lev is top to bottom
    assert prect.min() == 0.0 and 1e-8 < prect.max() < 0.1 / 86400
    assert 150 < ds["T"].values.min() and ds["T"].values.max() < 330
    assert 95e3 < ds["PS"].values.min() and ds["PS"].values.max() < 102e3
    xx = xr.open_dataset(write_history(tmp_path / "xx", "eamxx", files=1)[0])
    np.testing.assert_array_equal(xx["qv"].values[:, :, -1], ds["Q"].values[:4, -1])


def test_the_script_writes_files_with_units(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    sys.modules.pop("make_history_files", None)
    import make_history_files

    make_history_files.main([str(tmp_path), "--files", "1", "--ne", "4", "--levels", "4"])
    (path,) = tmp_path.glob("*.nc")
    ds = xr.open_dataset(path)
    assert ds["T_mid"].attrs == {"units": "K", "long_name": "temperature at midpoints"}
    assert 0 < ds["qv"].values.min() and ds["qv"].values.max() < 0.03
