# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A missing local input named before a command imports torch or xarray: a mistyped path
is the commonest first mistake, and it had waited 5-10 s for the imports (benchmarks/
first_word.py)."""

from __future__ import annotations

from pathlib import Path


def first_missing(named: dict[str, str | None]) -> str | None:
    """``"NAME PATH does not exist"`` for the first local path of ``named`` (name -> path;
    None and ``s3://`` URLs skipped: the stores' own checks word those) that is absent."""
    for name, path in named.items():
        if path and "://" not in str(path) and not Path(path).exists():
            return f"{name} {path} does not exist"
    return None
