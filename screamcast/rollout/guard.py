# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's guard: a run that leaves physics stops (or warns) at the step it leaves.

After every step, each channel's global mean, spread (the area-weighted standard deviation over
the globe) and extremes are compared with the training statistics the checkpoint carries
(each output's mean ``mu`` and standard deviation ``sigma`` over the training period):

- ``|global mean - mu| <= mean_sigmas * sigma``;
- ``spread <= spread_factor * sigma`` (a field gone flat is wrong, but not a blow-up: an
  untrained model's diagnostics sit at their mean);
- ``max |x - mu| <= extreme_sigmas * sigma``.

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
        if self.what == "non-finite value":
            return (
                f"the state turned non-finite at step {self.step} ({self.time}) in "
                f"{self.channel}: stopped; {output} keeps the steps before it"
            )
        return (
            f"the state left physics at step {self.step} ({self.time}): {self.channel}'s "
            f"{self.what} {self.value:.6g} is outside {self.bound} (the inference config's "
            f"guard section); {output} keeps the steps before it"
        )

    def record(self) -> dict:
        return {k: getattr(self, k) for k in ("step", "time", "channel", "what", "value", "bound")}


class Guard:
    """``check(y (V, *space), step, time) -> Trip | None`` on this rank's part ``(*space)``."""

    def __init__(self, names, mean, std, area: torch.Tensor, config, reduction: Reduction = LOCAL):
        self.names, self.config, self.reduction = list(names), config, reduction
        self.mean = torch.as_tensor(mean, dtype=torch.float64).flatten()  # (V,)
        self.std = torch.as_tensor(std, dtype=torch.float64).flatten()
        self.area = area.to(torch.float64)  # (*space)
        self.warned: set[tuple[str, str]] = set()

    @classmethod
    def from_stats(cls, names, stats: dict, area, config, reduction: Reduction = LOCAL) -> Guard:
        """Against the training statistics ``stats`` (``{"mean": {name: ..}, "std": ..}``, a
        checkpoint description's) of the channels ``names``."""
        mean = [stats["mean"][v] for v in names]
        std = [stats["std"][v] for v in names]
        return cls(names, mean, std, torch.as_tensor(area), config, reduction)

    @staticmethod
    def bytes_per_step(channels: int) -> int:
        """What its reductions send per step from each rank: the area-weighted sums (2 per
        channel, and the area) and the extremes (2 per channel), in float64."""
        return (4 * channels + 1) * 8

    def moments(self, y: torch.Tensor):
        """Global ``(mean, spread, largest |x - mu|)`` per channel, each ``(V,)``."""
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
        far = torch.maximum(extremes[0] - self.mean, self.mean + extremes[1])  # (V,)
        return gmean, (gsq - gmean**2).clamp(min=0).sqrt(), far

    def check(self, y: torch.Tensor, step: int, time) -> Trip | None:
        """The first bound ``y`` breaks (channels in order), or None; warns once per channel
        and test under ``action: warn``, stops nothing itself (the caller raises)."""
        c = self.config
        bad = ~torch.isfinite(y).flatten(1).all(1)  # (V,)
        if self.reduction.any(bool(bad.any())):
            names = [self.names[i] for i in torch.nonzero(bad).flatten().tolist()]
            return Trip(step, str(time), ", ".join(names) or "another rank's block",
                        "non-finite value", float("nan"), "the finite numbers")  # fmt: skip
        if c.action == "off":
            return None
        gmean, spread, far = self.moments(y)
        mu, sd, f = self.mean, self.std, c.spread_factor
        tests = [
            ("global mean", gmean, (gmean - mu).abs() > c.mean_sigmas * sd,
             lambda i: f"{mu[i]:.6g} +- {c.mean_sigmas:g} x {sd[i]:.4g}"),
            ("spread", spread, spread > f * sd, lambda i: f"[0, {f:g} x {sd[i]:.4g}]"),
            ("largest departure from the training mean", far, far > c.extreme_sigmas * sd,
             lambda i: f"[0, {c.extreme_sigmas:g} x {sd[i]:.4g}]"),
        ]  # fmt: skip
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
            log.warning("guard (action: warn): %s", trip.message("the output"))
