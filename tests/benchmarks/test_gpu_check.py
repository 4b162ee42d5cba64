# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The prepared GPU check runs on CPU too (small sizes); no timing is asserted."""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import gpu_check


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_gpu_check_runs_on_cpu(tmp_path, precision, monkeypatch):
    """``bf16`` runs the CUDA configuration (autocast, NHWC training) on CPU; ``--record``
    saves the report with its provenance and generates the doc's tables from it."""
    import json

    import benchmarks.harness as harness
    import benchmarks.scaling_doc as scaling_doc

    doc = tmp_path / "performance.md"
    doc.write_text(f"# P\n\nIntro.\n\n{scaling_doc.BEGIN}\nstale figures\n{scaling_doc.END}\n")
    for module in (harness, scaling_doc):
        monkeypatch.setattr(module, "RESULTS", tmp_path / "results")
        monkeypatch.setattr(module, "PERF_DOC", doc)
    out = tmp_path / "r.json"
    argv = [
        "--device",
        "cpu",
        "--n",
        "16",
        "--tile",
        "8",
        "--halo",
        "4",
        "--width",
        "8",
        "--batch",
        "2",
        "--steps",
        "1",
        "--precision",
        precision,
        "--production",
        "32",
        "8",
        "4",
        "--global-n",
        "16",
        "8",
        "4",
        "--exchange-n",
        "16",
        "8",
        "4",
        "--out",
        str(out),
        "--record",
    ] + ["--no-crops"] * (precision == "bf16")  # the device crops once: a 30 s store
    report = gpu_check.main(argv)
    if precision == "fp32":  # the loader's worker and the device, per crop
        crops = report["device_crops"]
        assert crops["loader_cpu_ms_per_crop"] > 0 and crops["device_ms_per_crop"] > 0
    else:
        assert "device_crops" not in report
    runs = [(r["k"], r["checkpointing"]) for r in report["train_global"]]
    assert runs == [(4, True), (4, False), (8, True), (8, False)]
    assert all(r["step_s"] > 0 and r["n"] == 16 for r in report["train_global"])
    exchange = report["exchange"]  # 4 ranks, half of 3 faces each, over gloo
    assert exchange["ranks"] == 4 and exchange["backend"] == "gloo"
    for how in ("hidden", "waited"):
        assert exchange[how]["max_abs_diff_from_one_rank"] == 0.0, how  # bit for bit on a CPU
        assert exchange[how]["step_s"] > 0
        assert exchange[how]["forward_s"] > 0
    assert (
        report["rollout_whole_faces"]["tile"] == 16 and report["rollout_whole_faces"]["tiles"] == 6
    )
    saved = json.loads((tmp_path / "results" / "gpu_check_cpu.json").read_text())
    assert saved["report"] == json.loads(out.read_text()) and saved["machine"]["cores"] >= 1
    text = doc.read_text()
    assert "stale figures" not in text and "Intro." in text
    assert "| 16 | 16 | 6k |" in text and f"commit {saved['machine']['commit']}" in text
    bf16 = precision == "bf16"
    assert report["device"] == "cpu"
    assert report["precision"] == ("bf16 autocast" if bf16 else "fp32")
    train = report["train"]
    assert train["images_per_s"] > 0
    assert train["memory_format"] == ("channels_last" if bf16 else "contiguous")
    roll = report["rollout"][0]
    assert roll["tiles"] == 24 and roll["tile_pixels"] == 24 * 16 * 16
    assert 0 < roll["memory"]["before_mb"] <= roll["memory"]["peak_mb"]
    phases = roll["phases_s"]
    assert (
        set(phases) == {"gather", "insolation", "predict_tiles", "forwards", "adjoint", "to_host"}
        and min(phases.values()) > 0
    )
    proj = report["projection"]
    assert (proj["tiles"], proj["tile_size"]) == (96, 16) and proj["projected_step_s"] > 0
    assert proj["flops_per_step"] == 96 * proj["flops_per_tile_forward"]
    assert proj["tile_forward"]["tiles_per_s"] > 0 and proj["tile_forward"]["batch"] == 2
    assert out.exists()


def test_flops_are_counted_on_the_meta_device_as_on_cpu():
    pipeline = gpu_check.make_pipeline(8, 2)
    x = [torch.zeros(1, c, 32, 32) for c in (5, 2, 5)]
    with FlopCounterMode(display=False) as counter:
        pipeline(*x)
    assert gpu_check.tile_flops(pipeline, 32) == counter.get_total_flops() > 1e6
    assert next(pipeline.parameters()).device.type == "cpu"  # the pipeline did not move


def test_peak_memory_on_cpu_is_of_the_block_only():
    """The high-water mark is reset on entry, so an earlier, larger peak does not count."""
    big = torch.ones(100 * 2**20)  # 400 MB touched, then freed
    del big
    with gpu_check.peak_memory(torch.device("cpu")) as mem:
        small = torch.ones(25 * 2**20)  # 100 MB
        del small
    grew = mem["peak_mb"] - mem["before_mb"]
    assert 90 < grew < 300, mem


def test_projection_uses_the_forward_rate_of_production_tiles(monkeypatch):
    rate = {"tile": 16, "batch": 2, "batch_s": 1.0, "tiles_per_s": 2.0, "memory": {}}
    monkeypatch.setattr(gpu_check, "tile_forward_rate", lambda *args: rate)
    rollout = [{"tiles": 24, "tile": 8, "halo": 4, "step_s": 0.5}]
    a = argparse.Namespace(production=[32, 8, 4], production_batch=None, steps=1, precision="fp32")
    pipeline = gpu_check.make_pipeline(8, 2)
    proj = gpu_check.project(pipeline, torch.device("cpu"), rollout, a)
    flops = gpu_check.tile_flops(pipeline, 16)
    assert proj["projected_step_s"] == 96 / 2.0 and proj["achieved_flops_per_s"] == 2.0 * flops
    np.testing.assert_allclose(
        proj["projected_step_s_from_rollout_flops"], 96 * flops / (24 * flops / 0.5), rtol=1e-12
    )


BLOCKER = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"zarr", "numcodecs", "s3fs", "hydra", "omegaconf", "lightning"}:
            raise ImportError("not on a lent GPU machine: " + name)
sys.meta_path.insert(0, Blocker())
from benchmarks import gpu_check
gpu_check.main(["--device", "cpu", "--n", "16", "--tile", "8", "--halo", "4", "--width", "8",
                "--batch", "2", "--steps", "1", "--production", "32", "8", "4"])
"""


def test_gpu_check_needs_nothing_a_lent_gpu_machine_lacks():
    """The H200 image has torch, numpy, scikit-learn and xarray but no zarr, s3fs, Hydra or
    Lightning: the check must run there from a bare checkout."""
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", BLOCKER], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert '"projected_step_s"' in run.stdout
    assert "(pip install zarr): the device crops read a store" in run.stdout  # skipped
