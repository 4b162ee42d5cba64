# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The one global step that training unrolls and the rollout takes: the tiles' prediction,
then the step's correctors (dry mass, mean temperature, bounds: :mod:`.correctors`), the
same in both, and at inference the nudging (:mod:`.step`)."""
