# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The state of a training run that is not model state: RNG streams and the preemption flag.

Saved in every checkpoint (RNG) and asked at every step boundary (preemption), so a resumed
run continues exactly and every rank stops at the same step.
"""

from __future__ import annotations

import random
import signal
import sys
from collections.abc import Mapping
from typing import Any

import torch


def _world(fabric: Any) -> int:
    return 1 if fabric is None else int(fabric.world_size)


def rng_state() -> dict[str, Any]:
    """torch's and Python's RNG states as tensors and lists (loadable with weights_only).

    screamcast's own numpy code draws from seeded ``np.random.Generator`` objects, never the
    global numpy RNG, so that is not captured.
    """
    state = {"torch": torch.get_rng_state(), "python": list(random.getstate()[1])}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    """Restore what :func:`rng_state` captured."""
    torch.set_rng_state(state["torch"])
    random.setstate((3, tuple(state["python"]), None))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class PreemptionFlag:
    """SIGTERM / SIGUSR1 / SIGINT (Ctrl-C) set a flag; the loop asks :meth:`should_stop` at
    step boundaries, then saves a resumable checkpoint and exits. A second Ctrl-C interrupts at
    once (KeyboardInterrupt), for a step that would take too long.

    The handler only sets a bool (signal-safe); the decision is an all-reduce (max) so every
    rank stops at the same step even if only one received the signal.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)

    def __init__(self) -> None:
        self.requested = False
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum, frame) -> None:
        if signum == signal.SIGINT and self.requested:
            raise KeyboardInterrupt  # the second Ctrl-C
        self.requested, self.signum = True, signum
        if signum == signal.SIGINT:
            note = "Ctrl-C: saving a resumable checkpoint after this step (again: quit now)"
            print(f"\n{note}", file=sys.stderr, flush=True)

    def install(self) -> PreemptionFlag:
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def __enter__(self) -> PreemptionFlag:
        return self.install()

    def __exit__(self, *exc) -> None:
        self.uninstall()

    def should_stop(self, fabric: Any = None) -> bool:
        """Collective: True on every rank if any rank was signalled."""
        if _world(fabric) == 1:
            return self.requested
        flag = torch.tensor(float(self.requested), device=getattr(fabric, "device", "cpu"))
        return bool(fabric.all_reduce(flag, reduce_op="max").item() > 0)


def loaded_line(path, ckpt: Mapping[str, Any]) -> str:
    """What ``init_from`` loaded: the weights of which run, its step and variables (the new
    stage's own optimizer, schedule and counters start afresh)."""
    desc = ckpt.get("description", {})
    names = desc.get("variables", {})
    prognostic = ", ".join(names.get("prognostic", [])) or "?"
    return (
        f"init_from: loaded the weights of {path} (step {ckpt.get('step', '?')}; prognostic "
        f"{prognostic}); optimizer, schedule and step start afresh"
    )
