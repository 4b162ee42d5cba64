# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The tiled-halo network and the physics-aware pipeline around it (no Fabric here)."""
