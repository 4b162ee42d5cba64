# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How a step's tile predictions become the global state: one choice for the rollout and for
training through the global step."""

from __future__ import annotations

from enum import Enum

from screamcast.config.inference import check_reassembly_flags


class Reassembly(str, Enum):
    """How a step's tile predictions become the global state."""

    CROP = "crop"  # each tile's centre, halo predictions unused
    INTRA_FACE = "intra-face"  # normalised overlap-add of every prediction inside each face
    CROSS_FACE = "cross-face"  # ... and of the halo predictions across cube edges (KNN^T)

    @classmethod
    def from_flags(cls, halo_adjoint: bool, cross_face: bool) -> Reassembly:
        """The rollout's two flags as one choice (their rule: the config's)."""
        check_reassembly_flags(halo_adjoint, cross_face)
        if not halo_adjoint:
            return cls.CROP
        return cls.CROSS_FACE if cross_face else cls.INTRA_FACE

    @property
    def halo_adjoint(self) -> bool:
        return self is not Reassembly.CROP

    @property
    def cross_face(self) -> bool:
        return self is Reassembly.CROSS_FACE
