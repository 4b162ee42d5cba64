# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout never loses what the user had: inputs, finished outputs, a run in progress.

Each test here reproduces a data loss or silent wrong result found by hostile use (issue 20)
and fails on the code before the fix.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr
import zarr

from screamcast.rollout import output as out

from .test_run_nudged import args, cli, kill_after_steps, open_out


def snapshot(path):
    """Every file under ``path`` with its bytes: equal snapshots mean nothing was touched."""
    return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture
def finished(tiny_checkpoint, tiny_store, tmp_path):
    """A finished 2-step rollout output."""
    path = tmp_path / "done.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, path, steps=2)) == 0
    return path


def test_overwrite_never_deletes_an_input(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys
):
    """``--data ic.zarr --output ic.zarr --overwrite`` deleted the initial condition and wrote
    an all-NaN output with exit 0."""
    before = {p: snapshot(p) for p in (tiny_store, tiny_reference)}
    ref = ["--reference", str(tiny_reference)]
    cases = [
        (tiny_store, "is the initial condition"),
        (tiny_store / "u", "lies inside the initial condition"),
        (tiny_reference, "is the reference"),
        (tiny_checkpoint.parent, "contains the checkpoint"),
    ]
    for output, message in cases:
        argv = args(tiny_checkpoint, tiny_store, output, *ref, "--overwrite")
        assert cli.main(argv) == 2, message
        assert message in capsys.readouterr().err
    assert {p: snapshot(p) for p in (tiny_store, tiny_reference)} == before
    assert tiny_checkpoint.exists()


def test_overwrite_keeps_the_old_output_until_the_new_one_is_complete(
    tiny_checkpoint, tiny_store, finished, tmp_path, capsys
):
    before = snapshot(finished)
    # validated before anything is touched (was: deleted the output, then failed)
    assert (
        cli.main(args(tiny_checkpoint, tiny_store, finished, "--overwrite", "--batch-size", "0"))
        == 2
    )
    assert "--batch-size must be >= 1" in capsys.readouterr().err
    assert snapshot(finished) == before
    # a run that fails mid-way (here: a reference that turns non-finite at its second time)
    bad_ref = tmp_path / "bad_ref.zarr"
    ref = xr.open_zarr(tiny_store, chunks=None).isel(time=slice(0, 6)).load()
    ref["u"][2, 1, 3, 4] = np.nan
    ref.to_zarr(bad_ref)
    nudged = ["--reference", str(bad_ref), "--nudge-vars", "u", "--overwrite"]
    assert cli.main(args(tiny_checkpoint, tiny_store, finished, *nudged, steps=4)) == 2
    err = capsys.readouterr().err
    assert "variable 'u' has 1 non-finite values, the first at (face, y, x) = (1, 3, 4)" in err
    assert snapshot(finished) == before
    assert sorted(p.name for p in finished.parent.iterdir() if p.name.startswith(".")) == []
    # a successful replacement replaces
    assert cli.main(args(tiny_checkpoint, tiny_store, finished, "--overwrite", steps=3)) == 0
    assert open_out(finished).sizes["time"] == 4


def test_a_killed_replacement_leaves_the_old_output(tiny_checkpoint, tiny_store, finished):
    before = snapshot(finished)
    staging = out.staging_path(finished)
    kill_after_steps(
        args(tiny_checkpoint, tiny_store, finished, "--overwrite", steps=40), staging, 3
    )
    assert snapshot(finished) == before and staging.exists()
    # the lock went with the process; the next --overwrite clears the leftovers and replaces
    assert cli.main(args(tiny_checkpoint, tiny_store, finished, "--overwrite", steps=3)) == 0
    assert open_out(finished).sizes["time"] == 4 and not staging.exists()


def test_only_rollout_outputs_are_replaced(tiny_checkpoint, tiny_store, tmp_path, capsys):
    mine = tmp_path / "results.zarr"
    xr.Dataset({"a": ("x", np.arange(3.0))}).to_zarr(mine)
    before = snapshot(mine)
    assert cli.main(args(tiny_checkpoint, tiny_store, mine, "--overwrite")) == 2
    assert "is not a screamcast rollout output" in capsys.readouterr().err
    assert snapshot(mine) == before


