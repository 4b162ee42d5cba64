# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Several aggregators fed the same steps, and their step table written as csv and json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from screamcast.data.channels import each_step
from screamcast.evaluation.rmse import RmseBias


class Scores:
    """The aggregators of one rollout (itself an aggregator: the rollout is handed this)."""

    per_step = True

    def __init__(self, aggregators: list, variables: list[str], times: np.ndarray, units=None):
        """``units``: ``{variable: units}`` of the scored channels (the store's attrs), so
        the written tables say what an RMSE is in ("" where unknown)."""
        self.aggregators, self.variables, self.times = list(aggregators), list(variables), times
        self.units = {v: (units or {}).get(v, "") for v in self.variables}

    def record(self, step: int, time, fields: np.ndarray) -> None:
        for aggregator in self.aggregators:
            aggregator.record(step, time, fields)

    def record_output(self, output: xr.Dataset, steps: range) -> None:
        """Score ``steps`` of a written output, one step in memory at a time."""
        for k, fields in each_step(output, self.variables, steps):
            self.record(k, self.times[k], fields)

    def find(self, kind: type):
        """The first aggregator of ``kind``, or None."""
        return next((a for a in self.aggregators if isinstance(a, kind)), None)

    def summary(self) -> dict:
        """``{variable: {score: [value per step]}}`` of every per-step aggregator, in order."""
        table: dict[str, dict] = {v: {} for v in self.variables}
        for aggregator in self.aggregators:
            if aggregator.per_step:
                for v, scores in aggregator.summary().items():
                    table[v].update(scores)
        return table

    def write(self, base: str | Path, figures: bool = True) -> dict:
        """``<base>_metrics.csv`` / ``.json`` and, once the last step is scored against a
        truth, ``<base>_last_step.png`` (prediction, truth and error of each variable, up to
        :data:`~screamcast.evaluation.panel_grid.LAST_STEP_VARIABLES`).
        Each variable's units: the csv's last column, a ``units`` field in the json (the
        returned table holds the scores only)."""
        table = self.summary()
        columns = list(dict.fromkeys(c for v in table for c in table[v]))
        with open(f"{base}_metrics.csv", "w") as f:
            f.write(",".join(["step", "time", "variable", *columns, "units"]) + "\n")
            for v in table:
                nan = [np.nan] * len(self.times)
                scores = [table[v].get(c, nan) for c in columns]
                f.writelines(
                    f"{k},{self.times[k]},{v},"
                    + ",".join([*(f"{s[k]:.6g}" for s in scores), _csv(self.units[v])])
                    + "\n"
                    for k in range(len(self.times))
                )
        with_units = {v: {**scores, "units": self.units[v]} for v, scores in table.items()}
        Path(f"{base}_metrics.json").write_text(json.dumps(with_units, indent=1))
        rmse = self.find(RmseBias)
        if figures and rmse is not None and rmse.last is not None:
            from screamcast.evaluation.last_step import plot_last_step

            drawn = self.variables[: len(rmse.last[0])]
            path = f"{base}_last_step.png"
            plot_last_step(path, *rmse.last, drawn, self.units, of=len(self.variables))
        return table


def _csv(text: str) -> str:
    """A csv cell: quoted when it holds a comma or a quote (``kg m-2, wet``)."""
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"') else text
