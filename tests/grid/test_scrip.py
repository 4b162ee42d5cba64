# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The package's SCRIP files against TempestRemap's own (E3SM's grid files), and
``screamcast-grid scrip``'s refusals."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.cli.grid import main
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.scrip import write_scrip

GRIDS = Path(__file__).resolve().parents[1] / "data" / "grids"
FILES = [("ne30pg2_scrip.nc", "ne30pg2"), ("outCSne8_scrip.nc", "ne8pg1")]


@pytest.mark.parametrize(("name", "grid"), FILES, ids=[f for f, _ in FILES])
def test_the_scrip_file_equals_tempestremap_s(name, grid, tmp_path):
    assert main(["scrip", "--grid", grid, "--output", str(tmp_path / "g.nc")]) in (0, None)
    ours = xr.open_dataset(tmp_path / "g.nc", engine="h5netcdf")
    real = xr.open_dataset(GRIDS / name, engine="h5netcdf")
    assert set(ours.variables) == set(real.variables)
    for var in real.variables:
        assert ours[var].dims == real[var].dims and ours[var].dtype == real[var].dtype, var
        assert ours[var].attrs == real[var].attrs, var  # units: degrees, radians^2
        # every value, the corners' order and the longitudes' branch (0 or 360) included
        np.testing.assert_allclose(ours[var].values, real[var].values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.grid_area.values, real.grid_area.values, rtol=1e-12)
    assert ours.grid_area.values.sum() == pytest.approx(4 * np.pi, abs=1e-11)
    # counter-clockwise seen from outside: (b - a) x (c - b) points out of the sphere
    c = latlon_to_xyz(ours.grid_corner_lat.values, ours.grid_corner_lon.values)  # (ncol, 4, 3)
    normal = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 1])
    assert np.all(np.einsum("ij,ij->i", normal, c.mean(axis=1)) > 0)


def test_any_grid_is_in_ncol_order(tmp_path):
    """ne4pg3 has no file to compare with: its centres are the grid's, in column order."""
    grid = PhysicsGrid(4, 3)
    write_scrip(grid, tmp_path / "g.nc")
    ds = xr.open_dataset(tmp_path / "g.nc", engine="h5netcdf")
    assert ds.sizes["grid_size"] == 6 * 12**2 and ds.grid_dims.values.tolist() == [864]
    xyz = latlon_to_xyz(ds.grid_center_lat.values, ds.grid_center_lon.values)
    want = grid.xyz.reshape(-1, 3)[grid.column_index()]
    assert np.abs(xyz - want).max() < 1e-13


def test_a_bad_grid_or_an_existing_output_is_refused(tmp_path, capsys):
    out = tmp_path / "g.nc"
    with pytest.raises(SystemExit) as stop:
        main(["scrip", "--grid", "ne30", "--output", str(out)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "grid name 'ne30' is not an E3SM physics grid" in err
    assert not out.exists()
    out.write_bytes(b"keep me")
    with pytest.raises(SystemExit) as stop:
        main(["scrip", "--grid", "ne4pg2", "--output", str(out)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "already exists: pass --overwrite" in err
    assert out.read_bytes() == b"keep me"  # never overwritten silently
    with pytest.raises(FileExistsError, match="already exists"):
        write_scrip(PhysicsGrid(4, 2), out)
    main(["scrip", "--grid", "ne4pg2", "--output", str(out), "--overwrite"])
    assert xr.open_dataset(out, engine="h5netcdf").sizes["grid_size"] == 384
    assert [p.name for p in tmp_path.iterdir()] == ["g.nc"]  # no partial file left
