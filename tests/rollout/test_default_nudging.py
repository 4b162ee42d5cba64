# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The default nudging works on every store the package ingests: the checkpoint's winds and
temperature, every level, whatever the store calls them; a checkpoint with none is refused
before anything is written."""

from pathlib import Path

import pytest

from screamcast.cli import rollout as cli
from screamcast.rollout.nudging.default_variables import (
    NoDefaultNudgingError,
    default_nudged,
    summary,
)
from tests.rollout.test_levels import FORMAT2, stores  # noqa: F401  (the EAM-layout stores)
from tests.rollout.test_run_nudged import args, open_out

HS = Path(__file__).resolve().parents[2] / "benchmarks/held_suarez"


def levels(var: str, n: int = 4) -> list[str]:
    return [f"{var}[{k}]" for k in range(n)]


@pytest.mark.parametrize(
    "prognostic, nudged",
    [  # EAMxx (horiz_winds split into u, v), EAM and Held-Suarez, the demo
        (
            levels("u") + levels("v") + levels("T_mid") + ["ps"] + levels("qv"),
            levels("u") + levels("v") + levels("T_mid"),
        ),
        (
            ["PS"] + levels("T") + levels("U") + levels("V") + levels("Q"),
            levels("T") + levels("U") + levels("V"),
        ),
        (["u", "v", "temperature", "vorticity"], ["u", "v", "temperature"]),
    ],
)
def test_the_default_is_the_winds_and_temperature_by_their_store_names(prognostic, nudged):
    assert default_nudged(prognostic) == nudged


def test_a_checkpoint_without_winds_or_temperature_is_refused_naming_its_channels():
    with pytest.raises(NoDefaultNudgingError) as err:
        default_nudged(["ps", "qv[0]", "qv[1]"])
    said = str(err.value)
    assert "{nudging.variables}" in said and "(ps, qv[0], qv[1])" in said
    assert "T_mid" in said and "U" in said  # the names it looked for


def test_the_summary_writes_consecutive_levels_as_ranges():
    assert summary(levels("U") + ["PS", "T[0]", "T[2]"]) == "U[0..3], PS, T[0], T[2]"


def test_the_held_suarez_emulator_nudges_its_u_v_t_layers_by_default(tmp_path, capsys):
    """The shipped emulator's store names them U[0].., V[0].., T[0]..: the rollout at its
    defaults nudges all twelve (it had matched nothing and failed in xarray)."""
    state, ref, out = HS / "initial_state.zarr", tmp_path / "ref.zarr", tmp_path / "hs.zarr"
    held_state(state, ref, times=2)
    argv = args(HS / "emulator.pth", state, out, "--reference", str(ref), steps=1)
    assert cli.main(argv) == 0
    expected = levels("U") + levels("V") + levels("T")
    assert open_out(out).attrs["nudge_vars"] == ",".join(expected)
    said = capsys.readouterr().err
    assert f"nudging: U[0..3], V[0..3], T[0..3] toward {ref} (tau 6 h, relaxation)" in said


def held_state(state: Path, path: Path, times: int) -> None:
    """A reference on the model's grid: the initial state held for ``times`` 6-hourly times."""
    import datetime

    import xarray as xr

    from screamcast.data.calendar import DECODER

    ds = xr.open_zarr(state, consolidated=False, decode_times=DECODER).load()
    step = datetime.timedelta(hours=6)
    held = [ds.assign_coords(time=ds["time"].values + k * step) for k in range(times)]
    xr.concat(held, "time", data_vars="minimal").to_zarr(path, consolidated=False)


def test_an_eam_layout_checkpoint_nudges_its_winds_and_t_layers_by_default(stores, tmp_path):  # noqa: F811
    """EAM's names on layers: T[0]..T[3], U[0].., V[0].. in the checkpoint's order, not PS."""
    out = tmp_path / "eam.zarr"
    ref = str(stores["layers"])
    assert cli.main(args(FORMAT2, stores["layers"], out, "--reference", ref, steps=1)) == 0
    assert open_out(out).attrs["nudge_vars"] == ",".join(levels("T") + levels("U") + levels("V"))


def test_no_default_is_refused_before_anything_is_written(stores, tmp_path, capsys):  # noqa: F811
    """Nudging asked for, and nothing by a known name: exit 2 naming the flag and the
    checkpoint's channels; no output."""
    from screamcast.train.loop import train
    from tests.train.test_loop import config, on_ne4pg2

    ranges = ["data.train_range=[0,-4]", "data.valid_range=[-4,0]", f"run_dir={tmp_path}/run"]
    overrides = on_ne4pg2(stores["layers"], "[PS]", "[PRECT]", *ranges, "steps=1")
    ckpt = train(config(*overrides, "keep_every=0")) / "latest.pth"
    out = tmp_path / "ps.zarr"
    ref = str(stores["layers"])
    assert cli.main(args(ckpt, stores["layers"], out, "--reference", ref, steps=1)) == 2
    said = capsys.readouterr().err
    assert "--nudge-vars: none of the checkpoint's prognostic channels (PS)" in said
    assert not out.exists()
