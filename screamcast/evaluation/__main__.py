# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``python -m screamcast.evaluation``: :mod:`screamcast.cli.evaluate`."""

import sys

from screamcast.cli.evaluate import main

sys.exit(main())
