# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The domain-decomposed rollout (``torchrun --nproc-per-node R``, gloo): every output equal
to one rank's, bit for bit, for crop, intra-face and cross-face reassembly, nudged, across a
kill and ``--resume``; the bytes each rank sends are the halo arithmetic's.

Bit for bit needs the network's batches to be the same tiles on one rank and on many:
``--batch-size`` a divisor of each rank's tile count (here 4, a face's tiles). Batches that
straddle ranks' tiles give the same convolutions on other batch shapes, which the CPU's kernels
round differently: equal to float32 rounding (measured below)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout.domain import blocks, chunk_shape
from screamcast.rollout.exchange_plan import ExchangePlan
from screamcast.rollout.guard import Guard
from screamcast.rollout.nudging.block_increment import BlockIncrement
from tests.rollout.test_run_nudged import PROG, SCRIPT, args, open_out

ENV = os.environ | {"OMP_NUM_THREADS": "1"}  # as torchrun sets it: the same kernels, same bits
REASSEMBLY = {
    "crop": [],
    "intra-face": ["--halo-adjoint"],
    "cross-face": ["--halo-adjoint", "--halo-adjoint-cross-face"],
}
VARIABLES = [*PROG, "precip"]
SCORES = Path(__file__).with_name("ranks_scores.py")  # an aggregator that records its feed


# the tiny checkpoint's training tile, which the plan's bytes assume: the automatic tile is a
# whole face on 1, 2, 3, 6 ranks and the training tile on 4, 8, 12
# (screamcast/rollout/inference_settings.py)
TRAINING_TILE = ("--tile", "8")


def ranks(n: int, argv: list[str], script: Path = SCRIPT) -> list[str]:
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    return [*launch, "--nproc-per-node", str(n), str(script), *argv]


def run(cmd: list[str]) -> None:
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        _, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and every rank
        proc.communicate()
        pytest.fail("the rollout hung")
    assert proc.returncode == 0, err[-3000:]


def assert_same(a, b) -> None:
    x, y = open_out(a), open_out(b)
    for v in VARIABLES:
        assert x[v].values.tobytes() == y[v].values.tobytes(), v
    assert x.attrs["complete_steps"] == y.attrs["complete_steps"] == x.sizes["time"]


def one_rank(tiny_checkpoint, tiny_store, out, flags) -> None:
    run([sys.executable, str(SCRIPT), *args(tiny_checkpoint, tiny_store, out, *flags)])


def kill_after(cmd: list[str], watched, steps: int) -> None:
    """Start ``cmd`` and SIGKILL it (the launcher and every rank) once ``watched`` holds
    ``steps`` complete steps."""
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if zarr.open_group(watched, mode="r").attrs.get("complete_steps", 0) >= steps:
                for pid in [proc.pid, *descendants(proc.pid)]:  # torchrun's ranks: own sessions
                    os.kill(pid, signal.SIGKILL)
                break
        except Exception:
            pass
        time.sleep(0.01)
    proc.wait()


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc: the ranks torchrun started)."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [c for c, p in parent.items() if p in frontier]
        found += kids
        frontier = kids
    return found


def assert_bytes(out, world: int, reassembly: str) -> None:
    """The bytes each rank sent per step: the halo strips (5 prognostic channels); with the
    halo adjoint on bands, the rows of the tile predictions (6 output channels) on a
    neighbour's rows; with the cross-face adjoint, the weighted ring values; on bands, the
    coarse rows of the nudged variables' increments; the guard's sums and extremes: nothing
    else of the step crosses between ranks (the blocks gathered to rank 0 for its scores are
    not the step's, and not counted)."""
    layout = TileLayout(PhysicsGrid.for_face_size(16), 8, 4)
    chunks = (1, *chunk_shape(world, layout))  # a face, a band, or a quarter of a face
    assert out.attrs["ranks"] == world and out["u"].encoding["chunks"][1:] == chunks
    every = blocks(world, 2)
    for r, sent in enumerate(out.attrs["exchange_bytes_per_step"]):
        plan = ExchangePlan.build(layout, r, world)
        want = plan.halo_bytes(5)
        want += plan.overlap_bytes(6) if reassembly != "crop" else 0
        want += plan.adjoint_bytes(6) if reassembly == "cross-face" else 0
        want += Guard.bytes_per_step(6)  # the guard's global statistics
        if "nudge_vars" in out.attrs and len(every[r].rows) < 2:  # blocks smaller than a face
            nudged = len(out.attrs["nudge_vars"].split(","))  # reference n = 4: 4 x 4 cells
            want += BlockIncrement(r, every, 8, 4, 16, None).bytes_per_step(nudged)
        assert sent == want, (r, sent, want)


