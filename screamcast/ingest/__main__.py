# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.ingest``: :mod:`screamcast.cli.ingest`."""

import sys

from screamcast.cli.ingest import main

sys.exit(main())
