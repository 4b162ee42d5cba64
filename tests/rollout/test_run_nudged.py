# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""scripts/ace/run_screamcast_nudged.py end to end on the tiny store."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ace" / "run_screamcast_nudged.py"
spec = importlib.util.spec_from_file_location("run_nudged", SCRIPT)
cli = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cli)
from screamcast.cli import demo  # noqa: E402

PROG = ["u", "v", "vorticity", "tracer", "temperature"]


FP32_TILE8 = ("--precision", "fp32", "--tile", "8")  # the tiny checkpoint's, not automatic


def args(ckpt, store, out, *extra, steps=4):
    return [
        "--checkpoint",
        str(ckpt),
        "--data",
        str(store),
        "--output",
        str(out),
        "--steps",
        str(steps),
        "--no-progress",
        *extra,
    ]


def open_out(path):
    return xr.open_zarr(path, consolidated=False, chunks=None)


def test_cli_subprocess_with_every_flag(tiny_checkpoint, tiny_store, tiny_reference, tmp_path):
    out = tmp_path / "r.zarr"
    flags = [
        "--halo-adjoint",
        "--halo-adjoint-cross-face",
        "--reference",
        str(tiny_reference),
        "--nudge-vars",
        "u,v",
    ]
    cmd = [sys.executable, str(SCRIPT), *args(tiny_checkpoint, tiny_store, out, *flags)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "area-weighted RMSE" in run.stdout
    ds = open_out(out)
    assert ds.sizes["time"] == 5 and ds.u.dims == ("time", "face", "y", "x")
    a = ds.attrs
    assert (a["halo_adjoint"], a["halo_adjoint_cross_face"], a["nudging"]) == (1, 1, 1)
    assert a["nudge_vars"] == "u,v" and a["nudge_tau_hours"] == 6.0
    assert a["nudge_projection"] == "block mean over 4x4, increment bicubic in each face"
    assert len(a["checkpoint_sha256"]) == 64
    assert a["screamcast_version"] and "--halo-adjoint-cross-face" in a["command"]
    assert float(ds.precip.min()) >= 0 and ds.u.attrs["units"] == "m s-1"
    assert (tmp_path / "r_metrics.csv").exists() and (tmp_path / "r_last_step.png").exists()


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], (0, 0, "none")),
        (["--halo-adjoint"], (1, 0, "cosine")),  # the default window
        (["--halo-adjoint", "--halo-adjoint-window", "uniform"], (1, 0, "uniform")),
    ],
)
def test_reassembly_flags_are_recorded(tiny_checkpoint, tiny_store, tmp_path, flags, expected):
    out = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, *flags, steps=2)) == 0
    a = open_out(out).attrs
    got = (a["halo_adjoint"], a["halo_adjoint_cross_face"], a["halo_adjoint_window"])
    assert got == expected and a["nudging"] == 0


def test_a_window_without_the_halo_adjoint_is_an_error(tiny_checkpoint, tiny_store, tmp_path):
    extra = ["--halo-adjoint-window", "linear"]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "r.zarr", *extra))
    assert exit_info.value.code == 2 and not (tmp_path / "r.zarr").exists()


