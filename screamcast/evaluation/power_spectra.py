# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Power by total wavenumber of the rollout and of the truth at a few lead steps.

Needs pyshtools (a base dependency) and a truth that covers the globe; not a
score per step, so it stays out of the step table (``per_step = False``) and feeds a figure.
"""

from __future__ import annotations

import numpy as np

from screamcast.evaluation.aggregator import TruthSource
from screamcast.grid.physics import PhysicsGrid


class PowerSpectra:
    per_step = False

    def __init__(self, truth: TruthSource, grid: PhysicsGrid, leads, latlon=None):
        """``leads``: the steps to take spectra at; ``latlon (lat, lon)``: a lat-lon truth's
        axes (its spectra on the rollout's Driscoll-Healy grid), None for a cube truth."""
        from screamcast.evaluation.spectra import CubeSpectrum, LatLonSpectrum  # pyshtools

        self.truth, self.variables, self.leads = truth, truth.variables, list(leads)
        self.spectrum = self.truth_spectrum = CubeSpectrum(grid)
        if latlon is not None:
            self.truth_spectrum = LatLonSpectrum(*latlon, self.spectrum.lmax)
        # {variable: {lead: (rollout power, truth power)}}, each (lmax + 1,)
        self.power: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {
            v: {} for v in self.variables
        }

    def record(self, step: int, time, fields: np.ndarray) -> None:
        if step not in self.leads:
            return
        truth = self.truth.at(step)  # (V, F, a, b); a lat-lon truth is one "face"
        for i, v in enumerate(self.variables):
            true = truth[i][0] if truth.shape[1] == 1 else truth[i]
            self.power[v][step] = (self.spectrum(fields[i]), self.truth_spectrum(true))

    def summary(self) -> dict:
        return {
            v: {k: {"rollout": p.tolist(), "truth": t.tolist()} for k, (p, t) in leads.items()}
            for v, leads in self.power.items()
        }

    def description(self) -> str:
        """A line for the report: how far the spectra go and what the regridding keeps."""
        L = self.spectrum.lmax
        kept = self.spectrum.transfer([L // 2, L - 1])
        return (
            f"Spectra to l = {L}; the regridding to the lat-lon grid keeps {kept[0]:.2f} of the "
            f"power at l = {L // 2} and {kept[1]:.2f} at l = {L - 1} (both curves alike)."
        )
