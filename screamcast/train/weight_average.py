# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""An exponential moving average of the weights (``optim.ema_decay``): what the stage
validates, keeps as ``best.pth`` and rolls out, while the optimizer steps the raw weights.

Averaged weights smooth the last steps' noise, which long free runs are sensitive to (ACE
and GraphCast-family emulators infer with an EMA). Its decay ramps up as ``min(decay, (1 +
k) / (10 + k))`` over the average's first updates ``k``, so an early average is not the
initial weights'. A checkpoint holds the average as ``model`` (inference reads it) and the
raw weights as ``model_raw`` (a resume continues from them).
"""

from __future__ import annotations

import contextlib

import torch


class WeightAverage:
    def __init__(self, module: torch.nn.Module, decay: float, updates: int = 0):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"optim.ema_decay must be in (0, 1) (0: off), got {decay}")
        self.decay, self.updates = decay, updates
        # float copies of every floating parameter and buffer, by name
        self.shadow = {k: v.detach().clone() for k, v in _floats(module).items()}

    @classmethod
    def of(cls, decay: float, module: torch.nn.Module, ckpt: dict | None) -> WeightAverage | None:
        """The average of a stage (None: off) over ``module`` as it trains (on its device and
        in its dtype: after Fabric's setup); a resumed checkpoint's average and its count."""
        if not decay:
            return None
        average = cls(module, decay)
        if ckpt is not None and "model_raw" in ckpt:  # a resume: the average is ``model``
            average.updates = int(ckpt.get("ema_updates", 0))
            with torch.no_grad():
                for k, v in average.shadow.items():
                    v.copy_(ckpt["model"][k])  # onto the weights' device and dtype
        return average

    @staticmethod
    def resume_raw(module: torch.nn.Module, ckpt: dict | None) -> None:
        """A resumed checkpoint made under an average holds it as ``model`` and the weights
        the optimizer stepped as ``model_raw``: training continues from those (whatever this
        stage's ``ema_decay``), which ``module`` gets here."""
        if ckpt is not None and "model_raw" in ckpt:
            module.load_state_dict(ckpt["model_raw"])

    def rate(self) -> float:
        return min(self.decay, (1.0 + self.updates) / (10.0 + self.updates))

    @torch.no_grad()
    def update(self, module: torch.nn.Module) -> None:
        """Move the average toward the weights after an optimizer step."""
        now, keys = _floats(module), list(self.shadow)
        mine, theirs = [self.shadow[k] for k in keys], [now[k].detach() for k in keys]
        torch._foreach_lerp_(mine, theirs, 1.0 - self.rate())
        self.updates += 1

    @contextlib.contextmanager
    def swapped(self, module: torch.nn.Module):
        """``module`` holds the average inside; yields the raw weights' state dict (copies,
        for the checkpoint's ``model_raw``), put back on leaving."""
        now = _floats(module)
        raw = {k: v.detach().clone() for k, v in now.items()}
        with torch.no_grad():
            for k, v in now.items():
                v.copy_(self.shadow[k])
        try:
            yield raw | {k: v for k, v in module.state_dict().items() if k not in raw}
        finally:
            with torch.no_grad():
                for k, v in now.items():
                    v.copy_(raw[k])


def _floats(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The floating-point entries of ``module``'s state (parameters and buffers), by name."""
    return {k: v for k, v in module.state_dict(keep_vars=True).items() if v.is_floating_point()}
