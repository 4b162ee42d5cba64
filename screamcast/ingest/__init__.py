# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""From E3SM/SCREAM history files to a training store: ``python -m screamcast.ingest``."""

from screamcast.ingest.errors import IngestError
from screamcast.ingest.run import IngestOptions, ingest

__all__ = ["IngestError", "IngestOptions", "ingest"]
