# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The prepared GPU check runs on CPU too (small sizes); no timing is asserted."""

import pytest

from benchmarks import gpu_check


@pytest.mark.parametrize("precision", ["auto", "bf16"])
def test_gpu_check_runs_on_cpu(tmp_path, precision):
    """``bf16`` runs the CUDA configuration (autocast, channels_last) on CPU."""
    out = tmp_path / "r.json"
    argv = ["--device", "cpu", "--n", "16", "--tile", "8", "--halo", "4", "--width", "8",
            "--batch", "2", "--steps", "1", "--precision", precision,
            "--out", str(out)]  # fmt: skip
    report = gpu_check.main(argv)
    want = "fp32" if precision == "auto" else "bf16 autocast, channels_last"
    assert report["device"] == "cpu" and report["precision"] == want
    assert report["train"]["images_per_s"] > 0
    assert report["rollout"][0]["tiles"] == 24 and report["flops_per_tile_forward"] > 0
    assert report["projection"]["tiles"] == 1536 and report["projection"]["projected_step_s"] > 0
    assert out.exists()
