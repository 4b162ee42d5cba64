# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How consistently two sets of starts rank checkpoints under other shortfall penalties,
recomputed from a recorded ranking study (``scripts/research/climate_ranking.py``'s record:
each run's days held and trip, each checkpoint's climate numbers): the climate part alone,
plus ``w`` per run the guard stopped, or plus ``w`` x the fraction of run-days short.

    python scripts/research/ranking_penalties.py docs/notes/data/2026-12-06-climate-ranking.json
"""

from __future__ import annotations

import json
import sys

from scipy.stats import spearmanr

SCALES = {"u_bias_rms": 1.5, "t_bias_rms": 0.8, "eke_error": 0.25}


def climate_part(run: dict) -> float:
    return sum(run[k] / v for k, v in SCALES.items())


def penalties(days: float) -> dict:
    """Name -> ``score(run)`` for each penalty compared."""
    stops = {f"+ {w} per run stopped": w for w in (0.25, 0.5, 1, 2)}
    short_weights = {f"+ {w} x fraction of run-days short": w for w in (1, 5, 20)}
    out = {"climate part only": climate_part}

    def short(r: dict) -> float:  # the fraction of the asked run-days cut off
        return sum(days - h for h in r["held_days"]) / (days * len(r["held_days"]))

    for name, w in stops.items():
        out[name] = lambda r, w=w: climate_part(r) + w * sum(t is not None for t in r["trips"])
    for name, w in short_weights.items():
        out[name] = lambda r, w=w: climate_part(r) + w * short(r)
    return out


def main(argv=None) -> int:
    record = json.load(open((argv or sys.argv[1:])[0]))
    a, b = record["scores"]["A"], record["scores"]["B"]
    days = max(h for run in a.values() for h in run["held_days"])  # the runs' asked length
    for name, score in penalties(days).items():
        rho = spearmanr([score(a[m]) for m in a], [score(b[m]) for m in a]).correlation
        print(f"{name}: Spearman {rho:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
