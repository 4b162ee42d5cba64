# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A toy metric plug-in (the test of "a new metric is one file and one config entry"): the
largest absolute error per variable and step."""

import numpy as np

from screamcast.evaluation.registry import register_metric


class MaxAbsError:
    per_step = True

    def __init__(self, truth, grid, area):
        self.truth, self.variables = truth, truth.variables
        self.value = np.full((len(self.variables), len(truth.times)), np.nan)

    def record(self, step: int, time, fields: np.ndarray) -> None:
        error = self.truth.on_truth_grid(fields) - self.truth.at(step)  # (V, F, a, b)
        self.value[:, step] = np.abs(error).reshape(len(self.variables), -1).max(axis=1)

    def summary(self) -> dict:
        return {v: {"max_abs_error": self.value[i].tolist()} for i, v in enumerate(self.variables)}


register_metric("max_abs_error")(MaxAbsError)
