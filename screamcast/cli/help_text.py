# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A module docstring as a command's ``--help`` text: its reST markup (``code``,
:mod:`name`) shown plainly, as a terminal reader wants it."""

from __future__ import annotations

import re

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(doc: str | None) -> str:
    """``doc`` without reST roles and double backquotes: ``:mod:`a.b``` -> ``a.b``."""
    return _ROLE.sub(r"\1", doc or "").replace("``", "`")
