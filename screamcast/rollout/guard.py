# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's guard: a run that leaves physics stops (or warns) at the step it leaves.

After every step, each channel's global mean, spread (the area-weighted standard deviation over
the globe) and extremes are compared with the training statistics the checkpoint carries
(each output's mean ``mu``, standard deviation ``sigma``, smallest ``lo`` and largest ``hi``
value over the training data):

- ``|global mean - mu| <= mean_sigmas * sigma``;
- ``spread <= spread_factor * sigma`` (a field gone flat is wrong, but not a blow-up: an
  untrained model's diagnostics sit at their mean);
- every value in ``[lo - extreme_margin * (hi - lo), hi + extreme_margin * (hi - lo)]``: each
  side follows the data's own extreme, so a skewed, sign-definite field (precipitation: a
  mean near 0, rare values 15 sigma above it) is bounded by what it did in training, not by a
  multiple of its small sigma, and is never let far below 0. A checkpoint whose statistics
  predate the extremes falls back to ``max |x - mu| <= extreme_sigmas * sigma``.

A non-finite value stops the run whatever ``action`` says (there is nothing to continue
from). The statistics of a part of the globe are reduced over the ranks (sums and maxima:
:mod:`screamcast.step.reduction`), so every rank decides alike and names the same channel.
Defaults and what they catch: docs/rollout.md (measured in docs/notes/2026-12-03-climate.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from screamcast.step.reduction import LOCAL, Reduction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trip:
    """Where and why a rollout left physics: what the output records as ``stopped``."""

    step: int
    time: str
    channel: str
    what: str  # non-finite value | global mean | spread | largest departure ...
    value: float
    bound: str

    def message(self, output) -> str:
        """What stopped the run, where its steps are and how to go on."""
        if self.what == "non-finite value":
            return (
                f"the state turned non-finite at step {self.step} ({self.time}) in "
                f"{self.channel}: stopped; {output} keeps the steps before it"
            )
        return (
            f"{self.finding()}; stopped, {output} keeps the steps before it. To run on past "
            "it, pass --guard warn (or set guard.action: warn in the inference config)"
        )

    def finding(self) -> str:
        return (
            f"the state left physics at step {self.step} ({self.time}): {self.channel}'s "
            f"{self.what} {self.value:.6g} is outside {self.bound}"
        )

    def record(self) -> dict:
        return {k: getattr(self, k) for k in ("step", "time", "channel", "what", "value", "bound")}


class Guard:
    """``check(y (V, *space), step, time) -> Trip | None`` on this rank's part ``(*space)``."""

    def __init__(
        self, names, mean, std, area: torch.Tensor, config, reduction=LOCAL, lo=None, hi=None
    ):
        self.names, self.config, self.reduction = list(names), config, reduction
        self.mean = torch.as_tensor(mean, dtype=torch.float64).flatten()  # (V,)
        self.std = torch.as_tensor(std, dtype=torch.float64).flatten()
        nan = torch.full_like(self.mean, float("nan"))  # NaN: no extreme recorded
        self.lo = nan if lo is None else torch.as_tensor(lo, dtype=torch.float64).flatten()
        self.hi = nan if hi is None else torch.as_tensor(hi, dtype=torch.float64).flatten()
        self.area = area.to(torch.float64)  # (*space)
        self.warned: set[tuple[str, str]] = set()

    @classmethod
    def from_stats(cls, names, stats: dict, area, config, reduction: Reduction = LOCAL) -> Guard:
        """Against the training statistics ``stats`` (``{"mean": {name: ..}, "std": ..,
        "min": .., "max": ..}``, a checkpoint description's) of the channels ``names``."""
        mean = [stats["mean"][v] for v in names]
        std = [stats["std"][v] for v in names]
        lo = [stats.get("min", {}).get(v, float("nan")) for v in names]
        hi = [stats.get("max", {}).get(v, float("nan")) for v in names]
        return cls(names, mean, std, torch.as_tensor(area), config, reduction, lo, hi)

    @staticmethod
    def bytes_per_step(channels: int) -> int:
        """What its reductions send per step from each rank: the area-weighted sums (2 per
        channel, and the area) and the extremes (2 per channel), in float64."""
        return (4 * channels + 1) * 8

    def moments(self, y: torch.Tensor):
        """Global ``(mean, spread, (smallest, largest))`` per channel, each ``(V,)``."""
        y = y.to(torch.float64)
        a = self.area
        flat = y.flatten(1)  # (V, cells)
        sums = torch.stack([(flat * a.flatten()).sum(1), (flat**2 * a.flatten()).sum(1)])
        sums = torch.cat([sums.flatten(), a.sum().view(1)])  # (2 V + 1,)
        self.reduction.sum_(sums)
        V = len(self.names)
        gmean, gsq = sums[:V] / sums[-1], sums[V : 2 * V] / sums[-1]
        extremes = torch.stack([flat.amax(1), -flat.amin(1)])  # (2, V)
        self.reduction.max_(extremes)
        return gmean, (gsq - gmean**2).clamp(min=0).sqrt(), (-extremes[1], extremes[0])

    def extreme_tests(self, smallest: torch.Tensor, largest: torch.Tensor) -> list:
        """``(what, value, broken, bound)`` for the values: the training range's rule where
        the extremes are recorded, else the sigma rule."""
        c, mu, sd = self.config, self.mean, self.std
        m = c.extreme_margin
        width = torch.maximum(self.hi - self.lo, sd)  # a constant channel: sigma (1)
        low, high = self.lo - m * width, self.hi + m * width
        ranged = torch.isfinite(low) & torch.isfinite(high)
        far = torch.maximum(largest - mu, mu - smallest)

        def in_range(i: int) -> str:
            return f"[{low[i]:.6g}, {high[i]:.6g}] (the training range +- {m:g} x its width)"

        def in_sigmas(i: int) -> str:
            return f"[0, {c.extreme_sigmas:g} x {sd[i]:.4g}]"

        outside_sigmas = ~ranged & (far > c.extreme_sigmas * sd)
        return [
            ("smallest value", smallest, ranged & (smallest < low), in_range),
            ("largest value", largest, ranged & (largest > high), in_range),
            ("largest departure from the training mean", far, outside_sigmas, in_sigmas),
        ]

    def check(self, y: torch.Tensor, step: int, time) -> Trip | None:
        """The first bound ``y`` breaks (channels in order), or None; warns once per channel
        and test under ``action: warn``, stops nothing itself (the caller raises). ``y`` on
        any device: checked on the guard's (a training free run's states are on the GPU)."""
        c = self.config
        y = y.to(self.area.device)
        bad = ~torch.isfinite(y).flatten(1).all(1)  # (V,)
        if self.reduction.any(bool(bad.any())):
            names = [self.names[i] for i in torch.nonzero(bad).flatten().tolist()]
            where = ", ".join(names) or "another rank's block"
            return Trip(step, str(time), where, "non-finite value", float("nan"), "finite numbers")
        if c.action == "off":
            return None
        gmean, spread, (smallest, largest) = self.moments(y)
        mu, sd, f = self.mean, self.std, c.spread_factor
        tests = [
            (
                "global mean",
                gmean,
                (gmean - mu).abs() > c.mean_sigmas * sd,
                lambda i: f"{mu[i]:.6g} +- {c.mean_sigmas:g} x {sd[i]:.4g}",
            ),
            ("spread", spread, spread > f * sd, lambda i: f"[0, {f:g} x {sd[i]:.4g}]"),
            *self.extreme_tests(smallest, largest),
        ]
        for what, value, broken, bound in tests:
            for i in torch.nonzero(broken).flatten().tolist():
                trip = Trip(step, str(time), self.names[i], what, float(value[i]), bound(i))
                if c.action == "stop":
                    return trip
                self._warn(trip)
        return None

    def _warn(self, trip: Trip) -> None:
        if (trip.channel, trip.what) not in self.warned:  # once per channel and test
            self.warned.add((trip.channel, trip.what))
            log.warning("guard (action: warn): %s; the run goes on", trip.finding())
