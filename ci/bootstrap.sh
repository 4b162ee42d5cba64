# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
#
# Sourced by ci/test.sh and ci/demo.sh: make ./.venv (or reuse an active/existing one) and
# install the package. A CPU torch (2.13.0) is installed first when no torch is present, so pip
# never pulls a multi-GB CUDA build onto a machine that has no GPU; GPU containers keep theirs.
# Usage: source ci/bootstrap.sh base|dev. The argument is required: sourced without one, the
# script would see the caller's own $1 (`bash ci/demo.sh --help` made pip parse ".[--help]").
case "${1:-}" in
  base) extra="" ;;
  dev) extra="dev" ;;
  *) echo "usage: source ci/bootstrap.sh base|dev (got '${1:-}')" >&2; return 2 ;;
esac
if [ -z "${VIRTUAL_ENV:-}" ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  # shellcheck disable=SC1091
  source .venv/bin/activate
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q "torch==2.13.0"
fi
spec="."
[ -n "$extra" ] && spec=".[$extra]"
# Skip the resolver when this exact checkout is already installed (fast re-runs).
stamp="$VIRTUAL_ENV/.screamcast-$(sha1sum pyproject.toml | cut -c1-12)-${extra:-base}"
[ -z "$extra" ] && [ -f "${stamp%-base}-dev" ] && stamp="${stamp%-base}-dev"  # dev has base
if [ ! -f "$stamp" ] || ! python -c "import screamcast, sys; sys.exit(not screamcast.__file__.startswith('$PWD/'))" >/dev/null 2>&1; then
  python -m pip install -q -e "$spec"
  touch "$stamp"
fi
