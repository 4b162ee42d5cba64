# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Lat-lon nudging references are checked for coverage, units and angle units (issue 20).

Each was reproduced as a silent wrong result: a regional reference nudged the whole globe
toward its edge values (u error 15.4 against 0.44 m/s at +4 h), radians were read as degrees
(18.1 m/s), a degC reference pulled a K model 132 K off.
"""

import numpy as np
import pytest
import xarray as xr

from .test_run_nudged import args, cli, open_out


def latlon(tiny_latlon_reference, **changes):
    ds = xr.open_zarr(tiny_latlon_reference, chunks=None).load()
    for value in changes.values():
        ds = value(ds)
    return ds


def test_a_regional_reference_nudges_only_inside_its_domain(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, tmp_path, capsys
):
    region = latlon(tiny_latlon_reference, crop=lambda d: d.sel(lat=slice(0, 40), lon=slice(0, 60)))
    region.to_zarr(tmp_path / "region.zarr")
    nudge = ["--reference", str(tmp_path / "region.zarr"), "--nudge-vars", "u,v"]
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "n.zarr", *nudge, steps=1)) == 0
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "f.zarr", steps=1)) == 0
    nudged, free = open_out(tmp_path / "n.zarr"), open_out(tmp_path / "f.zarr")
    changed = nudged.u.values[1] != free.u.values[1]  # (6, n, n)
    lon = np.mod(nudged.lon.values + 180, 360) - 180
    far = (nudged.lat.values < -12) | (nudged.lat.values > 52) | (lon < -20) | (lon > 80)
    assert changed.any() and not changed[far].any()  # was: every cell nudged
    coverage = nudged.attrs["nudge_coverage"]
    # points 7.5..37.5 N, 7.5..52.5 E every 15 deg, each covering up to 11 deg around it:
    # about -3.6..48.6 N x -3.6..63.6 E, 0.075 of the sphere (measured 0.0743)
    assert 0.06 < coverage < 0.09, coverage
    refuse = [*nudge, "--partial-reference", "refuse"]
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "r.zarr", *refuse)) == 2
    assert "a global reference is required" in capsys.readouterr().err


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d.assign_coords(
                lat=("lat", np.radians(d.lat.values)), lon=("lon", np.radians(d.lon.values))
            ),
            "look like radians",
        ),
        (
            lambda d: d.assign_coords(lat=d.lat.assign_attrs(units="radians")),
            "coordinate 'lat' is in radians",
        ),
        (
            lambda d: d.assign(temperature=(d.temperature - 273.15).assign_attrs(units="degC")),
            "variable 'temperature' is in 'degC', the model's in 'K'",
        ),
    ],
)
def test_references_in_other_units_are_refused(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, tmp_path, capsys, change, message
):
    bad = latlon(tiny_latlon_reference, change=change)
    bad.to_zarr(tmp_path / "bad.zarr")
    nudge = ["--reference", str(tmp_path / "bad.zarr"), "--nudge-vars", "u,temperature"]
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "o.zarr", *nudge)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o.zarr").exists()


def test_unit_spellings_that_mean_the_same_pass(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, tmp_path
):
    same = latlon(tiny_latlon_reference, change=lambda d: d.assign(u=d.u.assign_attrs(units="m/s")))
    same.to_zarr(tmp_path / "same.zarr")
    nudge = ["--reference", str(tmp_path / "same.zarr"), "--nudge-vars", "u"]
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "o.zarr", *nudge, steps=1)) == 0


def test_longitude_convention_does_not_change_the_nudging(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, tmp_path
):
    east = latlon(tiny_latlon_reference)  # 0..360
    west = east.assign_coords(lon=((east.lon + 180) % 360) - 180).sortby("lon")  # -180..180
    outs = []
    for name, ref in (("east", east), ("west", west)):
        ref.to_zarr(tmp_path / f"{name}.zarr")
        nudge = ["--reference", str(tmp_path / f"{name}.zarr"), "--nudge-vars", "u,v"]
        out = tmp_path / f"o_{name}.zarr"
        assert cli.main(args(tiny_checkpoint, tiny_store, out, *nudge, steps=2)) == 0
        outs.append(open_out(out))
    for v in ("u", "v"):
        np.testing.assert_array_equal(outs[0][v].values, outs[1][v].values, err_msg=v)