def test_cross_face_alone_is_an_error(tiny_checkpoint, tiny_store, tmp_path):
    cmd = [
        sys.executable,
        str(SCRIPT),
        *args(tiny_checkpoint, tiny_store, tmp_path / "x.zarr", "--halo-adjoint-cross-face"),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "--halo-adjoint-cross-face requires --halo-adjoint" in run.stderr
    assert not (tmp_path / "x.zarr").exists()


def test_bad_inputs_fail_before_any_step(
    tiny_checkpoint, tiny_store, tiny_reference, small_store, tmp_path, capsys
):
    corrupt = tmp_path / "corrupt.pth"
    corrupt.write_bytes(tiny_checkpoint.read_bytes()[:5000])
    existing = tmp_path / "existing.zarr"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    ref = ["--reference", str(tiny_reference)]
    bad_latlon = tmp_path / "bad_latlon.zarr"
    xr.Dataset(
        {"u": (("time", "lat", "lon"), np.zeros((2, 3, 4), np.float32))},
        coords={
            "time": np.array(["2020-01-01T00", "2020-01-01T06"], "datetime64[ns]"),
            "lat": [-100.0, 0.0, 60.0],
            "lon": [0.0, 90.0, 180.0, 270.0],
        },
    ).to_zarr(bad_latlon, consolidated=False)
    cases = [
        (args(tmp_path / "none.pth", tiny_store, tmp_path / "o1.zarr"), "none.pth does not exist"),
        (
            args(tiny_checkpoint, tmp_path / "none.zarr", tmp_path / "o0.zarr"),
            r"--data .*none.zarr does not exist",  # before the imports (first_word)
        ),
        (args(corrupt, tiny_store, tmp_path / "o2.zarr"), "checkpoint is not usable"),
        (args(tiny_checkpoint, small_store, tmp_path / "o3.zarr"), "face size is 8, but .* n=16"),
        (
            args(tiny_checkpoint, tiny_store, tmp_path / "o4.zarr", "--start", "2031-01-01T00:00"),
            "--start 2031-01-01T00:00 is not a time of",
        ),
        (
            args(tiny_checkpoint, tiny_store, tmp_path / "o5.zarr", *ref, steps=40),
            "covers .* but the rollout needs",
        ),
        (args(tiny_checkpoint, tiny_store, existing), "existing.zarr exists and is not a"),
        (
            args(tiny_checkpoint, tiny_store, tmp_path / "o6.zarr", *ref, "--nudge-vars", "u,q"),
            "\\['q'\\] not prognostic variables",
        ),
        (
            args(tiny_checkpoint, tiny_store, tmp_path / "o7.zarr", *ref, "--nudge-tau-hours", "0"),
            "must be positive",
        ),
        (
            args(
                tiny_checkpoint,
                tiny_store,
                tmp_path / "o8.zarr",
                "--reference",
                str(bad_latlon),
                "--nudge-vars",
                "u",
            ),
            "bad_latlon.zarr: coordinate 'lat' must be finite degrees",
        ),
    ]
    import re

    for argv, message in cases:
        assert cli.main(argv) == 2, message
        err = capsys.readouterr().err
        assert re.search(message, err), (message, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad_latlon.zarr",
        "corrupt.pth",
        "existing.zarr",
    ]
    assert (existing / "keep.txt").read_text() == "mine"


def test_resume_after_sigkill_equals_an_uninterrupted_rollout(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    common = ["--reference", str(tiny_reference), "--halo-adjoint"]
    whole = start_script(
        args(tiny_checkpoint, tiny_store, tmp_path / "whole.zarr", *common, steps=16)
    )
    cut = tmp_path / "cut.zarr"
    kill_after_steps(args(tiny_checkpoint, tiny_store, cut, *common, steps=16), cut, 3)
    assert whole.wait(timeout=120) == 0
    assert run_script(args(tiny_checkpoint, tiny_store, cut, *common, "--resume", steps=16))
    a, b = open_out(tmp_path / "whole.zarr"), open_out(cut)
    assert b.sizes["time"] == 17 and "resumed after time index" in b.attrs["history"]
    for v in PROG + ["precip"]:
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v)


def start_script(argv: list[str]) -> subprocess.Popen:
    """The CLI in a fresh process, as users run it: bit-for-bit comparisons between runs need
    every run in the same conditions (an in-process run inherits what earlier tests did to the
    process; a full-suite run once differed from a subprocess in the last bit)."""
    return subprocess.Popen([sys.executable, str(SCRIPT), *argv])


def run_script(argv: list[str]) -> bool:
    return start_script(argv).wait(timeout=120) == 0


def kill_after_steps(argv: list[str], watched: Path, steps: int) -> None:
    """Run the CLI in a subprocess and SIGKILL it once ``watched`` holds ``steps`` steps."""
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if zarr.open_group(watched, mode="r").attrs.get("complete_steps", 0) >= steps:
                os.kill(proc.pid, signal.SIGKILL)
                break
        except Exception:
            pass
        time.sleep(0.01)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the rollout finished before it could be killed"


def _mean_rmse(path, variables):
    import json

    metrics = json.loads(Path(str(path).removesuffix(".zarr") + "_metrics.json").read_text())
    return {
        v: (np.mean(metrics[v]["rmse"][1:]), np.mean(metrics[v]["persistence_rmse"][1:]))
        for v in variables
    }


@pytest.fixture(scope="module")
def free16(tiny_checkpoint, tiny_store, tmp_path_factory):
    """A free (not nudged) 16-step rollout to compare the nudged ones with, in fp32 on the
    training tile (the automatic settings would differ by machine)."""
    path = tmp_path_factory.mktemp("free") / "free.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, path, *FP32_TILE8, steps=16)) == 0
    return path


def test_bf16_rollout_on_cpu_is_the_gpu_path_and_stays_close_to_fp32(
    tiny_checkpoint, tiny_store, free16, tmp_path
):
    """``--precision bf16`` runs the network under autocast on CPU as on CUDA: the numbers
    change (autocast is on) but stay within bf16's rounding of the fp32 run after 16 steps."""
    out = tmp_path / "bf16.zarr"
    bf16_tile8 = ("--precision", "bf16", "--tile", "8")
    assert cli.main(args(tiny_checkpoint, tiny_store, out, *bf16_tile8, steps=16)) == 0
    bf16, fp32 = open_out(out), open_out(free16)
    assert (bf16.attrs["precision"], fp32.attrs["precision"]) == ("bf16", "fp32")
    for v in PROG:
        a, b = bf16[v].values[-1], fp32[v].values[-1]
        assert np.isfinite(a).all() and not np.array_equal(a, b), v
        change = np.sqrt(np.mean((b - fp32[v].values[0]) ** 2))  # what 16 steps changed
        assert np.sqrt(np.mean((a - b) ** 2)) < 0.02 * change, v  # measured ~0.002


def test_channels_last_is_the_default_and_matches_nchw(
    tiny_checkpoint, tiny_store, free16, tmp_path
):
    """The default NHWC convolutions (``free16``) against ``--no-channels-last``: another
    summation order in the convolutions (the arrays differ), the same rollout to rounding."""
    out = tmp_path / "nchw.zarr"
    nchw_flags = ("--no-channels-last", *FP32_TILE8)
    assert cli.main(args(tiny_checkpoint, tiny_store, out, *nchw_flags, steps=16)) == 0
    nchw, nhwc = open_out(out), open_out(free16)
    assert (nchw.attrs["memory_format"], nhwc.attrs["memory_format"]) == (
        "contiguous",
        "channels_last",
    )
    differs = False
    for v in PROG:
        a, b = nchw[v].values[-1], nhwc[v].values[-1]
        differs |= not np.array_equal(a, b)
        change = np.sqrt(np.mean((b - nhwc[v].values[0]) ** 2))
        assert np.sqrt(np.mean((a - b) ** 2)) < 1e-5 * change, v  # measured 1e-7 to 1.2e-6
    assert differs


def test_nudged_beats_free_and_persistence(
    tiny_checkpoint, tiny_store, tiny_reference, free16, tmp_path
):
    nudge = ["--reference", str(tiny_reference), "--nudge-vars", "u,v,temperature"]
    assert (
        cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "nudged.zarr", *nudge, steps=16)) == 0
    )
    free = _mean_rmse(free16, ["u", "v", "temperature"])
    nudged = _mean_rmse(tmp_path / "nudged.zarr", ["u", "v", "temperature"])
    print(
        {
            v: f"nudged {nudged[v][0]:.3g} free {free[v][0]:.3g} persistence {free[v][1]:.3g}"
            for v in free
        }
    )
    for v in free:
        assert nudged[v][0] < free[v][0] and nudged[v][0] < free[v][1], v


