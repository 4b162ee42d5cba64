# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The prepared GPU check runs on CPU too (small sizes); no timing is asserted."""

from benchmarks import gpu_check


def test_gpu_check_runs_on_cpu(tmp_path):
    out = tmp_path / "r.json"
    argv = ["--device", "cpu", "--n", "16", "--tile", "8", "--halo", "4", "--width", "8",
            "--batch", "2", "--steps", "1", "--out", str(out)]  # fmt: skip
    report = gpu_check.main(argv)
    assert report["device"] == "cpu" and report["train"]["images_per_s"] > 0
    assert report["rollout"][0]["tiles"] == 24 and report["flops_per_tile_forward"] > 0
    assert report["projection"]["tiles"] == 1536 and report["projection"]["projected_step_s"] > 0
    assert out.exists()