def test_a_new_output_appears_only_with_its_first_step(tiny_checkpoint, tiny_store, tmp_path):
    """A kill while the output was being created left a store only --overwrite recovered; now
    the output is built beside its path and appears once step 0 is on disk."""
    path = tmp_path / "r.zarr"
    staging = out.staging_path(path)
    staging.mkdir()  # what a run killed during creation leaves
    (staging / "zarr.json").write_text("{")
    assert cli.main(args(tiny_checkpoint, tiny_store, path, steps=2)) == 0
    assert not staging.exists() and zarr.open_group(path).attrs["complete_steps"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "r.zarr",
        "r_last_step.png",
        "r_metrics.csv",
        "r_metrics.json",
    ]


def test_output_on_s3_is_refused_before_anything_is_written(
    tiny_checkpoint, tiny_store, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert cli.main(args(tiny_checkpoint, tiny_store, "s3://bucket/x.zarr")) == 2
    assert "only local outputs are supported" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # was: a local directory named s3:/bucket/x.zarr


@pytest.mark.parametrize(
    "change, message",
    [
        (["--nudge-tau-hours", "3"], "nudge_tau_hours: output has 6.0, this run 3.0"),
        (["--no-halo"], "halo_adjoint: output has 1, this run 0"),
        (["--no-reference"], "nudging: output has 1, this run 0"),
        (["--steps", "6"], "steps: output has 4, this run 6"),
        (["--other-checkpoint"], "checkpoint_sha256: output has"),
        (["--nudge-increment", "block"], "this run 'block mean over 4x4'"),
    ],
)
def test_resume_refuses_other_settings(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys, change, message
):
    path = tmp_path / "r.zarr"
    common = ["--reference", str(tiny_reference), "--halo-adjoint"]
    assert cli.main(args(tiny_checkpoint, tiny_store, path, *common, steps=4)) == 0
    ckpt, steps = tiny_checkpoint, 4
    if change == ["--no-halo"]:
        common = common[:2]
    elif change == ["--no-reference"]:
        common = common[2:]
    elif change == ["--other-checkpoint"]:
        ckpt = tmp_path / "copy.pth"
        ckpt.write_bytes(tiny_checkpoint.read_bytes() + b"")  # same bytes: same sha
        assert cli.main(args(ckpt, tiny_store, path, *common, "--resume", steps=4)) == 0
        import torch

        state = torch.load(tiny_checkpoint, weights_only=True)
        next(iter(state["model"].values())).view(-1)[0] += 1e-3  # other weights
        ckpt = tmp_path / "other.pth"
        torch.save(state, ckpt)
    elif change[0] == "--steps":
        steps = int(change[1])
    else:
        common = common + change
    before = snapshot(path)
    assert cli.main(args(ckpt, tiny_store, path, *common, "--resume", steps=steps)) == 2
    assert message in capsys.readouterr().err
    assert snapshot(path) == before


def test_an_output_nudged_before_the_bilinear_increment_resumes_with_block(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys
):
    """Outputs nudged with one increment per block (all of them, before the option) are
    refused by today's default, with the flag that continues them named."""
    path = tmp_path / "r.zarr"
    common = ["--reference", str(tiny_reference)]
    assert cli.main(args(tiny_checkpoint, tiny_store, path, *common, steps=4)) == 0
    zarr.open_group(path, mode="r+").attrs["nudge_projection"] = "block mean over 4x4"  # as then
    with_default = args(tiny_checkpoint, tiny_store, path, *common, "--resume", steps=4)
    assert cli.main(with_default) == 2
    assert "resumes with it set to block" in capsys.readouterr().err
    block = ["--nudge-increment", "block"]
    assert (
        cli.main(args(tiny_checkpoint, tiny_store, path, *common, *block, "--resume", steps=4)) == 0
    )


@pytest.mark.parametrize(
    "old, message, attr",
    [
        (
            ["--nudge-increment", "bilinear"],
            "this run 'block mean over 4x4, increment bicubic in each face'",
            None,
        ),
        (
            ["--nudge-time", "linear"],
            "nudge_time: output has 'linear', this run 'cubic'",
            "nudge_time",
        ),
    ],
)
def test_an_output_made_with_an_old_default_resumes_only_with_it(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path, capsys, old, message, attr
):
    """Outputs nudged with the bilinear increment (the default before bicubic) or linear in
    time (before cubic; so also one without the ``nudge_time`` attr) are refused by today's
    defaults, untouched, with the flag that continues them named."""
    path = tmp_path / "r.zarr"
    common = ["--reference", str(tiny_reference), *old]
    assert cli.main(args(tiny_checkpoint, tiny_store, path, *common, steps=4)) == 0
    with_default = args(tiny_checkpoint, tiny_store, path, *common[:2], "--resume", steps=4)
    for made_before_the_option in (False, True) if attr else (False,):
        if made_before_the_option:
            del zarr.open_group(path, mode="r+").attrs[attr]
        before = snapshot(path)
        assert cli.main(with_default) == 2
        err = capsys.readouterr().err
        assert message in err and f"resumes with {old[0]} {old[1]}" in err
        assert snapshot(path) == before
    assert cli.main(args(tiny_checkpoint, tiny_store, path, *common, "--resume", steps=4)) == 0


def test_a_second_run_on_a_locked_output_is_refused(tiny_checkpoint, tiny_store, finished, capsys):
    """Two --resume runs on one output interleaved their steps, both exiting 0. The lock is
    held by another process here, then released by SIGKILL, as a killed rollout releases it."""
    holder = textwrap.dedent(f"""
        import time
        from screamcast.file_lock import FileLock
        lock = FileLock({str(out.lock_path(finished))!r}, "output").acquire()
        print("locked", flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        assert cli.main(args(tiny_checkpoint, tiny_store, finished, "--resume", steps=2)) == 2
        assert f"is in use by another process (pid {proc.pid}" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait()
    assert cli.main(args(tiny_checkpoint, tiny_store, finished, "--resume", steps=2)) == 0
    assert not out.lock_path(finished).exists()


def test_non_finite_initial_condition_is_refused(tiny_checkpoint, tiny_store, tmp_path, capsys):
    bad = tmp_path / "bad_ic.zarr"
    ds = xr.open_zarr(tiny_store, chunks=None).load()
    ds["temperature"][0, 2, 5, 6] = np.inf
    ds.to_zarr(bad)
    assert cli.main(args(tiny_checkpoint, bad, tmp_path / "o.zarr")) == 2
    err = capsys.readouterr().err
    assert "initial condition" in err and "2020-01-01 00:00:00" in err
    assert (
        "variable 'temperature' has 1 non-finite values, the first at (face, y, x) = (2, 5, 6)"
        in err
    )
    assert not (tmp_path / "o.zarr").exists()


def test_a_state_that_turns_non_finite_stops_the_rollout(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    import torch

    ckpt = torch.load(tiny_checkpoint, weights_only=True)
    weight = next(k for k in ckpt["model"] if k.endswith("weight"))
    ckpt["model"][weight].view(-1)[0] = float("nan")
    bad = tmp_path / "nan.pth"
    torch.save(ckpt, bad)
    path = tmp_path / "o.zarr"
    assert cli.main(args(bad, tiny_store, path, steps=3)) == 2
    assert "the state turned non-finite at step 1 (2020-01-01 03:00" in capsys.readouterr().err
    ds = open_out(path)
    assert ds.attrs["complete_steps"] == 1 and np.isfinite(ds.u.values[0]).all()


def test_twenty_minute_steps_are_exact_and_resume(tiny_checkpoint, tmp_path):
    """Float "hours since" put steps 13, 26, 29 of a 20-min run 1 ns off: open_store refused
    the package's own 20-min store and output, and a resume after step 13 was refused."""
    from screamcast.data.store import open_store
    from screamcast.rollout.writer import RolloutWriter
    from screamcast.sources.synthetic import write_store

    store = write_store(tmp_path / "s20.zarr", 8, days=0.5, step_hours=1 / 3)
    times = open_store(store, {}, ["u"], (), 8)["time"].values
    assert all(d.total_seconds() == 1200 for d in np.diff(times)) and times.size == 37
    from screamcast.grid import PhysicsGrid

    w = RolloutWriter(tmp_path / "o.zarr", ["u"], {}, PhysicsGrid.for_face_size(4), {}, times)
    w.create()
    for k in range(14):
        w.append(times[k], np.zeros((1, 6, 4, 4), np.float32))
    w.close()
    steps, last, _ = RolloutWriter(
        tmp_path / "o.zarr", ["u"], {}, PhysicsGrid.for_face_size(4), {}, times
    ).recover()
    assert steps == 14 and last == times[13]
    from screamcast.data.calendar import DECODER

    written = xr.open_zarr(
        tmp_path / "o.zarr", consolidated=False, decode_times=DECODER, chunks=None
    )
    assert list(written["time"].values) == list(times)


def test_only_the_start_time_of_the_initial_condition_is_read(
    tiny_checkpoint, tiny_store, tmp_path
):
    """The diagnostics' whole history was loaded to take one time (430 MB for an 8000-time n=48
    store; at production size from S3 the whole history). Here every later time of the
    diagnostic past the 1-step rollout is a corrupt chunk: reading any of them fails."""
    import shutil

    store = tmp_path / "ic.zarr"
    shutil.copytree(tiny_store, store)
    chunks = [p for p in (store / "precip").rglob("*") if p.is_file() and p.name != "zarr.json"]
    later = [p for p in chunks if p.relative_to(store / "precip").parts[1] not in ("0", "1")]
    assert later and len(later) < len(chunks)
    for p in later:
        p.write_bytes(b"not a chunk")
    assert (
        cli.main(
            args(
                tiny_checkpoint, store, tmp_path / "o.zarr", "--start", "2020-01-01T00:00", steps=1
            )
        )
        == 0
    )
    assert np.isfinite(open_out(tmp_path / "o.zarr").precip.values[0]).all()


def test_resume_of_an_older_output_checks_its_length(tiny_checkpoint, tiny_store, finished, capsys):
    """Outputs made before the ``steps`` attr: a longer --steps computed every step and then
    failed, a shorter one left NaN steps. The length comes from the time axis."""
    import json

    meta = finished / "zarr.json"
    doc = json.loads(meta.read_text())
    del doc["attributes"]["steps"]
    meta.write_text(json.dumps(doc))
    assert cli.main(args(tiny_checkpoint, tiny_store, finished, "--resume", steps=4)) == 2
    assert "steps: output has 2, this run 4" in capsys.readouterr().err


def test_a_store_without_coordinates_needs_assume_grid(tiny_checkpoint, tiny_store, tmp_path,
                                                       capsys):  # fmt: skip
    """A store without lat/lon passed unchecked; now the CLI asks for --assume-grid."""
    bare = tmp_path / "bare.zarr"
    xr.open_zarr(tiny_store, chunks=None).drop_vars(["lat", "lon"]).to_zarr(bare)
    assert cli.main(args(tiny_checkpoint, bare, tmp_path / "o.zarr", steps=1)) == 2
    assert "configured grid (--assume-grid)" in capsys.readouterr().err
    argv = args(tiny_checkpoint, bare, tmp_path / "o.zarr", "--assume-grid", steps=1)
    assert cli.main(argv) == 0


def test_an_output_larger_than_its_disk_is_refused_before_anything_runs(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """``--steps 100000000`` planned for minutes, growing past 1.3 GB, before writing
    (issue 42's huge requests): refused in seconds with the size it would need; a resumed
    output counts only its missing steps."""
    import shutil

    big = tmp_path / "big.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, big, steps=100_000_000)) == 2
    err = capsys.readouterr().err  # 6 variables x 6 x 16 x 16 float32 = 36 KiB a step
    assert "--steps=100000000 needs 3.35 TiB (36 KiB a step) and its disk has" in err
    assert not big.exists() and not list(tmp_path.iterdir())
    half = int(shutil.disk_usage(tmp_path).free * 0.6)  # bytes a step: one fits, two do not
    with pytest.raises(out.OutputError, match="needs"):
        out.check_room(big, 1, half, "create")  # the initial state and one step
    out.check_room(big, 0, half, "create")
    done = tmp_path / "done.zarr"  # 3 complete steps: a resume to 4 writes one
    assert cli.main(args(tiny_checkpoint, tiny_store, done, steps=2)) == 0
    out.check_room(done, 3, half, "resume")
    with pytest.raises(out.OutputError, match="needs"):
        out.check_room(done, 4, half, "resume")


def test_a_resume_names_the_same_store_however_spelled(
    tiny_checkpoint, tiny_store, tmp_path, monkeypatch
):
    """``--data x.zarr`` made it, ``--data ./x.zarr/`` (or its absolute path, or a link to
    it) resumes it; another store is still refused."""
    import shutil

    monkeypatch.chdir(tiny_store.parent)
    link = tmp_path / "linked.zarr"
    link.symlink_to(tiny_store)
    path = tmp_path / "r.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store.name, path, steps=2)) == 0
    for spelling in (f"./{tiny_store.name}/", str(tiny_store), str(link)):
        assert cli.main(args(tiny_checkpoint, spelling, path, "--resume", steps=2)) == 0
    other = tmp_path / "other.zarr"
    shutil.copytree(tiny_store, other)
    assert cli.main(args(tiny_checkpoint, other, path, "--resume", steps=2)) == 2