def equal_on_ranks(world: int, reassembly: str, batch: int, inputs: tuple, tmp_path: Path):
    """A nudged 2-step rollout on one rank and on ``world`` ranks: the same bytes, and each
    rank's exchanges the plan's."""
    checkpoint, store, reference = inputs
    flags = [*REASSEMBLY[reassembly], "--reference", str(reference), "--steps", "2"]
    flags += ["--batch-size", str(batch), *TRAINING_TILE]
    one, many = tmp_path / "one.zarr", tmp_path / "many.zarr"
    one_rank(checkpoint, store, one, flags)
    run(ranks(world, args(checkpoint, store, many, *flags)))
    assert_same(one, many)
    assert_bytes(open_out(many), world, reassembly)
    assert_same_scores(tmp_path / "one", tmp_path / "many")


def assert_same_scores(a: Path, b: Path) -> None:
    """The step tables written beside two outputs are the same (rank 0 scored the globe
    gathered each step, or read back on a resume, as one rank scores it)."""
    tables = [Path(f"{base}_metrics.json").read_text() for base in (a, b)]
    assert tables[0] == tables[1]


@pytest.mark.distributed
def test_three_ranks_equal_one_rank_bit_for_bit(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """Whole faces per rank: 3 ranks, intra-face reassembly, nudged toward a coarse cube
    reference, against one rank (6 ranks: tests/rollout/test_block_operator.py with ranks as
    threads, and the benchmark's record)."""
    equal_on_ranks(3, "intra-face", 4, (tiny_checkpoint, tiny_store, tiny_reference), tmp_path)


@pytest.mark.distributed
def test_the_scores_are_fed_the_globe_each_step_as_on_one_rank(
    tiny_checkpoint, tiny_store, tmp_path
):
    """On 3 ranks (whole faces each) rank 0's aggregator is fed each step's globe while the
    rollout runs (the output then holds fewer complete steps than the run's 4), the same
    fields in the same order as on one rank: no finished output read back."""
    fed, flags = {}, ["--steps", "3", "--batch-size", "4", *TRAINING_TILE]  # a face a batch
    for world in (1, 3):
        out, report = tmp_path / f"r{world}.zarr", tmp_path / f"r{world}.json"
        argv = [str(SCORES), str(report), *args(tiny_checkpoint, tiny_store, out, *flags)]
        run([sys.executable, *argv] if world == 1 else ranks(world, argv[1:], script=SCORES))
        fed[world] = json.loads(report.read_text())
    assert [f["step"] for f in fed[3]] == [0, 1, 2, 3]
    assert all(f["shape"] == [len(VARIABLES), 6, 16, 16] for f in fed[3])
    assert [f["sha"] for f in fed[3]] == [f["sha"] for f in fed[1]]
    # fed while it ran: step k once steps 0..k-1 were complete (the initial step once it is)
    assert [f["done"] for f in fed[3]] == [1, 1, 2, 3], fed[3]


@pytest.mark.distributed
def test_two_ranks_killed_and_resumed_equal_one_rank_bit_for_bit(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """Cross-face reassembly (both exchanges), nudged; SIGKILLed mid-run, then resumed."""
    flags = [*REASSEMBLY["cross-face"], "--reference", str(tiny_reference), "--steps", "5"]
    flags += ["--batch-size", "4", *TRAINING_TILE]
    one, cut = tmp_path / "one.zarr", tmp_path / "cut.zarr"
    one_rank(tiny_checkpoint, tiny_store, one, flags)
    kill_after(ranks(2, args(tiny_checkpoint, tiny_store, cut, *flags)), cut, 2)
    done = zarr.open_group(cut, mode="r").attrs["complete_steps"]
    assert 2 <= done < 6, done  # killed mid-run, its complete steps kept
    run(ranks(2, args(tiny_checkpoint, tiny_store, cut, *flags, "--resume")))
    assert_same(one, cut)
    assert_same_scores(tmp_path / "one", tmp_path / "cut")  # the written steps read back
    out = open_out(cut)
    assert "resumed after time index" in out.attrs["history"]
    assert_bytes(out, 2, "cross-face")


@pytest.mark.distributed
@pytest.mark.parametrize("world, batch", [(4, 2), (8, 1), (12, 2)])
def test_blocks_smaller_than_a_face_equal_one_rank_bit_for_bit(
    world, batch, tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """4 ranks each the top or bottom half of 3 faces, 8 a quarter of 3 faces (a node's
    GPUs), 12 a band of one face (one tile row: 2 tiles): cross-face reassembly (all three
    exchanges) and a bicubic nudging increment (the coarse cells past a block swapped),
    against one rank; the bytes of every exchange as planned. Batches of a band's 2 tiles
    are one rank's; a quarter's 3 tiles (one a face) are not, so 8 ranks run one tile a
    batch (a convolution's rounding depends on what else is in its batch)."""
    inputs = (tiny_checkpoint, tiny_store, tiny_reference)
    equal_on_ranks(world, "cross-face", batch, inputs, tmp_path)


@pytest.mark.distributed
def test_the_documented_multi_rank_command_runs_as_written(tiny_checkpoint, tiny_store, tmp_path):
    """docs/rollout.md's launch line, word for word up to the command, with ``--start``:
    2 gloo ranks finish; torchrun without its ``--`` refuses ``--start`` (issue 42)."""
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "rollout.md").read_text().splitlines()
    words = next(line for line in doc if line.startswith("screamcast-launch ")).split()
    cut = words.index("screamcast-rollout") + 1
    assert words[1:cut] == ["--nproc-per-node", "2", "screamcast-rollout"]
    launch = str(Path(sys.executable).parent / "screamcast-launch")
    torchrun = str(Path(sys.executable).parent / "torchrun")
    start = str(open_out(tiny_store)["time"].values[3])[:16].replace(" ", "T")  # 3 steps in
    out = tmp_path / "doc.zarr"
    flags = args(tiny_checkpoint, tiny_store, out, "--start", start, steps=2)
    done = subprocess.run([launch, *words[1:cut], *flags], cwd=root, env=ENV,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    written = open_out(out)
    assert written.attrs["ranks"] == 2 and written.attrs["complete_steps"] == 3
    assert str(written["time"].values[0])[:16].replace(" ", "T") == start
    without = ["--standalone", "--nproc-per-node", "2", "scripts/ace/run_screamcast_nudged.py"]
    refused = subprocess.run([torchrun, *without, *flags], cwd=root, env=ENV,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert refused.returncode == 2 and "ambiguous option: --start" in refused.stderr


def test_a_stalled_rank_stops_the_others_at_the_collective_timeout(
    tiny_checkpoint, tiny_store, tmp_path
):
    """Rank 1 stalls in its second step (a step corrector, in its own file, that sleeps):
    rank 0 stops at its next exchange after ``stepper.timeout_minutes`` (6 s here, not the
    libraries' 30 min), naming the stall, and the output keeps its complete steps."""
    (tmp_path / "stall.py").write_text(
        "import os, time\n"
        "from dataclasses import dataclass\n"
        "from screamcast.step.correctors import register_step_corrector\n\n"
        "@dataclass(frozen=True)\n"
        "class StallConfig:\n"
        "    seconds: float = 60.0\n\n"
        "@register_step_corrector('stall', StallConfig)\n"
        "class Stall:\n"
        "    name = 'stall'\n"
        "    def __init__(self, config, geometry, where):\n"
        "        self.seconds, self.calls = config.seconds, 0\n"
        "    def __call__(self, before, after):\n"
        "        self.calls += 1\n"
        "        if self.calls == 2 and os.environ.get('RANK') == '1':\n"
        "            time.sleep(self.seconds)\n"
        "        return after, {}\n"
    )
    out = tmp_path / "o.zarr"
    argv = args(tiny_checkpoint, tiny_store, out, steps=4)
    argv += ["stepper.correctors=[{type: 'stall:stall'}]", "stepper.timeout_minutes=0.1"]
    env = ENV | {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ENV.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    done = subprocess.run(ranks(2, argv), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert time.perf_counter() - t0 < 55  # stopped before the stalled rank woke up
    assert "rank 0: another rank did not answer within 0.1 min" in done.stderr, done.stderr[-3000:]
    # step 1 is written but counts as complete only once every rank reached step 2's commit
    assert zarr.open_group(out, mode="r").attrs["complete_steps"] == 1


def test_a_full_disk_on_one_rank_stops_the_run_keeping_its_steps_and_it_resumes(
    tiny_checkpoint, tiny_store, tmp_path
):
    """Rank 1's disk fills in its third step (a step corrector, in its own file, lowers that
    process's file-size limit to 0: real EFBIG writes, as ENOSPC would be): the run stops
    with the write's one-line error naming the output, the steps before stay complete, and
    ``--resume`` with room again ends equal to a run that never failed."""
    (tmp_path / "fill.py").write_text(
        "import os, resource, signal\n"
        "from dataclasses import dataclass\n"
        "from screamcast.step.correctors import register_step_corrector\n\n"
        "@dataclass(frozen=True)\n"
        "class FillConfig:\n"
        "    at_call: int = 3\n\n"
        "@register_step_corrector('fill', FillConfig)\n"
        "class Fill:\n"
        "    name = 'fill'\n"
        "    def __init__(self, config, geometry, where):\n"
        "        self.at, self.calls = config.at_call, 0\n"
        "    def __call__(self, before, after):\n"
        "        self.calls += 1\n"
        "        mine = os.environ.get('FILL_RANK') == os.environ.get('RANK', '-')\n"
        "        if self.calls == self.at and mine:\n"
        "            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not death\n"
        "            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
        "        return after, {}\n"
    )
    env = ENV | {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ENV.get('PYTHONPATH', '')}"}
    plug = ["stepper.correctors=[{type: 'fill:fill'}]", "--batch-size", "4"]
    one, cut = tmp_path / "one.zarr", tmp_path / "cut.zarr"
    single = [sys.executable, str(SCRIPT), *args(tiny_checkpoint, tiny_store, one, *plug, steps=5)]
    done = subprocess.run(single, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    argv = args(tiny_checkpoint, tiny_store, cut, *plug, steps=5)
    done = subprocess.run(ranks(2, argv), env=env | {"FILL_RANK": "1"}, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode != 0
    assert f"writing {cut} failed: OSError: [Errno 27] File too large" in done.stderr
    assert "]: Traceback" not in done.stderr, done.stderr[-3000:]  # no rank's (torchrun's own
    # report of the failed rank stays)
    kept = zarr.open_group(cut, mode="r").attrs["complete_steps"]
    assert 1 <= kept < 6, kept
    done = subprocess.run(ranks(2, [*argv, "--resume"]), env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same(one, cut)


def test_a_corrector_that_runs_on_one_rank_is_refused_on_several_before_writing(
    tiny_checkpoint, tiny_store, tiny_reference, tmp_path
):
    """docs/extending.md's global-mean corrector runs on one rank (its ``restrict`` says so):
    on 2 ranks the run is refused with its words, one line per rank, and no output is left
    (it wrote the initial step before)."""
    out = tmp_path / "o.zarr"
    method = "tests.plugins.global_mean_corrector:global_mean"
    plug = ["--reference", str(tiny_reference), "--nudge-vars", "u", f"nudging.method={method}"]
    root = Path(__file__).resolve().parents[2]
    env = ENV | {"PYTHONPATH": f"{root}{os.pathsep}{ENV.get('PYTHONPATH', '')}"}
    argv = args(tiny_checkpoint, tiny_store, out, *plug, steps=2)
    done = subprocess.run(ranks(2, argv), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    said = "nudging method global_mean runs on one rank: run it on one rank"
    assert said in done.stderr and "]: Traceback" not in done.stderr, done.stderr[-3000:]
    assert not out.exists() and not list(tmp_path.glob("*.zarr*"))


@pytest.mark.distributed
def test_two_ranks_nudged_toward_a_latlon_reference_read_their_boxes_and_equal_one_rank(
    tiny_checkpoint, tiny_store, tiny_latlon_reference, tmp_path
):
    """A lat-lon reference on 2 gloo ranks: each reads the box of points its faces take
    (tests/rollout/test_nudging_ranks.py), the group sums that straddle them are added over
    the ranks: one rank's output to float rounding."""
    flags = ["--reference", str(tiny_latlon_reference), "--steps", "2", "--batch-size", "4"]
    flags += [*TRAINING_TILE, "--precision", "fp32"]
    one, many = tmp_path / "one.zarr", tmp_path / "many.zarr"
    one_rank(tiny_checkpoint, tiny_store, one, flags)
    run(ranks(2, args(tiny_checkpoint, tiny_store, many, *flags)))
    x, y = open_out(one), open_out(many)
    assert "lat-lon" in y.attrs["nudge_projection"]
    for v in VARIABLES:
        np.testing.assert_allclose(y[v].values, x[v].values, rtol=1e-5, atol=1e-5, err_msg=v)
    assert y.attrs["complete_steps"] == 3


@pytest.mark.distributed
def test_a_replacement_the_guard_stops_on_two_ranks_keeps_the_old_output_and_no_staging(
    tiny_checkpoint, tiny_store, tmp_path
):
    """One driver, one lifecycle: as on one rank, an --overwrite run on 2 ranks that its guard
    stops leaves the output it was to replace whole and removes its own staging store."""
    out = tmp_path / "o.zarr"
    run(ranks(2, args(tiny_checkpoint, tiny_store, out, steps=2)))
    before, names = open_out(out)["u"].values.tobytes(), sorted(tmp_path.iterdir())
    tight = ["--overwrite", "guard.mean_sigmas=1e-9"]  # any global mean off the training's trips
    argv = args(tiny_checkpoint, tiny_store, out, *tight, steps=3)
    done = subprocess.run(ranks(2, argv), env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "left physics" in done.stderr, done.stderr[-3000:]
    assert open_out(out)["u"].values.tobytes() == before
    assert zarr.open_group(out, mode="r").attrs["complete_steps"] == 3
    assert sorted(tmp_path.iterdir()) == names  # no staging store left beside them
