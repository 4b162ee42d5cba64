#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The prepared GPU check (also runs on CPU): training-step and rollout-step throughput in bf16
# with channels_last on CUDA, and the rollout scaling. Writes $OUT/gpu_check.json if OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m benchmarks.gpu_check --scaling --out "${OUT:-.}/gpu_check.json" "$@"
