#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# From a SCREAM run to a trained model and a scored rollout, on synthetic EAMxx history files
# (docs/data.md, "From a SCREAM run to a trained model"). Every command is the one a user runs
# on real files; only the first line (making the files) is the demo's. Usage:
#   bash scripts/scream_pipeline.sh [WORKDIR]     (default: scream_example/)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-scream_example}"
mkdir -p "$work"

# 1. history files: 12 EAMxx files of 4 six-hourly times on ne8pg2 (n = 16), 8 levels
python scripts/make_history_files.py "$work/history" --layout eamxx --files 12 --ne 8

# 2. ingest: 4 layers of equal pressure thickness, blocks of 8 times on a local Dask cluster
python -m screamcast.ingest "$work/history/*.nc" --output "$work/scream.zarr" --layers 4 \
  --block 8 --workers 2 --no-progress

# 3. train (the pytest experiment's sizes; the store's own statistics)
python scripts/train.py experiment=pytest data.url="$work/scream.zarr" \
  "data.prognostic=[T_mid,u,v,qv,ps]" "data.diagnostic=[]" "data.static=[]" \
  data.train_range=[0,-8] data.valid_range=[-8,0] data.stats_from_store=true \
  steps=20 run_dir="$work/run"

# 4. roll out the last 8 steps, nudging the lower two layers of T_mid toward the store
start=$(python -c "import xarray as xr; from screamcast.data.calendar import DECODER; \
t = xr.open_zarr('$work/scream.zarr', consolidated=False, decode_times=DECODER).time.values; \
print(t[-9].strftime('%Y-%m-%dT%H:%M'))")
python scripts/ace/run_screamcast_nudged.py --checkpoint "$work/run/best.pth" \
  --data "$work/scream.zarr" --reference "$work/scream.zarr" --nudge-vars "T_mid[2:]" \
  --start "$start" --steps 8 --output "$work/rollout.zarr" --no-progress

# 5. evaluate: metrics, drift, bias maps, spectra and report.md
python -m screamcast.evaluate "$work/rollout.zarr" --truth "$work/scream.zarr" \
  --report "$work/report"
