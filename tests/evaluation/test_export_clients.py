# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Exports read by the real clients: UXarray with the package's SCRIP file and with
TempestRemap's own ne30pg2 file, and NCO's ncremap regridding with a map it makes from the
SCRIP file (its own conservative algorithm, no ESMF)."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from screamcast.cli.export import main
from screamcast.cli.grid import main as grid_main
from screamcast.grid.cubed_sphere import latlon_to_xyz
from screamcast.grid.physics import PhysicsGrid
from tests.evaluation.export_inputs import ps, ps_cell_mean, write_output

REAL_NE30 = Path(__file__).resolve().parents[1] / "data" / "grids" / "ne30pg2_scrip.nc"
NCREMAP = shutil.which("ncremap")


def exported(tmp_path: Path, grid: PhysicsGrid, *extra: str) -> tuple[Path, Path]:
    """``(SCRIP file, the export's one netCDF file)`` of a 3-step rollout output on ``grid``."""
    write_output(tmp_path / "rollout.zarr", grid, steps=3)
    assert main([str(tmp_path / "rollout.zarr"), "--output", str(tmp_path / "h"), *extra]) == 0
    scrip = tmp_path / f"{grid.name}_scrip.nc"
    grid_main(["scrip", "--grid", grid.name, "--output", str(scrip)])
    (data,) = tmp_path.glob("h.*.nc")
    return scrip, data


def test_uxarray_puts_every_column_at_its_face(tmp_path):
    ux = pytest.importorskip("uxarray", reason="uxarray is in the dev extra")
    scrip, data = exported(tmp_path, PhysicsGrid(8, 2))
    uxds = ux.open_dataset(scrip, data)
    assert uxds.uxgrid.n_face == 6 * 16**2 and uxds["ps"].dims == ("time", "n_face")
    centres = latlon_to_xyz(uxds.uxgrid.face_lat.values, uxds.uxgrid.face_lon.values)
    for k in range(3):
        np.testing.assert_allclose(uxds["ps"].values[k], ps(centres, k), rtol=1e-7)
    # UXarray's own areas, from the corners it read: the grid's cells, in the same order
    np.testing.assert_allclose(uxds.uxgrid.face_areas.values, uxds["area"].values, rtol=1e-3)


def test_uxarray_pairs_an_ne30pg2_export_with_tempestremap_s_file(tmp_path):
    ux = pytest.importorskip("uxarray", reason="uxarray is in the dev extra")
    write_output(tmp_path / "rollout.zarr", PhysicsGrid(30, 2), steps=1)
    assert main([str(tmp_path / "rollout.zarr"), "--output", str(tmp_path / "h")]) == 0
    (data,) = tmp_path.glob("h.*.nc")
    uxds = ux.open_dataset(REAL_NE30, data)
    assert uxds.uxgrid.n_face == 21600
    centres = latlon_to_xyz(uxds.uxgrid.face_lat.values, uxds.uxgrid.face_lon.values)
    np.testing.assert_allclose(uxds["ps"].values[0], ps(centres, 0), rtol=1e-7)


@pytest.mark.skipif(NCREMAP is None, reason="NCO's ncremap is not installed (apt-get install nco)")
def test_ncremap_regrids_an_export_with_a_map_from_the_scrip_file(tmp_path):
    scrip, data = exported(tmp_path, PhysicsGrid(8, 2), "--variables", "ps")
    destination = "latlon=18,36#lat_typ=uni#lon_typ=grn_wst"  # edges every 10 degrees
    run = [NCREMAP, "-a", "nco", "-s", str(scrip), "-G", destination, "-m", str(tmp_path / "m.nc")]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    regrid = [NCREMAP, "-m", "m.nc", "-i", data.name, "-o", "ll.nc"]
    done = subprocess.run(regrid, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    mapping = xr.open_dataset(tmp_path / "m.nc")
    # NCO measured each cell from the SCRIP corners itself: the grid's areas, every cell covered
    np.testing.assert_allclose(mapping.area_a.values, xr.open_dataset(data).area.values, rtol=1e-12)
    np.testing.assert_allclose(mapping.frac_a.values, 1.0, atol=1e-12)
    ll = xr.open_dataset(tmp_path / "ll.nc")
    exact = ps_cell_mean(ll.lat_bnds.values, ll.lon_bnds.values, 0)  # ps spans ~2500 Pa
    err = np.abs(ll.ps.values[0] - exact)
    assert err.max() < 90 and err.mean() < 9  # measured 80.6, 7.7: ~5.6-degree source cells
    # the package's own conservative export to the same cells: NCO's lat-lon cells have
    # great-circle edges (their areas differ by up to 0.5%), ours follow the parallels
    source = str(tmp_path / "rollout.zarr")
    assert main([source, "--output", str(tmp_path / "own"), "--latlon", "18x36"]) == 0
    (own,) = tmp_path.glob("own.*.nc")
    ours = xr.open_dataset(own)
    np.testing.assert_array_equal(ours.lat_bnds.values, ll.lat_bnds.values)
    np.testing.assert_array_equal(ours.lon_bnds.values, ll.lon_bnds.values)
    ours_err = np.abs(ours.ps.values[0] - exact)
    print(
        f"ours: {ours_err.max():.3g} {ours_err.mean():.3g}",
        np.abs(ours.ps.values[0] - ll.ps.values[0]).max(),
    )
    assert ours_err.max() < 100 and ours_err.mean() < 10
    assert np.abs(ours.ps.values[0] - ll.ps.values[0]).max() < 30
