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
python -m pytest "$@"
