# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Train one stage: ``python scripts/train.py experiment=<stage> run_dir=<dir> [init_from=...]``
(:mod:`screamcast.cli.train`, also ``screamcast-train``).

A run dir that already holds checkpoints is resumed; ``init_from`` loads weights only.
"""

import sys

from screamcast.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
