# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""How much of a lat-lon nudging reference each rank reads: the box of points its block's
cells take (``Relaxation.restrict``), as a share of the whole reference, per rank count.

``python scripts/research/reference_boxes.py [--nlat 180] [--n 32 96] [--out rows.json]``: a
random regular reference of ``nlat x 2 nlat`` points (1 degree by default) and cubes of face
``n`` (tiles of 8); per rank count the largest rank's box and the boxes summed over the
ranks, as shares of the reference's points (before the boxes, every rank read all of it).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import xarray as xr

from screamcast.grid import PhysicsGrid
from screamcast.rollout.domain import blocks
from screamcast.rollout.nudging.relaxation import Relaxation


def reference(nlat: int) -> xr.Dataset:
    times = pd.date_range("2020-01-01", periods=2, freq="6h")
    lat = -90 + (np.arange(nlat) + 0.5) * 180.0 / nlat
    lon = (np.arange(2 * nlat) + 0.5) * 180.0 / nlat
    data = np.random.default_rng(0).normal(size=(2, nlat, 2 * nlat)).astype(np.float32)
    return xr.Dataset(
        {"u": (("time", "lat", "lon"), data)}, coords={"time": times, "lat": lat, "lon": lon}
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nlat", type=int, default=180)
    ap.add_argument("--n", type=int, nargs="+", default=[32, 96])
    ap.add_argument("--ranks", type=int, nargs="+", default=[6, 12, 24, 48, 96])
    ap.add_argument("--out", help="also write the rows to this JSON file (the lab book's record)")
    a = ap.parse_args()
    ref, whole = reference(a.nlat), 2 * a.nlat * a.nlat
    rows = []
    for n in a.n:
        nudger = Relaxation(
            ref, ["u"], ["u"], 6.0, np.timedelta64(1, "h"), PhysicsGrid.for_face_size(n)
        )
        for world in a.ranks:
            every = blocks(world, n // 8)
            read = []
            for r in range(world):
                box = nudger.restrict(r, every, 8, None).series.reference
                read.append(box.sizes["lat"] * box.sizes["lon"])
            rows.append({"n": n, "ranks": world, "largest_share": round(max(read) / whole, 4),
                         "sum_share": round(sum(read) / whole, 3)})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"command": "python scripts/research/reference_boxes.py", "rows": rows}, f,
                      indent=1)  # fmt: skip
            f.write("\n")


if __name__ == "__main__":
    main()
