# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's one error type for bad input (its own module: the planning modules raise
it and import each other)."""

from __future__ import annotations

from screamcast.config.strict import ConfigError


class RolloutError(ConfigError):
    """Bad input to a rollout, found before any step ran (or a state that turned non-finite).
    ``{section.key}`` placeholders name the settings concerned (:class:`ConfigError`)."""
