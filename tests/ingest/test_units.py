# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Units through the ingestion: every variable (and every channel of the stack) keeps its
file's ``units`` and ``long_name``; a finished store is consolidated, so plain ``xr.open_zarr``
opens it without a warning, its stack's ``channel`` axis labelled with names and units."""

import warnings

import pytest
import xarray as xr
import zarr

from screamcast.data.store import open_store
from screamcast.ingest import IngestOptions, ingest
from screamcast.ingest.store import output_attrs
from screamcast.sources.synthetic_e3sm import write_history


def run(files, output, **kw):
    ingest(IngestOptions([str(f) for f in files], str(output), workers=0, progress=False, **kw))
    return output


@pytest.fixture(scope="module")
def eamxx(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("units")
    files = write_history(tmp / "hist", "eamxx", files=2, levels=4)
    return {"files": files, "stacked": run(files, tmp / "s.zarr"), "tmp": tmp}


def strictly_opened(path) -> xr.Dataset:
    """``xr.open_zarr`` with every warning an error (consolidated metadata above all)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return xr.open_zarr(path)


def test_each_channel_of_an_ingested_stack_has_its_units(eamxx):
    ds = open_store(eamxx["stacked"], None, ["T_mid", "qv", "u", "v", "ps"], n=8)
    assert ds["T_mid[0]"].attrs["units"] == "K" and ds["T_mid[3]"].attrs["units"] == "K"
    assert ds["T_mid"].attrs == {"units": "K", "long_name": "temperature at midpoints"}
    assert ds["qv[2]"].attrs["units"] == "kg/kg" and ds["ps"].attrs["units"] == "Pa"
    assert ds["u[1]"].attrs["long_name"] == "zonal component of horizontal wind"
    assert ds["v"].attrs == {"units": "m/s", "long_name": "meridional component of horizontal wind"}


def test_an_ingested_stack_opens_in_plain_xarray_labelled(eamxx):
    ds = strictly_opened(eamxx["stacked"])
    names = [*(f"{v}[{k}]" for v in ("T_mid", "qv", "u", "v") for k in range(4)), "ps"]
    assert list(ds["channel"].values) == names
    assert list(ds["fields"].sel(channel="ps")["channel_units"].values.ravel()) == ["Pa"]
    units = dict(zip(ds["channel"].values, ds["channel_units"].values, strict=True))
    assert units["T_mid[3]"] == "K" and units["qv[0]"] == "kg/kg" and units["v[2]"] == "m/s"
    assert ds["fields"].dims == ("time", "channel", "face", "y", "x")
    # the consolidated document holds the finished attrs, not those of the store's creation
    assert ds.attrs["ingest_complete"] is True and "normalisation" in ds.attrs
    group = zarr.open_group(eamxx["stacked"], mode="r")
    assert group.metadata.consolidated_metadata is not None


def test_the_per_variable_layout_keeps_units_and_is_consolidated(eamxx):
    path = run(eamxx["files"], eamxx["tmp"] / "v.zarr", layout="variables")
    ds = strictly_opened(path)
    assert ds["T_mid"].attrs == {"units": "K", "long_name": "temperature at midpoints"}
    assert ds["u"].attrs["units"] == "m/s" and ds["ps"].attrs["long_name"] == "surface pressure"
    assert "channel" not in ds.coords  # no stack, no channel axis


def test_the_wind_components_say_which_they_are():
    winds = {"units": "m/s", "long_name": "horizontal wind"}
    assert output_attrs(winds, None) == winds
    assert output_attrs(winds, 0)["long_name"] == "zonal component of horizontal wind"
    assert output_attrs({}, 1) == {"long_name": "meridional component of horiz_winds"}
