# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""screamcast: a tiled-halo ML emulator of a cubed-sphere atmosphere model."""

__version__ = "0.1.0"
