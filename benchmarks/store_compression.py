# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a real atmosphere's fields cost on disk, float32 against float16, and what float16 costs
in error, per variable.

``python -m benchmarks.store_compression --workdir DIR [--days 20] [--record]``: a Held-Suarez
run (the shipped T42 L20 restart, seed 3, ``--days`` recorded 6-hourly on ne16pg2; needs the
``dycore`` extra) written as EAM history files, ingested twice as the package ingests SCREAM
output (the stacked layout, default chunk and shard, zstd) with ``--dtype float32`` and with
the default float16, once at the 20 model levels and once at 4 pressure-weighted layers.
Per store: bytes of the ``fields`` array on disk over its raw float32 bytes. Per channel of the
float16 store: its largest and RMS error against the float32 store, in the field's units and
in its standard deviation. The crop benchmark's float16 bytes are noise's (no compression
beyond the halving); ``zstd_gain_f16`` here (raw float16 bytes / bytes on disk) is what real
fields add, and ``benchmarks.data_projection`` multiplies it in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import xarray as xr

from benchmarks.harness import save_record
from screamcast.data.stacked import unstack

RESTART = Path(__file__).resolve().parents[1] / "screamcast/sources/restarts/held_suarez_T42L20.npz"


def history_files(workdir: Path, days: float) -> str:
    """The run's history files (made once; a killed run continues)."""
    from screamcast.sources.dycore_run import HistoryOptions, history

    hist = workdir / "hist"
    if not (hist / "done").exists():
        history(HistoryOptions(str(RESTART), str(hist), days, 3, discard_days=0.0), False)
        (hist / "done").write_text("")
    return f"{hist}/*.nc"


def ingested(sources: str, store: Path, dtype: str, layers: str) -> xr.Dataset:
    from screamcast.ingest import IngestOptions, ingest

    if not store.exists():
        options = IngestOptions([sources], str(store), layers=layers, dtype=dtype, workers=0)
        options.progress = False
        ingest(options)
    return unstack(xr.open_zarr(store, chunks=None, consolidated=False))


def disk_ratio(store: Path) -> tuple[int, int]:
    """(bytes of ``fields`` on disk, its raw float32 bytes)."""
    import zarr

    array = zarr.open_group(store, mode="r")["fields"]
    disk = sum(f.stat().st_size for f in (store / "fields").rglob("*") if f.is_file())
    return disk, int(np.prod(array.shape)) * 4


def errors(exact: xr.Dataset, packed: xr.Dataset) -> dict:
    """Per variable, its worst channel: max and RMS error, in units and in standard deviations."""
    out = {}
    for name in exact.data_vars:
        if "face" not in exact[name].dims or "time" not in exact[name].dims:
            continue
        x = exact[name].values.astype(np.float64)  # (t, [L,] 6, n, n)
        d = packed[name].values.astype(np.float64) - x
        per = x.reshape(x.shape[0], -1, *x.shape[-3:])  # (t, L, 6, n, n)
        dd = d.reshape(per.shape)
        rows = []
        for level in range(per.shape[1]):
            std = float(per[:, level].std())
            top, rms = float(np.abs(dd[:, level]).max()), float(np.sqrt((dd[:, level] ** 2).mean()))
            rows.append({"level": level, "max": top, "rms": rms, "std": std})
        worst = max(rows, key=lambda r: r["max"] / r["std"])
        out[name] = worst | {
            "max_over_std": worst["max"] / worst["std"],
            "rms_over_std": worst["rms"] / worst["std"],
            "units": exact[name].attrs.get("units", ""),
        }
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("runs/store_compression"))
    ap.add_argument("--days", type=float, default=20.0, help="recorded days (20: 80 times)")
    ap.add_argument("--record", action="store_true", help="benchmarks/results/...json")
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    sources = history_files(a.workdir, a.days)
    report = {}
    for name, layers in (("levels", ""), ("layers", "4")):
        f32, f16 = a.workdir / f"{name}_f32.zarr", a.workdir / f"{name}_f16.zarr"
        exact, packed = (ingested(sources, p, d, layers) for p, d in ((f32, "float32"), (f16, "")))
        (d32, raw), (d16, _) = disk_ratio(f32), disk_ratio(f16)
        report[name] = {
            "raw_mb": raw / 1e6,
            "disk_mb_f32": d32 / 1e6,
            "disk_mb_f16": d16 / 1e6,
            "f32_over_disk": raw / d32,
            "f32_over_disk_f16": raw / d16,
            "zstd_gain_f16": raw / 2 / d16,
            "errors": errors(exact, packed),
        }
        r = report[name]
        print(
            f"{name}: raw {raw / 1e6:.1f} MB; float32 on disk x{r['f32_over_disk']:.3f} smaller, "
            f"float16 x{r['f32_over_disk_f16']:.3f} (zstd on float16 x{r['zstd_gain_f16']:.3f})"
        )
        for var, e in r["errors"].items():
            print(
                f"  {var:6s} worst channel {e['level']}: max {e['max']:.3g} {e['units']} "
                f"({e['max_over_std']:.2e} std), rms {e['rms_over_std']:.2e} std"
            )
    if a.record:
        command = "python -m benchmarks.store_compression " + " ".join(argv or sys.argv[1:])
        save_record("store_compression", "store_compression", command, {"report": report})
    return report


if __name__ == "__main__":
    main()