def test_latlon_reference_nudging_beats_free(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, free16, tmp_path
):
    nudge = ["--reference", str(tiny_latlon_reference), "--nudge-vars", "u,v,temperature"]
    out = tmp_path / "latlon.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, *nudge, steps=16)) == 0
    assert "from the 12x24 lat-lon grid" in open_out(out).attrs["nudge_projection"]
    free = _mean_rmse(free16, ["u", "v", "temperature"])
    nudged = _mean_rmse(out, ["u", "v", "temperature"])
    print({v: f"lat-lon nudged {nudged[v][0]:.3g} free {free[v][0]:.3g}" for v in free})
    for v in free:
        assert nudged[v][0] < free[v][0], v


def test_strong_grid_point_nudging_follows_the_reference(tiny_checkpoint, tiny_store, tmp_path):
    every = ["--reference", str(tiny_store), "--nudge-vars", ",".join(PROG)]
    assert (
        cli.main(
            args(
                tiny_checkpoint,
                tiny_store,
                tmp_path / "dt.zarr",
                *every,
                "--nudge-tau-hours",
                "3",
                steps=8,
            )
        )
        == 0
    )
    assert cli.main(args(tiny_checkpoint, tiny_store, tmp_path / "free.zarr", steps=8)) == 0
    assert (
        cli.main(
            args(
                tiny_checkpoint,
                tiny_store,
                tmp_path / "hard.zarr",
                *every,
                "--nudge-tau-hours",
                "1e-6",
                steps=8,
            )
        )
        == 0
    )
    free, tau_dt = _mean_rmse(tmp_path / "free.zarr", PROG), _mean_rmse(tmp_path / "dt.zarr", PROG)
    for v in PROG:
        assert tau_dt[v][0] < 0.6 * free[v][0], (v, tau_dt[v][0], free[v][0])
    hard, truth = open_out(tmp_path / "hard.zarr"), xr.open_zarr(tiny_store, chunks=None)
    np.testing.assert_allclose(hard.u.values, truth.u.values[:9], rtol=1e-5, atol=1e-4)


