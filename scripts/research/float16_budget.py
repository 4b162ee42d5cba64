# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The float16 packing on the four fields that broke it (issue 42), before and after the error
budget: the packing's offset, the worst error, and what the budget decides.

``python scripts/research/float16_budget.py`` (seconds); the old rule is the non-negative
test ``lo >= 0 and lo <= 0.1 hi`` that choose() used before."""

import numpy as np

from screamcast.data import packing, precision


def fields(rng) -> dict[str, np.ndarray]:
    ps = rng.uniform(98e3, 104e3, 100_000)
    ps[:10_000] = rng.uniform(50e3, 60e3, 10_000)
    q = 10 ** rng.uniform(-7, -5, 100_000)
    q[:50] = -1e-12
    flux = -rng.uniform(0, 400, 100_000)
    flux[rng.random(100_000) < 0.7] = 0.0
    pr = 10 ** rng.uniform(-12, -3, 100_000)
    return {"PS": ps, "Q": q, "FLDS_DOWN": flux, "PRECT": pr}


def stats(label: str, name: str, x: np.ndarray, offset: float) -> str:
    v = x.astype(np.float32).reshape(1, 1, -1)  # (t, C, points)
    spread = float(np.abs(v - offset).max())
    codec = packing.codec([offset], [spread * packing.HEADROOM / packing.FLOAT16_MAX], axis=1)
    back = packing.round_trip(codec, v, slice(0, 1))
    err = np.abs(back - v)
    small = (np.abs(v) < 2e-7) & (v != 0)
    rel = float((err[small] / np.abs(v[small])).max()) if small.any() else float("nan")
    zeros = int(((v == 0) & (back != 0)).sum())
    budget = precision.budgets([name], v, axis=1)
    used = precision.worst(v, back, budget, axis=1)[0]["used"]
    return (
        f"| {label} | {offset:.6g} | {err.max():.3g} | {rel:.3g} | {zeros} | "
        f"{'over' if used > 1 else 'within'} ({used:.3g}) |"
    )


def main() -> None:
    print("| field | offset | max abs error | max rel error below 2e-7 | zeros lost | budget |")
    print("|---|---|---|---|---|---|")
    for name, x in fields(np.random.default_rng(0)).items():
        lo, hi = float(x.min()), float(x.max())
        old = 0.0 if lo >= 0 and lo <= 0.1 * hi else float(np.float32(x.mean()))
        new = packing.choose(x.astype(np.float32).reshape(1, 1, -1), axis=1)[0][0]
        print(stats(f"{name} before", name, x, old))
        print(stats(f"{name} now", name, x, new))


if __name__ == "__main__":
    main()
