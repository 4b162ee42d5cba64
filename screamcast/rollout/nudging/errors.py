# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudging's errors: a reference or setting that cannot be nudged toward."""

from screamcast.config.strict import ConfigError


class NudgingError(ValueError):
    pass


class NudgingConfigError(ConfigError, NudgingError):
    """A nudging setting refused: its message names the ``{nudging.KEY}`` it came from, so a
    command line names its flag instead."""
