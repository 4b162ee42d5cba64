# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The error a float16 stack may make in each channel, checked on every block it packs.

float16 keeps 11 significant bits about each channel's offset (:mod:`.packing`): enough for
most fields, not for all. A channel's budget is what its users need back:

- absolute for the fields read in physical units: surface pressure 1 Pa, temperature
  0.1 K, winds 0.1 m/s (E3SM names, case-blind: ``PS``/``ps``, ``T``, ``U``/``V``/``u``/``v``);
- relative for a positive-definite (or non-positive) field, packed about zero: ``2**-10`` of
  the value, down to a floor of a millionth of the channel's peak in the first block (below
  it the error may be ``2**-10`` of that floor);
- ``2**-10`` of the first block's spread about its mean for any other channel;
- and exact zeros: a channel whose first block holds exact zeros gets them back exactly.

The ingestion stores a channel as float32 where float16 cannot meet its budget with room on
its first, middle and last blocks (``screamcast.ingest.store.first_block_packing``; with
``--dtype float16`` given, such a channel is refused), and checks each block's round trip
against the budget (:func:`worst`, from ``screamcast.data.stacked.write_stack``): a block over
it is written and warned about, never refused part way. The dtype and worst error per channel
go into the ingestion's summary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

RELATIVE = 2.0**-10
FLOOR = 1e-6  # of a sign-definite channel's peak: below it the error is absolute
ABSOLUTE = {"ps": 1.0, "t": 0.1, "u": 0.1, "v": 0.1}  # by variable name, lower-cased


@dataclass(frozen=True)
class Budget:
    """Allowed error ``max(absolute, relative * |x|)``; ``zeros``: exact zeros stay exact."""

    absolute: float
    relative: float = 0.0
    zeros: bool = False

    def allowed(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(self.absolute, self.relative * np.abs(x))


def sign_definite(lo: float, hi: float) -> bool:
    """Non-negative up to rounding noise (E3SM writes q with a few -1e-12), or non-positive
    likewise: the packing keeps such a channel about zero."""
    peak = max(abs(lo), abs(hi))
    return peak > 0 and (lo >= -FLOOR * peak or hi <= FLOOR * peak)


def budget_of(variable: str, values: np.ndarray, absolute: dict | None = None) -> Budget:
    """The budget of one channel of ``variable`` from its first block's ``values``;
    ``absolute``: budgets by variable name that replace or add to :data:`ABSOLUTE`."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return Budget(absolute=np.inf)
    lo, hi = float(v.min()), float(v.max())
    zeros = bool((v == 0).any())
    by_name = ABSOLUTE | {k.lower(): float(v) for k, v in (absolute or {}).items()}
    if variable.lower() in by_name:
        return Budget(absolute=by_name[variable.lower()], zeros=zeros)
    if sign_definite(lo, hi):
        peak = max(abs(lo), abs(hi))
        return Budget(absolute=RELATIVE * FLOOR * peak, relative=RELATIVE, zeros=zeros)
    spread = float(np.abs(v - v.mean()).max())
    return Budget(absolute=RELATIVE * spread if spread else np.inf, zeros=zeros)


def budgets(
    variables: list[str], block: np.ndarray, axis: int, absolute: dict | None = None
) -> list[Budget]:
    """One budget per channel (``axis`` of ``block``); ``variables[c]``: channel c's variable;
    ``absolute``: the user's budgets by variable (``--budget PS=3``)."""
    x = np.moveaxis(np.asarray(block, np.float64), axis, 0)
    x = x.reshape(x.shape[0], -1)  # (C, points)
    return [budget_of(name, row, absolute) for name, row in zip(variables, x, strict=True)]


def worst(x: np.ndarray, back: np.ndarray, budgets_: list[Budget], axis: int) -> list[dict]:
    """Per channel: the largest error of ``back`` (``x`` as stored) and its share of the
    budget (``used`` > 1: over it; zeros that came back non-zero count as infinitely over)."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0).reshape(len(budgets_), -1)
    back = np.moveaxis(np.asarray(back, np.float64), axis, 0).reshape(len(budgets_), -1)
    out = []
    for c, b in enumerate(budgets_):
        ok = np.isfinite(x[c])
        err = np.abs(back[c][ok] - x[c][ok])
        used = float((err / b.allowed(x[c][ok])).max()) if err.size else 0.0
        if b.zeros and bool((back[c][ok][x[c][ok] == 0] != 0).any()):
            used = np.inf
        out.append({"error": float(err.max()) if err.size else 0.0, "used": used})
    return out


def over(report: list[dict], names: list[str], budgets_: list[Budget], every=False) -> list:
    """A sentence for each channel over its budget (``every``: one entry per channel, None
    for those within it)."""
    lines = []
    for name, r, b in zip(names, report, budgets_, strict=True):
        if r["used"] > 1:
            what = f"max(|error|) {r['error']:.3g}" + (
                " with exact zeros changed" if not np.isfinite(r["used"]) else ""
            )
            limit = f"{b.absolute:.3g}" + (f" or {b.relative:.3g} |x|" if b.relative else "")
            lines.append(f"{name}: {what}, budget {limit}")
        elif every:
            lines.append(None)
    return lines


def to_attrs(budgets_: list[Budget]) -> list[dict]:
    return [asdict(b) for b in budgets_]


def from_attrs(items: list[dict]) -> list[Budget]:
    return [Budget(**item) for item in items]
