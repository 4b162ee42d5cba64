# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The step's correctors: adjustments of each prediction that the physics it emulates would
make, applied inside the step the same way in training and in the rollout.

A corrector is registered by name with its own config dataclass (ACE's
``CorrectorSelector``): a config lists them as ``{type: NAME, config: {...}}``, ``type`` a
registered name or ``module:name`` (a plug-in in its own file, registered on import).
:func:`build_correctors` checks every entry in one place: an unknown type or key, or a
variable the model does not have, fails naming it. Every corrector is out of place and
differentiable, so training's gradients pass through what the rollout will do.

Built in:

- ``dry_mass``: the area-weighted global mean of surface pressure held at its value before
  the step (the dry air's mass, ``PS / g`` per unit area, is what a dry dycore conserves;
  ACE2's dry-air fixer);
- ``mean_temperature``: the area- and layer-weighted global mean of the temperature layers
  held at its value before the step (a dycore's forcing moves it, but by little per step;
  a model that drifts by a little every step leaves the climate in weeks);
- ``bounds``: each named channel clipped to ``[lower, upper]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import torch

from screamcast.data.channels import split
from screamcast.registry import Registry
from screamcast.step.reduction import LOCAL, Reduction


class CorrectorConfigError(ValueError):
    """A ``correctors`` entry the registry cannot build (its message names the entry)."""


@dataclass(frozen=True)
class TileSums:
    """Where this part's tiles sit among the globe's: ``tile`` pixels a side, ``index`` the
    global (face-major) indices of its tiles in ``(F, rows, cols)`` order, ``count`` the
    globe's tiles. A global sum made of per-tile sums, each on its own rank and the tiles
    then added in one global order, is the same on any number of ranks, to the bit."""

    tile: int
    index: torch.Tensor  # (F rows cols,) long
    count: int

    def of(self, x: torch.Tensor) -> torch.Tensor:
        """``x (B, F, h, w)`` -> ``(B, count)``: each of this part's tiles' sum in its place,
        zero at the other ranks' tiles (so a sum over the ranks adds nothing to them)."""
        B, F, h, w, T = *x.shape, self.tile
        tiles = x.reshape(B, F, h // T, T, w // T, T).transpose(3, 4)  # (B, F, r, c, T, T)
        sums = tiles.reshape(B, -1, T * T).sum(-1)  # (B, F r c): one tile's pixels in order
        out = x.new_zeros(B, self.count)
        out[:, self.index.to(x.device)] = sums
        return out


@dataclass(frozen=True)
class StepGeometry:
    """What a corrector sees of the globe: the channels of the step's output, in order,
    the cell areas of this rank's part ``(*space)``, the reduction over the ranks and, for
    global means equal on any rank count, where the part's tiles are (``tiles``; None: a
    plain sum, as training on whole cubes takes it)."""

    channels: tuple[str, ...]
    area: torch.Tensor  # (*space): (6, n, n) on one rank, (F, h, w) of a block
    reduction: Reduction = LOCAL
    tiles: TileSums | None = None

    def global_mean(self, x: torch.Tensor) -> torch.Tensor:
        """Area-weighted mean over the whole globe of ``x (B, *space)``: ``(B,)``."""
        if self.tiles is not None:
            return self._tiled_mean(x)
        a = self.area.to(x.device, x.dtype)
        part = torch.stack([(x * a).flatten(1).sum(1), a.sum().expand(len(x))])  # (2, B)
        if self.reduction is not LOCAL:  # not differentiated: training holds whole cubes
            part = self.reduction.sum_(part.detach().clone())
        return part[0] / part[1]

    def _tiled_mean(self, x: torch.Tensor) -> torch.Tensor:
        """As :meth:`global_mean`, in float64 from per-tile sums added in the globe's tile
        order (the products of float32 numbers are exact in float64), so one rank and N
        ranks get the same mean, to the bit (not differentiated: the rollout's)."""
        a = self.area.to(x.device, torch.float64).expand(x.shape)  # (B, *space)
        part = torch.stack([self.tiles.of(x.detach().double() * a), self.tiles.of(a)])
        part = self.reduction.sum_(part)  # (2, B, tiles): one rank's value each, zeros else
        total = part.sum(-1)  # (2, B): the same tiles in the same order on any rank count
        return (total[0] / total[1]).to(x.dtype)

    def index(self, name: str, where: str) -> int:
        if name not in self.channels:
            raise CorrectorConfigError(
                f"{where}: the model has no channel {name!r} (channels: {', '.join(self.channels)})"
            )
        return self.channels.index(name)


class StepCorrector(Protocol):
    name: str

    def __call__(
        self, before: torch.Tensor, after: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``before (B, C, *space)`` (the step's input state), ``after (B, C + D, *space)``
        (its prediction) -> the corrected prediction and what was done: ``{key: (B,)}``."""


@dataclass(frozen=True)
class CorrectorSpec:
    """One ``correctors`` entry: a registered ``type`` and the keys of its own config."""

    type: str
    config: dict = field(default_factory=dict)


CORRECTORS = Registry("step corrector", CorrectorConfigError)


def register_step_corrector(name: str, config: type):
    """Register ``factory(config, geometry) -> StepCorrector`` as ``name`` with ``config``
    (a dataclass) as its settings."""

    def wrap(factory: Callable) -> Callable:
        CORRECTORS.register(name)((config, factory))
        return factory

    return wrap


def _typed_config(spec: CorrectorSpec, config_type: type, where: str):
    known = {f.name for f in fields(config_type)}
    unknown = sorted(set(spec.config) - known)
    if unknown:
        raise CorrectorConfigError(
            f"{where}: unknown key {unknown[0]!r} for corrector {spec.type!r} "
            f"(known keys: {', '.join(sorted(known)) or 'none'})"
        )
    try:
        return config_type(**spec.config)
    except (TypeError, ValueError) as err:
        raise CorrectorConfigError(f"{where}: {err}") from None


def as_spec(entry: Any, where: str) -> CorrectorSpec:
    """A config's entry (a mapping with ``type`` and ``config``, or a spec) as a spec."""
    if isinstance(entry, CorrectorSpec):
        return entry
    entry = dict(entry)
    extra = sorted(set(entry) - {"type", "config"})
    if "type" not in entry or extra:
        raise CorrectorConfigError(
            f"{where}: a corrector is {{type: NAME, config: {{...}}}}, got keys "
            f"{', '.join(sorted(entry)) or 'none'}"
        )
    return CorrectorSpec(str(entry["type"]), dict(entry.get("config") or {}))


def build_correctors(
    entries, geometry: StepGeometry, where: str = "correctors"
) -> list[StepCorrector]:
    """The correctors ``entries`` name, in order, each checked against the model's channels."""
    out = []
    for i, entry in enumerate(entries or ()):
        at = f"{where}[{i}]"
        spec = as_spec(entry, at)
        config_type, factory = CORRECTORS[spec.type]
        out.append(factory(_typed_config(spec, config_type, at), geometry, at))
    return out


def apply_correctors(
    correctors: list[StepCorrector], before: torch.Tensor, after: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Each corrector in turn; their records in one dictionary."""
    done: dict[str, torch.Tensor] = {}
    for c in correctors:
        after, record = c(before, after)
        done |= record
    return after, done


def _shifted(after: torch.Tensor, channels: list[int], shift: torch.Tensor) -> torch.Tensor:
    """``after`` with ``shift (B,)`` added to ``channels`` (out of place)."""
    mask = torch.zeros(after.shape[1], dtype=after.dtype, device=after.device)
    mask[channels] = 1.0
    view = (-1, after.shape[1]) + (1,) * (after.dim() - 2)
    return after + shift.view(-1, *([1] * (after.dim() - 1))) * mask.view(view)


@dataclass(frozen=True)
class DryMassConfig:
    variable: str = "PS"  # the surface pressure channel


class DryMass:
    name = "dry_mass"

    def __init__(self, config: DryMassConfig, geometry: StepGeometry, where: str):
        self.geometry, self.i = geometry, geometry.index(config.variable, f"{where}.variable")

    def __call__(self, before, after):
        g, i = self.geometry, self.i
        shift = g.global_mean(before[:, i]) - g.global_mean(after[:, i])  # (B,)
        return _shifted(after, [i], shift), {"dry_mass_shift": shift.detach()}


@dataclass(frozen=True)
class MeanTemperatureConfig:
    variable: str = "T"  # every channel of this variable (T[0], T[1], ...), or one channel
    # each channel's share of the column's mass; empty: equal shares (equal-mass layers)
    weights: list[float] = field(default_factory=list)


class MeanTemperature:
    name = "mean_temperature"

    def __init__(self, config: MeanTemperatureConfig, geometry: StepGeometry, where: str):
        names = [
            c for c in geometry.channels if c == config.variable or split(c)[0] == config.variable
        ]
        if not names:
            geometry.index(config.variable, f"{where}.variable")  # raises, naming the channels
        w = list(config.weights) or [1.0] * len(names)
        if len(w) != len(names) or min(w) < 0 or sum(w) <= 0:
            raise CorrectorConfigError(
                f"{where}.weights: {len(names)} non-negative weights (one per channel of "
                f"{', '.join(names)}), got {list(config.weights)}"
            )
        self.geometry, self.channels = geometry, [geometry.channels.index(c) for c in names]
        self.weights = torch.tensor(w, dtype=torch.float64) / sum(w)

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weights.to(x.device, x.dtype).view(1, -1, *([1] * (x.dim() - 2)))
        return self.geometry.global_mean((x[:, self.channels] * w).sum(1))  # (B,)

    def __call__(self, before, after):
        shift = self._mean(before) - self._mean(after)  # (B,)
        return _shifted(after, self.channels, shift), {"mean_temperature_shift": shift.detach()}


@dataclass(frozen=True)
class BoundsConfig:
    # channel -> [lower, upper]; null for no bound on that side
    bounds: dict[str, list[float | None]] = field(default_factory=dict)


class Bounds:
    name = "bounds"

    def __init__(self, config: BoundsConfig, geometry: StepGeometry, where: str):
        self.limits = []
        for name, pair in config.bounds.items():
            i = geometry.index(name, f"{where}.bounds")
            pair = list(pair)
            if len(pair) != 2 or (None not in pair and pair[0] > pair[1]):
                raise CorrectorConfigError(
                    f"{where}.bounds.{name}: [lower, upper] with lower <= upper, got {pair}"
                )
            self.limits.append((i, *pair))

    def __call__(self, before, after):
        parts = list(after.unbind(1))  # C + D x (B, *space)
        clipped = {}
        for i, lo, hi in self.limits:
            outside = (parts[i] < (lo if lo is not None else -torch.inf)) | (
                parts[i] > (hi if hi is not None else torch.inf)
            )
            clipped[i] = outside.flatten(1).float().mean(1)  # (B,) share of the cells clipped
            parts[i] = parts[i].clamp(min=lo, max=hi)
        share = (
            torch.stack(list(clipped.values())).amax(0) if clipped else after.new_zeros(len(after))
        )
        return torch.stack(parts, 1), {"bounds_clipped": share.detach()}


register_step_corrector("dry_mass", DryMassConfig)(DryMass)
register_step_corrector("mean_temperature", MeanTemperatureConfig)(MeanTemperature)
register_step_corrector("bounds", BoundsConfig)(Bounds)
