# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The nudging's error: a reference or setting that cannot be nudged toward."""


class NudgingError(ValueError):
    pass
