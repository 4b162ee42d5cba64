#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The README's first command: install into ./.venv and run the main job, the nudged rollout on
# the embedded demo. On a fresh checkout it builds the analytic demo store (~45 s) and trains
# the demo model (~2.5 min on 2 idle CPU cores, up to ~12 on a busy one) first; later runs
# reuse both.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/bootstrap.sh base
# --demo: any flags given (e.g. --guard warn, --steps 4) go to the demo's rollout
python scripts/ace/run_screamcast_nudged.py --demo "$@"
