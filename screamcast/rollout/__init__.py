# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The global rollout: one step over all tiles, nudging, and the streaming output store."""
