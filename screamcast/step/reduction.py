# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Sums and maxima over the ranks that hold parts of the globe. One rank holds all of it, so
its reduction does nothing (ACE's ``NonDistributed``); several ranks reduce through their
:class:`~screamcast.rollout.exchange.Exchange`, which has the same three methods."""

from __future__ import annotations

from typing import Protocol

import torch


class Reduction(Protocol):
    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` summed over the ranks, in place; returns it."""

    def max_(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor``'s element-wise maximum over the ranks, in place; returns it."""

    def any(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is true on any."""


class LocalReduction:
    """The reduction of one rank that holds the whole globe."""

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def max_(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def any(self, flag: bool) -> bool:
        return bool(flag)


LOCAL = LocalReduction()
