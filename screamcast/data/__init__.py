# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Cubed-sphere stores (local or S3), the analytic demo data, statistics, forcing, samples."""
