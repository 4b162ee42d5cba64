# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Cubed-sphere geometry in pure numpy (and scikit-learn for neighbour search); no torch."""

from screamcast.grid.cubed_sphere import FACE_AXES, CubedSphereGrid
from screamcast.grid.physics import PhysicsGrid
from screamcast.grid.tiling import TileLayout

__all__ = ["FACE_AXES", "CubedSphereGrid", "PhysicsGrid", "TileLayout"]