def test_production_config_sets_defaults_and_checks_the_checkpoint(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys
):
    config = ROOT / "configs" / "production" / "multistep_nudged.yaml"
    parsed, _ = cli.parse(["--config", str(config)])
    assert parsed.stepper.halo_adjoint and parsed.nudging.variables == []  # the default
    assert parsed.stepper.batch_size == 32 and not parsed.stepper.halo_adjoint_cross_face
    argv = args(tiny_checkpoint, tiny_store, tmp_path / "o.zarr", "--config", str(config))
    assert cli.main([*argv, "--reference", str(tiny_reference)]) == 2  # a nudged config
    assert "has model.width=16, but" in capsys.readouterr().err
    assert not (tmp_path / "o.zarr").exists()


def test_a_demo_store_from_before_the_wave_tracer_is_refused(tmp_path):
    """A demo store written before the tracer rode the wave's wind (no ``tracer`` attr) is not
    used with the new docs' numbers nor rebuilt over the user's files: refused, naming both
    folders; a current store passes."""
    store = zarr.open_group(tmp_path / "demo_data" / "demo.zarr", mode="w")
    store.attrs["grid"] = "ne24pg2"
    best = tmp_path / "runs" / "demo" / "best.pth"
    with pytest.raises(ValueError, match="solid-body rotation.*remove .*demo_data and .*runs/demo"):
        demo._refuse_stale_demo(tmp_path / "demo_data" / "demo.zarr", best)
    from screamcast.grid import PhysicsGrid
    from screamcast.sources.synthetic import FlowParameters, _store_attrs

    store.attrs.update(_store_attrs(PhysicsGrid.for_face_size(48), 1, FlowParameters()))
    demo._refuse_stale_demo(tmp_path / "demo_data" / "demo.zarr", best)
    assert "lifetime 6 h" in store.attrs["tracer"]


def test_a_demo_reference_from_before_ne8pg2_is_refused_not_rebuilt(tmp_path):
    """The demo's reference moved from ne6pg2 (4 x 4 blocks, dividing the 16-cell tile) to
    ne8pg2: an old one is refused, naming it, and left in place; the demo's own passes."""
    from screamcast.sources.synthetic import write_store

    ref = tmp_path / "demo_data" / "reference.zarr"
    write_store(ref, 4, days=0.25, step_hours=6, coarsen=2)  # ne2pg2, not the demo's
    with pytest.raises(ValueError, match=r"reference.zarr is on 'ne2pg2'.*ne8pg2.*remove"):
        demo._refuse_stale_reference(ref)
    assert ref.exists()
    from screamcast.sources.synthetic import DEMO_REFERENCE_COARSEN, DEMO_REFERENCE_GRID

    zarr.open_group(ref, mode="r+").attrs["grid"] = DEMO_REFERENCE_GRID
    demo._refuse_stale_reference(ref)

    tile = OmegaConf.load(ROOT / "configs" / "data" / "demo.yaml").tile
    assert tile % DEMO_REFERENCE_COARSEN != 0  # the blocks do not divide the demo's tile
    assert f"ne{24 // DEMO_REFERENCE_COARSEN}pg2" == DEMO_REFERENCE_GRID
