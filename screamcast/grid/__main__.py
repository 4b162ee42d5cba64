# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.grid``: :mod:`screamcast.cli.grid`."""

from screamcast.cli.grid import main

main()
