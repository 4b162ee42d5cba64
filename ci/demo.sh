#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The README's first command: install into ./.venv and run the package's main job. Until the
# nudged rollout lands (scripts/ace/run_screamcast_nudged.py), that is the grid + halo check.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/bootstrap.sh
python -m screamcast.grid "$@"
