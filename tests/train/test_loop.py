# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The training stage end to end: Hydra compose, checkpoints, resume, the stage chain, DDP."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from screamcast import checkpoint_io as cio
from screamcast.config import register
from screamcast.data.batch import CropBatch
from screamcast.train.loop import StepBatches, train
from screamcast.train.skill import persistence_and_model_rmse

ROOT = Path(__file__).resolve().parents[2]
register()


def config(*overrides):
    with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
        return compose("train", overrides=list(overrides))


def on_ne4pg2(store, prognostic: str, diagnostic: str = "[]", *extra: str) -> list[str]:
    """The pytest experiment's overrides for a small ingested ne4pg2 store (faces of 8 cells:
    tiles of 4 with a halo of 2, crops of 8)."""
    return [
        "experiment=pytest",
        f"data.url={store}",
        "data.n=8",
        "data.tile=4",
        "data.halo=2",
        "data.crop=8",
        f"data.prognostic={prognostic}",
        f"data.diagnostic={diagnostic}",
        "data.static=[]",
        *extra,
    ]


def rows(run: Path) -> list[dict]:
    with open(run / "metrics.csv") as f:
        return list(csv.DictReader(f))


def weights(path) -> dict:
    return cio.load_checkpoint(path)["model"]


def test_training_launch(tiny_store, tmp_path):
    t0 = time.perf_counter()
    run = train(config("experiment=pytest", f"data.url={tiny_store}", f"run_dir={tmp_path / 'r'}"))
    elapsed = time.perf_counter() - t0
    names = sorted(p.name for p in run.iterdir())
    assert {"best.pth", "latest.pth", "config.yaml", "metrics.csv"} <= set(names)
    assert {"steps_00000003.pth", "steps_00000006.pth"} <= set(names)
    log = rows(run)
    assert [int(r["step"]) for r in log] == [1, 2, 3, 4, 5, 6]
    assert log[2]["valid_loss"] and log[5]["valid_loss"] and float(log[-1]["images_per_s"]) > 0
    assert all(0.0 <= float(r["data_ms"]) < 60_000 for r in log)  # each step's wait for data
    ckpt = torch.load(run / "latest.pth", weights_only=True)
    assert ckpt["step"] == 6 and ckpt["samples_seen"] == 12
    desc = ckpt["description"]
    assert ckpt["format_version"] == 4 and desc["levels"] == {}  # 2-D variables only
    assert desc["network"]["model"]["width"] == ckpt["description"]["config"]["model"]["width"]
    assert desc["grid"] == {"n": 16, "tile": 8, "halo": 4, "name": "ne8pg2"}
    assert desc["variables"]["diagnostic"] == ["precip"] and "u" in desc["stats"]["mean"]
    assert desc["config"]["data"]["url"] == str(tiny_store)
    assert elapsed < 60, f"the pytest experiment took {elapsed:.1f} s"
    events = list((run / "tensorboard").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0  # tensorboard is in the dev extra


def test_bf16_mixed_on_cpu_is_the_gpu_path(tiny_store, tmp_path):
    """``precision=bf16-mixed`` (what ``auto`` picks on CUDA) runs under CPU autocast: the
    losses stay finite and close to fp32's, the weights stay fp32, and the run resumes."""
    common = ["experiment=pytest", f"data.url={tiny_store}", "keep_every=0"]
    fp32 = train(config(*common, f"run_dir={tmp_path / 'fp32'}", "precision=32-true"))
    bf16_cfg = [*common, f"run_dir={tmp_path / 'bf16'}", "precision=bf16-mixed"]
    bf16 = train(config(*bf16_cfg, "steps=4"))
    train(config(*bf16_cfg))  # resumed to the configuration's 6 steps
    a, b = rows(fp32), rows(bf16)
    assert [int(r["step"]) for r in b] == [1, 2, 3, 4, 5, 6]
    for r, s in zip(a, b, strict=True):  # the same batches: bf16 rounding apart
        assert np.isfinite(float(s["train_loss"]))
        assert abs(float(s["train_loss"]) - float(r["train_loss"])) < 0.05 * float(r["train_loss"])
    assert float(a[0]["train_loss"]) != float(b[0]["train_loss"])  # autocast was on
    assert all(w.dtype == torch.float32 for w in weights(bf16 / "latest.pth").values())
    assert (
        cio.load_checkpoint(bf16 / "latest.pth")["description"]["config"]["precision"]
        == "bf16-mixed"
    )


def _is_nhwc(t: torch.Tensor) -> bool:
    return t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()


def test_channels_last_training_and_switching_layout_at_resume(tiny_store, tmp_path):
    """``channels_last=true`` (what ``null`` picks on CUDA) trains NHWC weights to the same
    losses as NCHW; a run resumed with the other layout converts the optimizer's moments."""
    common = ["experiment=pytest", f"data.url={tiny_store}", "keep_every=0"]
    nchw = train(config(*common, f"run_dir={tmp_path / 'nchw'}", "channels_last=false"))
    nhwc = train(config(*common, f"run_dir={tmp_path / 'nhwc'}", "channels_last=true"))
    switched = tmp_path / "switched"
    train(config(*common, f"run_dir={switched}", "channels_last=false", "steps=4"))
    train(config(*common, f"run_dir={switched}", "channels_last=true"))  # resumed to 6 steps
    for r, s in zip(rows(nchw), rows(nhwc), strict=True):
        assert abs(float(s["train_loss"]) - float(r["train_loss"])) < 1e-4 * float(r["train_loss"])
    a, b, c = (cio.load_checkpoint(run / "latest.pth") for run in (nchw, nhwc, switched))
    assert not _is_nhwc(a["model"]["net.stem.weight"]) and _is_nhwc(b["model"]["net.stem.weight"])
    moments = [st["exp_avg"] for st in c["optimizer"]["state"].values()]
    big = [m for m in moments if m.dim() == 4 and min(m.shape[1:3]) > 1]  # 3x3 convolutions
    assert big and all(_is_nhwc(m) for m in big)  # converted from NCHW at the resume
    for key, w in b["model"].items():
        torch.testing.assert_close(c["model"][key], w, rtol=1e-4, atol=1e-6, msg=key)


def test_misspelt_keys_fail_loudly(tiny_store):
    with pytest.raises(ConfigCompositionException):
        config("experiment=pytest", "data.urll=x")
    with pytest.raises(ConfigCompositionException):
        config("experiment=pytest", "optim.learning_rate=1")


def test_production_stages_compose():
    s1, s2 = config("experiment=stage1_pretrain64"), config("experiment=stage2_anneal")
    s3, s4 = config("experiment=stage3_finetune_tile"), config("experiment=stage4b_multistep4")
    assert s1.data.crop == 64 and s1.optim.lr == 1e-4 and s1.scheduler.name == "constant"
    assert s2.scheduler.name == "dampened_cosine_with_hard_restarts" and s2.scheduler.min_lr == 1e-6
    assert s3.data.crop == s3.data.tile + 2 * s3.data.halo and s3.optim.lr == 1e-5
    assert s4.rollout_steps == 4 and config("experiment=stage4a_multistep2").rollout_steps == 2
    remote = config("data=s3", "experiment=stage1_pretrain64").data  # lazy reads, in workers
    assert remote.url.startswith("s3://") and not remote.in_memory and remote.num_workers > 0
    assert remote.region_stride == 128 and remote.region_crops == 8  # whole-shard regions


def _cli(tiny_store, run, *extra):
    return [
        sys.executable,
        str(ROOT / "scripts" / "train.py"),
        "experiment=pytest",
        f"data.url={tiny_store}",
        f"run_dir={run}",
        *extra,
    ]


ENV = os.environ | {"OMP_NUM_THREADS": "1"}


def interrupted(tiny_store, tmp_path, steps: list[str], logged: int, sig: int):
    """Start the uninterrupted run (``full``) and, beside it, one (``cut``) sent ``sig`` once
    its metrics.csv holds ``logged`` rows (one thread each: the two share the cores). Returns
    both processes and the cut run's folder."""
    whole = subprocess.Popen(
        _cli(tiny_store, tmp_path / "full", *steps), env=ENV, stderr=subprocess.PIPE
    )
    cut = tmp_path / "cut"
    proc = subprocess.Popen(_cli(tiny_store, cut, *steps), env=ENV, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (cut / "metrics.csv").exists() and len(rows(cut)) >= logged:
            proc.send_signal(sig)
            break
        time.sleep(0.01)
    return whole, proc, cut


def test_resume_after_sigterm_is_bitwise_equal(tiny_store, tmp_path):
    steps = ["steps=10", "checkpoint_every=100", "keep_every=0", "valid_every=5"]
    whole, proc, cut = interrupted(tiny_store, tmp_path, steps, 3, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()[-2000:]  # saved, not finished
    stopped = cio.load_checkpoint(cut / "latest.pth")["step"]
    assert 3 <= stopped < 10, f"stopped at {stopped}"
    again = subprocess.run(_cli(tiny_store, cut, *steps), env=ENV, capture_output=True)
    _, err = whole.communicate(timeout=120)
    assert whole.returncode == 0, err.decode()[-2000:]
    assert again.returncode == 0 and b"resumed from" in again.stdout + again.stderr
    a, b = weights(tmp_path / "full" / "latest.pth"), weights(cut / "latest.pth")
    assert cio.load_checkpoint(cut / "latest.pth")["step"] == 10
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_a_training_range_without_a_sample_is_refused_by_its_key(tiny_store, tmp_path):
    """17 times, [0, -16] keeps one: refused naming the key before the statistics pass (which
    divided by zero), for crops and for the global unroll alike."""
    base = ["experiment=pytest", f"data.url={tiny_store}", "data.train_range=[0,-16]"]
    for extra in ([], ["unroll=global"]):
        run = tmp_path / str(len(extra))
        with pytest.raises(ValueError, match=r"data.train_range=\[0, -16\] selects times"):
            train(config(*base, *extra, f"run_dir={run}"))
        assert not (run / "config.yaml").exists()  # a refused config is not recorded


def test_a_refused_config_leaves_the_runs_recorded_config(tiny_store, tmp_path):
    """A resume with a config that is refused keeps the config the checkpoints were made
    with (it was overwritten by the refused one)."""
    run = tmp_path / "r"
    base = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={run}", "steps=2"]
    train(config(*base))
    recorded = (run / "config.yaml").read_text()
    with pytest.raises(ValueError, match="data.train_range"):
        train(config(*base, "data.train_range=[0,-16]"))
    assert (run / "config.yaml").read_text() == recorded


def test_killed_with_sigkill_between_checkpoints_resumes_bit_for_bit(tiny_store, tmp_path):
    """``kill -9`` (no handler runs, nothing is saved on the way out) after step 5 of 12 with
    checkpoints every 4 steps: the next job resumes from step 4, trains 5.. again and ends
    with the uninterrupted run's weights and optimizer state; metrics.csv has each step once."""
    steps = ["steps=12", "checkpoint_every=4", "keep_every=0", "valid_every=4", "log_every=1"]
    whole, proc, cut = interrupted(tiny_store, tmp_path, steps, 6, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    logged = [int(r["step"]) for r in rows(cut)]
    saved = cio.load_checkpoint(cut / "latest.pth")["step"]
    assert saved in (4, 8) and max(logged) > saved  # steps past the checkpoint were lost
    again = subprocess.run(_cli(tiny_store, cut, *steps), env=ENV, capture_output=True)
    _, err = whole.communicate(timeout=120)
    assert whole.returncode == 0, err.decode()[-2000:]
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert b"resumed from" in again.stdout + again.stderr
    a, b = (
        cio.load_checkpoint(tmp_path / "full" / "latest.pth"),
        cio.load_checkpoint(cut / "latest.pth"),
    )
    assert a["step"] == b["step"] == 12
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    for s_a, s_b in zip(
        a["optimizer"]["state"].values(), b["optimizer"]["state"].values(), strict=True
    ):
        assert all(torch.equal(s_a[k], s_b[k]) for k in s_a)
    assert [int(r["step"]) for r in rows(cut)] == [int(r["step"]) for r in rows(tmp_path / "full")]
    lost = {r["step"]: r["train_loss"] for r in rows(tmp_path / "full")}
    assert all(lost[r["step"]] == r["train_loss"] for r in rows(cut))  # the same losses


def test_stage_chain(tiny_store, tmp_path):
    base = ["experiment=pytest", f"data.url={tiny_store}"]
    stages = [
        ["scheduler=constant"],
        ["scheduler=anneal", "optim.lr=1e-4"],
        ["data.crop='${eval_crop:${data.tile},${data.halo}}'", "optim.lr=1e-5"],  # tile+2*halo
        ["rollout_steps=2", "optim.lr=1e-5"],
        ["rollout_steps=4", "optim.lr=1e-5"],
    ]
    previous = None
    for i, extra in enumerate(stages):
        run = tmp_path / f"stage{i}"
        init = [f"init_from={previous / 'best.pth'}"] if previous else []
        train(config(*base, *extra, *init, f"run_dir={run}"))
        ckpt = cio.load_checkpoint(run / "latest.pth")
        assert ckpt["step"] == 6, "init_from must start a fresh schedule"
        assert ckpt["description"]["config"]["init_from"] == (
            str(previous / "best.pth") if previous else None
        )
        previous = run
    assert ckpt["description"]["config"]["rollout_steps"] == 4
    with pytest.raises(ValueError, match="model.width=8, but the config has 16"):
        train(
            config(
                *base,
                "model.width=16",
                f"init_from={previous / 'best.pth'}",
                f"run_dir={tmp_path / 'bad'}",
            )
        )


@pytest.mark.distributed
def test_two_rank_ddp_trains_saves_once_and_resumes(tiny_store, tmp_path):
    """Resumed NHWC (what CUDA runs): DDP's gradient buckets follow the parameters' layout."""
    run = tmp_path / "ddp"
    extra = ["devices=2", "strategy=ddp", "accelerator=cpu", "data.num_workers=0"]
    for steps in (["steps=4"], ["steps=6", "channels_last=true"]):
        try:
            out = subprocess.run(
                _cli(tiny_store, run, *extra, *steps), capture_output=True, timeout=240
            )
        except subprocess.TimeoutExpired as err:
            pytest.fail(f"two-rank training hung: {err}")
        assert out.returncode == 0, out.stderr.decode()[-3000:]
        assert b"Grad strides do not match bucket view strides" not in out.stderr
    log = rows(run)
    assert [int(r["step"]) for r in log] == [1, 2, 3, 4, 5, 6]  # rank 0 alone writes
    assert int(log[-1]["samples"]) == 6 * 2 * 2  # global batch = 2 per rank x 2 ranks
    assert cio.load_checkpoint(run / "latest.pth")["step"] == 6


def test_trained_model_beats_persistence(tiny_store, tmp_path):
    cfg = config(
        "experiment=pytest",
        f"data.url={tiny_store}",
        f"run_dir={tmp_path / 'p'}",
        "steps=60",
        "optim.lr=2e-3",
        "valid_every=20",
        "data.valid_samples=16",
        "model.width=16",
    )
    run = train(cfg)
    rmse = persistence_and_model_rmse(cfg, str(run / "best.pth"))
    ratio = rmse["model"] / rmse["persistence"]
    print(
        "one-step RMSE model / persistence per variable:",
        dict(zip(cfg.data.prognostic, ratio.round(3), strict=True)),
    )
    assert np.mean(ratio) < 0.9, ratio
    # the crops' inner part (what a rollout tile keeps) has context on every side
    inner = rmse["model_inner"] / rmse["persistence_inner"]
    print("the same over the crops' inner part:", inner.round(3))
    assert np.mean(inner) < np.mean(ratio), (inner, ratio)


def test_metrics_log_keeps_the_columns_of_a_resumed_file(tmp_path):
    """A run started by an older version (no data_ms column) is appended to in its own columns."""
    from screamcast.train.metrics_log import MetricsLog

    path = tmp_path / "metrics.csv"
    path.write_text("step,samples,lr,train_loss,valid_loss,images_per_s\n1,2,0.1,0.5,,3.0\n")
    log = MetricsLog(path, enabled=True)
    log.write(
        {"step": 2, "samples": 4, "lr": 0.1, "train_loss": 0.4, "images_per_s": 3.5, "data_ms": 1.5}
    )
    assert rows(tmp_path)[-1] == {
        "step": "2",
        "samples": "4",
        "lr": "0.1",
        "train_loss": "0.4",
        "valid_loss": "",
        "images_per_s": "3.5",
    }


def test_added_unknown_keys_fail_too(tiny_store, tmp_path):
    """``+optim.lrr=1``, the form Hydra's own error message suggests, was accepted, recorded
    and ignored. The command line exits 2 with one line; ``++`` is refused the same way."""
    cmd = _cli(tiny_store, tmp_path / "r", "+optim.lrr=1")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "error: unknown key 'optim.lrr' (known keys of optim: betas" in run.stderr
    assert "Traceback" not in run.stderr
    base = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={tmp_path / 'r'}"]
    with pytest.raises(ValueError, match=r"config: unknown key 'steps_' \(known keys: "):
        train(config(*base, "++steps_=3"))
    assert not (tmp_path / "r" / "latest.pth").exists()


def test_a_second_training_in_one_run_dir_is_refused(tiny_store, tmp_path):
    """Two trainings in one run directory overwrote each other's checkpoints."""
    from screamcast.file_lock import FileLock

    run = tmp_path / "r"
    run.mkdir()
    holder = FileLock(run / ".lock", "test").acquire()  # another open file: a real conflict
    try:
        with pytest.raises(Exception, match=f"run directory {run} is in use by another process"):
            train(config("experiment=pytest", f"data.url={tiny_store}", f"run_dir={run}"))
        assert not (run / "config.yaml").exists()
    finally:
        holder.release()
    train(config("experiment=pytest", f"data.url={tiny_store}", f"run_dir={run}"))


def test_a_resumed_run_logs_each_step_once(tmp_path):
    """A run killed after its last checkpoint had logged the steps that the resumed run logs
    again: metrics.csv gained duplicate rows."""
    from screamcast.train.metrics_log import MetricsLog

    path = tmp_path / "metrics.csv"
    log = MetricsLog(path, enabled=True)
    for step in range(1, 8):  # checkpoint at 4, killed after logging 7
        log.write({"step": step, "samples": 2 * step, "lr": 0.1, "train_loss": 1.0 / step})
    resumed = MetricsLog(path, enabled=True, resumed_at=4)
    for step in range(5, 9):
        resumed.write({"step": step, "samples": 2 * step, "lr": 0.1, "train_loss": 0.5})
    assert [int(r["step"]) for r in rows(tmp_path)] == list(range(1, 9))


@pytest.mark.parametrize("world", [1, 2, 3])
def test_step_batches_split_each_global_batch_across_ranks(world):
    """The loop's sampler: step s takes samples s*G .. s*G+G-1, shared out without overlap
    among the ranks; a run resumed at step r draws what the uninterrupted run drew from r on."""
    G = 6
    per_rank = [list(StepBatches(0, 5, G, rank, world)) for rank in range(world)]
    for step in range(5):
        union = sorted(i for rank in range(world) for i in per_rank[rank][step])
        assert union == list(range(step * G, (step + 1) * G))
        assert all(len(per_rank[rank][step]) == G // world for rank in range(world))
    resumed = list(StepBatches(3, 5, G, world - 1, world))
    assert resumed == per_rank[world - 1][3:] and len(StepBatches(3, 5, G, 0, world)) == 2


def test_without_a_progress_bar_it_logs_lines_and_a_summary(tiny_store, tmp_path, capsys):
    over = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={tmp_path / 'r'}"]
    train(config(*over, "progress=false", "log_every=2", "steps=4", "keep_every=0"))
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in lines][:2] == ["2/4", "3/4"]  # log_every and valid_every
    assert "train_loss" in lines[0] and "images/s" in lines[0]
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("trained steps 1-4 of 4 in ") and "best validation loss" in summary
    assert f"checkpoints in {tmp_path / 'r'}" in summary


def test_a_model_without_insolation_trains_and_rolls_out(tiny_store, tmp_path):
    """``data.insolation=false`` (a world without a sun, such as the Held-Suarez dycore): no
    forcing channels in training or in the rollout; the checkpoint says so."""
    from screamcast.checkpoint_format import load_for_inference
    from screamcast.model.pipeline import input_channels
    from tests.rollout.test_run_nudged import args, cli

    over = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={tmp_path / 'r'}"]
    run = train(config(*over, "data.insolation=false", "data.solar_time=false", "steps=2"))
    desc = load_for_inference(run / "latest.pth").description
    assert desc.inputs["insolation"] is False
    first = cio.load_checkpoint(run / "latest.pth")["model"]["net.stem.weight"]
    want = input_channels(5, 2, False, True, insolation=False)
    assert first.shape[1] == want == input_channels(5, 2, False, True) - 2
    assert cli.main(args(run / "latest.pth", tiny_store, tmp_path / "o.zarr", steps=2)) == 0
    with pytest.raises(Exception, match="data.solar_time needs data.insolation"):
        train(
            config(
                *over,
                "data.insolation=false",
                "data.solar_time=true",
                "steps=1",
                f"run_dir={tmp_path / 'r2'}",
            )
        )


def test_a_collapsed_network_is_warned_about(tiny_store, tmp_path, capsys):
    """The no-change predictor's validation loss is logged beside the model's; a network that
    does not beat it (here: a learning rate of zero, so it keeps its random initial output,
    worse than no change) is warned about from the second validation on."""
    over = ["experiment=pytest", f"data.url={tiny_store}", f"run_dir={tmp_path / 'r'}"]
    run = train(config(*over, "optim.lr=0.0", "steps=6", "valid_every=2", "log_every=2"))
    valid = [r for r in rows(run) if r["valid_loss"]]
    assert len(valid) == 3
    ratios = [float(r["valid_loss"]) / float(r["valid_loss_no_change"]) for r in valid]
    assert min(ratios) >= 0.97, ratios
    warned = [line for line in capsys.readouterr().out.splitlines() if "learnt nothing" in line]
    assert [w.split(":")[1].strip() for w in warned] == ["step 4", "step 6"]


def test_the_no_change_loss_is_the_loss_of_predicting_no_change(tiny_store):
    """Checked against the model's own loss path with a network that outputs zeros."""
    import torch

    from screamcast.data.stats import Stats
    from screamcast.model.pipeline import build_pipeline
    from screamcast.train.loss import no_change_loss, rollout_loss

    cfg = config("experiment=pytest", f"data.url={tiny_store}")
    from screamcast.data.store import open_configured

    open_configured(cfg.data)
    names = [*cfg.data.prognostic, *cfg.data.diagnostic, *cfg.data.static]
    stats = Stats({v: 0.5 for v in names}, {v: 2.0 for v in names}, {v: 0.25 for v in names})
    pipeline = build_pipeline(cfg, stats)
    for p in pipeline.net.parameters():
        torch.nn.init.zeros_(p)  # normalised output 0: no change, diagnostics at their mean
    g = torch.Generator().manual_seed(0)
    S, C, D = 8, len(cfg.data.prognostic), len(cfg.data.diagnostic)
    batch = CropBatch(
        state=torch.randn(2, C, S, S, generator=g),
        target=torch.randn(2, 1, C + D, S, S, generator=g),
        forcing=torch.zeros(2, 2, 3, S, S),  # (B, k + 1, Fc, S, S): solar time on
        static=torch.zeros(2, 2 + 8, S, S),
        area=torch.ones(2, S, S),
        time=torch.zeros(2, dtype=torch.long),
    )
    times = np.datetime64("2020-01-01") + np.arange(2) * np.timedelta64(6, "h")
    loss, _ = rollout_loss(pipeline, batch, times, 0)
    torch.testing.assert_close(no_change_loss(pipeline, batch), loss)


def test_ctrl_c_saves_a_resumable_checkpoint_and_says_how_to_resume(tiny_store, tmp_path):
    """SIGINT (Ctrl-C) as SIGTERM: latest.pth at the step it stopped, exit 130 (a stopped
    run, not a finished one: a job script's `&&` must not start the next stage), no
    traceback, and a line saying the same command resumes."""
    cut = tmp_path / "cut"
    steps = ["steps=40", "checkpoint_every=100", "keep_every=0", "valid_every=50"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen(_cli(tiny_store, cut, *steps), env=ENV, **pipes)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (cut / "metrics.csv").exists() and len(rows(cut)) >= 2:
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=120)
    text = (out + err).decode()
    assert proc.returncode == 130, text[-2000:]
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert "(SIGINT): saved" in text and "resume with the same command" in text
    assert 2 <= cio.load_checkpoint(cut / "latest.pth")["step"] < 40


def test_a_second_ctrl_c_interrupts_at_once():
    from screamcast.train.run_state import PreemptionFlag

    with PreemptionFlag() as flag:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
        assert flag.should_stop() and flag.signum == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)


def test_a_production_stage_on_the_demo_store_says_so(tiny_store):
    from types import SimpleNamespace

    from screamcast.train.stage_notes import demo_store_note

    demo = SimpleNamespace(attrs={"title": "screamcast analytic flows (exact truth)"})
    cfg = SimpleNamespace(steps=150_000, data=SimpleNamespace(url="demo_data/demo.zarr"))
    note = demo_store_note(cfg, demo)
    assert "analytic demo store" in note and "150000 steps" in note and "\n" not in note
    assert demo_store_note(SimpleNamespace(steps=1600, data=cfg.data), demo) is None
    assert demo_store_note(cfg, SimpleNamespace(attrs={"title": "E3SM"})) is None


def test_device_crops_train_as_the_cpu_crops(tiny_store, tmp_path, capsys):
    """``data.device_crops``: the loader's workers read windows of regions, the crops are cut
    in the training process; the losses are the CPU crops', step by step, and a resumed run
    picks up inside a window (6 steps of 2 crops, windows of 2 x 4)."""
    regions = ["data.in_memory=false", "data.region_stride=5", "data.region_crops=4",
               "data.shuffle_regions=2", "data.num_workers=1"]  # fmt: skip
    base = ["experiment=pytest", f"data.url={tiny_store}", *regions]
    losses = {}
    for device in ("false", "true"):
        run = train(config(*base, f"data.device_crops={device}", f"run_dir={tmp_path / device}"))
        losses[device] = [float(r["train_loss"]) for r in rows(run)]
    assert "device crops: workers read regions, crops cut on cpu" in capsys.readouterr().out
    np.testing.assert_allclose(losses["true"], losses["false"], rtol=1e-5)
    assert len(losses["true"]) == 6 and len(set(losses["true"])) == 6
    resumed = tmp_path / "resumed"
    train(config(*base, "data.device_crops=true", "steps=3", f"run_dir={resumed}"))
    train(config(*base, "data.device_crops=true", f"run_dir={resumed}"))
    again = [float(r["train_loss"]) for r in rows(resumed)]
    np.testing.assert_allclose(again, losses["true"], rtol=1e-5)


def test_device_crops_without_regions_say_so_and_cut_on_the_cpu(tiny_store, tmp_path, capsys):
    over = ["experiment=pytest", f"data.url={tiny_store}", "data.device_crops=true", "steps=2"]
    train(config(*over, f"run_dir={tmp_path / 'r'}"))
    assert "data.device_crops cuts crops of regions read lazily" in capsys.readouterr().out


def test_two_ranks_both_refuse_a_non_finite_training_store(tiny_store, tmp_path):
    """Rank 0 alone computes the statistics: its refusal of a NaN reaches rank 1, which
    waited for the numbers (it hung until the process group timed out)."""
    import shutil

    import zarr

    store = tmp_path / "nan.zarr"
    shutil.copytree(tiny_store, store)
    zarr.open_group(store, mode="r+")["u"][4, 1, 2, 3] = float("nan")
    extra = ["devices=2", "strategy=ddp", "accelerator=cpu", "steps=2"]
    try:
        out = subprocess.run(
            _cli(store, tmp_path / "run", *extra), capture_output=True, timeout=240, text=True
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"a rank hung: {err}")
    assert out.returncode != 0
    said = "non-finite value in 'u' at time index 4 (2020-01-01 12:00:00), face 1, face pixel"
    assert out.stderr.count(said) >= 2, out.stderr[-3000:]  # once from each rank
