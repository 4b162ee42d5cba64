# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The scores a rollout streams while it runs: what the command line hands the rollout.

Against the truth when the initial-condition store holds every output time (RMSE, bias,
persistence, drift, seams and the tile imprint, and the anomaly correlation with a
climatology); against the nudging reference whenever the rollout is nudged.
"""

from __future__ import annotations

import math

from screamcast.evaluation.aggregator import TruthSource
from screamcast.evaluation.anomaly_correlation import AnomalyCorrelation
from screamcast.evaluation.drift import GlobalMeanDrift
from screamcast.evaluation.reference_misfit import ReferenceMisfit
from screamcast.evaluation.registry import metric_factory
from screamcast.evaluation.rmse import RmseBias
from screamcast.evaluation.scores import Scores
from screamcast.evaluation.seams import SeamSkill


def truth_aggregators(
    truth: TruthSource, area, grid, tile: int | None, climatology=None, metrics=()
) -> list:
    """The scores against a truth on the rollout's cube ``grid``, in the step table's order;
    ``metrics``: registered ones to add (:mod:`screamcast.evaluation.registry`)."""
    steps, variables = len(truth.times), truth.variables
    aggregators = [RmseBias(truth, area), GlobalMeanDrift(truth, area)]
    if tile:
        aggregators.append(SeamSkill(grid.n, int(tile), grid.area, variables, steps, truth))
    if climatology is not None:
        aggregators.append(AnomalyCorrelation(climatology, area, variables, steps, truth))
    return aggregators + [metric_factory(name)(truth, grid, area) for name in metrics]


def truth_gaps(table: dict, truth: str) -> list[str]:
    """One line per variable whose truth is not finite at some scored step (its scores there
    are NaN: said, not left for the reader to find in the table)."""
    lines = []
    for var, m in table.items():
        holes = [k for k, x in enumerate(m.get("truth_global_mean", [])) if not math.isfinite(x)]
        if holes:
            lines.append(
                f"note: {var}'s scores are NaN at {len(holes)} steps (from {holes[:5]}): the "
                f"truth in {truth} is not finite there"
            )
    return lines


def rollout_scores(plan, inputs) -> Scores | None:
    """For a :class:`~screamcast.rollout.plan.RolloutPlan` and the inputs it was checked on
    (:class:`~screamcast.rollout.plan.RolloutInputs`: the truth, the climatology, the
    nudging's reference); None when there is nothing to score against."""
    variables, times = plan.prog + plan.diag, plan.out_times
    truth = TruthSource.covering(inputs.data, variables, times)
    aggregators = []
    if truth is not None:
        tile = plan.layout().tile  # the rollout's tiles (--tile), where its seams are
        metrics = plan.config.scoring.metrics
        grid = plan.grid
        clim = inputs.climatology
        aggregators += truth_aggregators(truth, grid.area, grid, tile, clim, metrics)
    if inputs.corrector is not None:  # scored against the reference, with or without a truth
        aggregators.append(ReferenceMisfit(inputs.corrector, times))
    units = {v: a["units"] for v, a in plan.var_attrs.items() if a.get("units")}
    return Scores(aggregators, variables, times, units) if aggregators else None


def scored_rollout(config, source: str = "the config") -> tuple[dict, dict | None]:
    """Run the rollout of ``config`` (:class:`~screamcast.config.inference.InferenceConfig`)
    with the scores above streamed; write them beside the output (``<output>_metrics.csv`` /
    ``.json``, ``_last_step.png``). Returns the rollout's summary and the step table (None
    when there was nothing to score against)."""
    from screamcast.rollout.run import run_rollout

    summary = run_rollout(config, rollout_scores, source)
    scores = summary["scores"]
    if scores is None:
        return summary, None
    return summary, scores.write(str(config.output.path).removesuffix(".zarr"))
