#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The README's first command: install into ./.venv and run what the package does today on the
# embedded demo (~4 minutes on 2 CPU cores): the grid/halo checks, the analytic demo store, a
# demo model trained (or resumed) in runs/demo, and its held-out skill against persistence.
# The nudged rollout (scripts/ace/run_screamcast_nudged.py) replaces this when it lands.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/bootstrap.sh
python -m screamcast.grid
if [ ! -d demo_data/demo.zarr ]; then
  python -m screamcast.data.synthetic demo_data/demo.zarr --reference demo_data/reference.zarr
fi
python scripts/train.py experiment=demo run_dir=runs/demo
python -m screamcast.train.skill experiment=demo run_dir=runs/demo data.valid_samples=64
