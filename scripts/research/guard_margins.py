# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How close a store's states come to each of the rollout guard's bounds, against a
checkpoint's training statistics: per channel, the largest ``|global mean - mu| / sigma``,
``spread / sigma`` and ``max |x - mu| / sigma`` over the store's times, and the first time the
guard at its defaults trips (by the training range where the checkpoint records it). Run on
the truth (the defaults must let it pass with room) and on a rollout output (where they
catch it).

    python scripts/research/guard_margins.py --checkpoint benchmarks/held_suarez/emulator.pth \\
        --store runs/held_suarez/data/test.zarr [--store out.zarr ...] [--every 4]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]


def margins(checkpoint: str, store: str, every: int) -> dict:
    from screamcast import checkpoint_format as fmt
    from screamcast.config.inference import GuardSection
    from screamcast.data.channels import each_step, expand, with_channels
    from screamcast.evaluation.climate_report import open_cube
    from screamcast.grid.physics import PhysicsGrid
    from screamcast.rollout.guard import Guard

    desc = fmt.load(checkpoint)["description"]
    v = desc["variables"]
    names = list(v["prognostic"]) + list(v["diagnostic"])
    ds = open_cube(store)
    ds = with_channels(ds, expand(ds, sorted({n.split("[")[0] for n in names})), "store")
    area = torch.as_tensor(PhysicsGrid.from_name(ds.attrs["grid"]).area)
    mean = [desc["stats"]["mean"][n] for n in names]
    std = [desc["stats"]["std"][n] for n in names]
    guard = Guard.from_stats(names, desc["stats"], area, GuardSection())
    worst = {n: [0.0, 0.0, 0.0] for n in names}
    first = {}
    mu, sd = np.array(mean), np.array(std)
    written = int(ds.attrs.get("complete_steps", ds.sizes["time"]))  # a rollout's complete steps
    steps = range(0, written, every)
    for k, fields in each_step(ds, names, steps, where="store"):
        y = torch.as_tensor(np.asarray(fields, np.float32))
        if not torch.isfinite(y).all():
            first.setdefault("non-finite", k)
            break
        gmean, spread, (smallest, largest) = guard.moments(y)
        far = np.maximum(largest.numpy() - mu, mu - smallest.numpy())
        ratios = np.stack([np.abs(gmean.numpy() - mu) / sd, spread.numpy() / sd, far / sd])
        for i, n in enumerate(names):  # ratios: (3, V)
            worst[n] = np.maximum(worst[n], ratios[:, i]).tolist()
        trip = guard.check(y, k, k)  # the guard at its defaults, as the rollout runs it
        if trip is not None:
            first.setdefault(trip.what, k)
    return {"store": store, "worst": worst, "first_trip_time_index": first}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--store", action="append", required=True)
    p.add_argument("--every", type=int, default=4, help="every Nth time (4: daily at 6 h)")
    p.add_argument("--output", help="a JSON record of the numbers")
    a = p.parse_args(argv)
    out = {"command": "python scripts/research/guard_margins.py " + " ".join(argv or sys.argv[1:])}
    out["stores"] = [margins(a.checkpoint, s, a.every) for s in a.store]
    for r in out["stores"]:
        print(f"{r['store']}: first trips (time index) {r['first_trip_time_index'] or 'none'}")
        print("| channel | max abs(mean - mu)/sigma | max spread/sigma | max abs(x - mu)/sigma |")
        print("|---|---|---|---|")
        for n, w in r["worst"].items():
            print(f"| {n} | {w[0]:.2f} | {w[1]:.2f} | {w[2]:.2f} |")
    if a.output:
        Path(a.output).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
