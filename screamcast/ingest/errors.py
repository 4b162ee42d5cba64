# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The one error the ingestion raises for input it cannot take (the CLI prints it, exit 2)."""

from __future__ import annotations


class IngestError(ValueError):
    """Input the ingestion cannot take, named in the message."""
