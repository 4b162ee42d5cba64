# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where and when a rollout grows grid-scale noise: per step, the largest two-cell
checkerboard amplitude of one channel (``|lap(lap(x))| / 64`` inside each face, the 5-point
Laplacian twice: 1 for a unit checkerboard, ~0 for resolved waves) and where it is.

    python scripts/research/grid_noise.py \\
        runs/held_suarez/stability/s6_global_eight_recorded.zarr \\
        --channel V[3] --every 8 --output docs/notes/data/grid_noise.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def checkerboard(x: np.ndarray) -> np.ndarray:
    """``x (6, n, n)`` -> the checkerboard amplitude ``(6, n - 4, n - 4)`` inside each face."""
    import torch

    from screamcast.model.hyperdiffusion import laplacian

    t = torch.as_tensor(x.astype(np.float64))[:, None]  # (6, 1, n, n)
    return (laplacian(laplacian(t)).abs() / 64.0)[:, 0, 2:-2, 2:-2].numpy()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("output", help="a rollout output (zarr)")
    p.add_argument("--channel", default="V[3]", help="VAR or VAR[layer]")
    p.add_argument("--every", type=int, default=4, help="every this many steps")
    p.add_argument("--output", dest="record", help="append the rows to this JSON record")
    a = p.parse_args(argv)
    import xarray as xr

    ds = xr.open_zarr(a.output, consolidated=False)
    name, _, layer = a.channel.partition("[")
    da = ds[name] if not layer else ds[name].isel(layer=int(layer.rstrip("]")))
    steps = int(ds.attrs.get("complete_steps", ds.sizes["time"]))
    rows = []
    for k in sorted(set(range(0, steps, a.every)) | {steps - 1}):
        amp = checkerboard(da.isel(time=k).values)
        f, y, x = np.unravel_index(amp.argmax(), amp.shape)
        y, x = y + 2, x + 2  # back to face cells
        rows.append({
            "step": k, "day": k / 4.0, "amplitude": float(amp.max()),
            "median": float(np.median(amp)), "face": int(f), "y": int(y), "x": int(x),
            "lat": float(ds.lat.values[f, y, x]), "lon": float(ds.lon.values[f, y, x]),
        })  # fmt: skip
        r = rows[-1]
        print(
            f"day {r['day']:6.2f}  largest {r['amplitude']:7.2f} (median {r['median']:.2f}) at "
            f"face {f} ({y}, {x}), {r['lat']:.1f}N {r['lon']:.1f}E"
        )
    if a.record:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        path = Path(a.record)
        record = json.loads(path.read_text()) if path.exists() else {}
        record[f"{Path(a.output).name} {a.channel}"] = {
            "command": "python scripts/research/grid_noise.py " + " ".join(argv or sys.argv[1:]),
            "commit": commit,
            "rows": rows,
        }
        path.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
