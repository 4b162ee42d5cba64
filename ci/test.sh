#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# The project's test command (README.md). Installs what it needs into ./.venv, then runs the
# lint, licence and test checks. Extra arguments go to pytest (e.g. `-m "not slow"`).
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/bootstrap.sh dev

python ci/check_licenses.py
ruff check .
ruff format --check .
if [ -d .git ]; then
  pre-commit run --all-files --show-diff-on-failure
fi
# One pytest worker per core, up to 4 (pytest-xdist, in the dev extra): on the 2-core CI
# machine the suite's subprocess and S3 tests wait on each other less (README.md).
# Each worker builds its own session fixtures; `-n 0` (after the others) runs in one process.
workers=$(python -c "import os; print(min(4, len(os.sched_getaffinity(0))))")
python -m pytest -n "$workers" "$@"
