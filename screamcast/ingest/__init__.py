# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""From E3SM/SCREAM history files to a training store: ``python -m screamcast.ingest``.

``ingest`` and ``IngestOptions`` are imported on first use (PEP 562), so the command line can
answer ``--help`` or a bad flag before xarray and Dask are imported.
"""

from screamcast.ingest.errors import IngestError

__all__ = ["IngestError", "IngestOptions", "ingest"]


def __getattr__(name: str):
    if name in ("IngestOptions", "ingest"):
        from screamcast.ingest import run

        return getattr(run, name)
    raise AttributeError(f"module 'screamcast.ingest' has no attribute {name!r}")
