#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The prepared GPU check (also runs on CPU): training-step and rollout-step throughput in bf16
# with channels_last on CUDA, the rollout scaling, the global-step training, the overlapped
# exchange and the device crops. Prints JSON; also writes $OUT/gpu_check.json when OUT is set
# (as on a lent device machine). It imports only torch, numpy, scikit-learn and xarray (no
# zarr, s3fs or Hydra; a test keeps it so), which a lent H200's image has, so it runs from a
# bare checkout there: no install, nothing to carry. The device crops read a zarr store: where
# zarr is missing that stage reports itself skipped (pip install zarr first to time it).
# PYTHON: the interpreter (default python3, the one with CUDA torch on those machines).
set -euo pipefail
cd "$(dirname "$0")/.."
out=()
if [ -n "${OUT:-}" ]; then
  out=(--out "$OUT/gpu_check.json")
fi
"${PYTHON:-python3}" -m benchmarks.gpu_check --scaling "${out[@]}" "$@"
