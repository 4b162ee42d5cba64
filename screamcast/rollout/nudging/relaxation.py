# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The built-in nudging method ``relaxation``: ``x += alpha * P(x_ref(t) - x)``, ``alpha = 1 -
exp(-dt / tau)``, registered with its settings (:class:`RelaxationConfig`). ``P`` keeps the
scales the reference resolves: block means over a coarser cube reference's cells, the
increment taken back to the model's cells (:class:`CubeRelaxation`), or group means over the
cells sharing a lat-lon reference point (:class:`LatLonRelaxation`). Between its samples the
reference is interpolated in time (:mod:`.reference`); a rollout past its last time, a
non-finite reference value and units other than the model's are refused.
"""

from screamcast.rollout.nudging.registry import register_corrector
from screamcast.rollout.nudging.relaxation_base import Relaxation, RelaxationConfig
from screamcast.rollout.nudging.relaxation_cube import CubeRelaxation
from screamcast.rollout.nudging.relaxation_latlon import LatLonRelaxation

__all__ = ["CubeRelaxation", "LatLonRelaxation", "Relaxation", "RelaxationConfig"]

register_corrector("relaxation", RelaxationConfig)(Relaxation.from_config)
