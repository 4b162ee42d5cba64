# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How far a nudged state sits from what it is nudged toward, at the reference's scales.

Needs no truth: a nudged rollout past the end of the data is scored against its reference.
"""

from __future__ import annotations

import numpy as np


class ReferenceMisfit:
    """Per step and nudged variable, the corrector's ``misfit(fields, time)`` (its own
    projection of the state against its reference): ``reference_rmse``."""

    per_step = True

    def __init__(self, corrector, times: np.ndarray):
        self.corrector, self.variables = corrector, list(corrector.variables)
        self.rmse = np.full((len(self.variables), len(times)), np.nan)

    def record(self, step: int, time, fields: np.ndarray) -> None:
        self.rmse[:, step] = self.corrector.misfit(fields, time)

    def summary(self) -> dict:
        return {v: {"reference_rmse": self.rmse[i].tolist()} for i, v in enumerate(self.variables)}
