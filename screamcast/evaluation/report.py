# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""report.md's text, built from the aggregators' summaries: the last step's scores, the seam
classes, the figures."""

from __future__ import annotations

import math


def report_lines(
    output, truth, table, variables, steps, spectra, seams, figures, attrs, partial="", units=None
) -> list[str]:
    """report.md's text: the last step's scores (in each variable's ``units``, the output's
    attrs), the seam classes, the figures (if drawn)."""
    last = {v: {k: x[-1] for k, x in table[v].items()} for v in variables}
    units = units or {}
    acc = "acc" in last[variables[0]]
    cols = ["variable", "units", "RMSE", "persistence"]
    cols += ["ACC", "persistence ACC", "climatology RMSE"] if acc else []
    lines = [f"# Evaluation of {output}", "", f"Truth: {truth}; {steps} steps.", ""]
    lines += [partial, ""] if partial else []
    lines += ["At the last step:", "", _row(cols), _row(["---"] * len(cols))]
    for v in variables:
        s = last[v]
        row = [v, units.get(v) or "-", f"{s['rmse']:.4g}", f"{s['persistence_rmse']:.4g}"]
        if acc:
            row += [
                f"{s['acc']:.3f}",
                f"{s['persistence_acc']:.3f}",
                f"{s['climatology_rmse']:.4g}",
            ]
        lines.append(_row(row))
    lines.append("")
    if figures:
        lines += ["![skill per lead](leads.png)", "", "![last step](skill_last_step.png)", ""]
    if seams is None:
        lines += ["No seam or tile-imprint scores: they need a truth on the output's grid.", ""]
    if seams is not None and seams.last_map is not None:
        t = seams.tile
        lines += [
            "RMSE by pixel class at the last step (in brackets: over that class's own "
            "persistence RMSE, so classes with more weather are compared fairly), and the tile "
            "imprint (std over the "
            f"{t} x {t} tile-local positions of the mean |error| there, over its mean) beside "
            "its floor (what the same tiles give at random tile-local phases: an imprint near "
            "its floor is not the tiling's):",
            "",
            _row(["variable", "tile seams", "face edges", "interiors", "tile imprint", "floor"]),
            _row(["---"] * 6),
        ]
        for v in variables:
            s = last[v]
            cells = [_class_cell(s, c) for c in ("tile_seams", "face_edges", "interiors")]
            imprint = [_number(s["tile_imprint"]), _number(s["tile_imprint_floor"])]
            lines.append(_row([v, *cells, *imprint]))
        lines += ["", *_lattice_note(attrs, seams.tile)]
        lines += ["![tile imprint](tile_imprint.png)", ""] if figures else []
    if figures:
        lines += ["![drift](drift.png)", "", f"Time-mean bias over steps 1..{steps - 1}:", ""]
        lines += ["![bias maps](bias_maps.png)", "", spectra, "", "![spectra](spectra.png)", ""]
    else:
        lines += [spectra, ""]
    return lines + ["## Provenance (the output's attrs)", ""]


def _number(x: float) -> str:
    """A tile imprint's cell; "none" on tiles of a whole face (no tile imprint)."""
    return "none" if math.isnan(x) else f"{x:.3f}"


def _class_cell(s: dict, c: str) -> str:
    """A pixel class's RMSE (over its persistence's); "none" for a class without pixels
    (tile seams on tiles of a whole face)."""
    rmse = s[f"rmse_{c}"]
    if math.isnan(rmse):
        return "none"
    return f"{rmse:.4g} ({_ratio(rmse, s[f'persistence_rmse_{c}'])})"


def _lattice_note(attrs, tile: int) -> list[str]:
    """When the nudging reference's blocks divide the tile, what the nudging leaves at a fixed
    place in a block sits at fixed tile-local positions: the imprint cannot tell it from the
    tiling's (docs/rollout.md)."""
    block = int(attrs.get("nudge_block_cells", 1))
    if block < 2 or tile % block:
        return []
    return [
        f"The nudging reference's blocks ({block} x {block} cells) divide the {tile}-cell "
        "tile, so the tile imprint also holds the reference's lattice (what block means cannot "
        "correct sits at the same places in every block): "
        "`python scripts/research/imprint_analysis.py OUTPUT` divides it out; a reference "
        "whose block does not divide the tile keeps the "
        "two apart (docs/rollout.md).",
        "",
    ]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "n/a"


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"
