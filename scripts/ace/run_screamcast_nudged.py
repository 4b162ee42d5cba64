# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The global nudged rollout of a screamcast checkpoint: ``screamcast-rollout`` by its
established path (:mod:`screamcast.cli.rollout`; ``--help`` lists the flags).

With no arguments it runs the embedded demo. Several ranks:
``torchrun --nproc-per-node 2 -- scripts/ace/run_screamcast_nudged.py ...``.
"""

from __future__ import annotations

import sys

from screamcast.cli.rollout import main, parse

__all__ = ["main", "parse"]

if __name__ == "__main__":
    sys.exit(main())
