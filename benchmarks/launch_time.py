# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Launch to the first optimizer step on an S3 store (moto on loopback; docs/performance.md).

``python -m benchmarks.launch_time [--record]``: the demo's store shape (n = 48, hourly, 3 days,
one chunk per face and time) uploaded to moto; ``train()`` of the demo configuration for one
step with the crops read lazily from S3, timed by phase: opening and checking the store, the
normalisation statistics (a pass over every training time, or the store's ``normalisation``
attr as an ingested store carries it, ``data.stats_from_store=true``), and the rest up to the
end of the first step. Moto's per-request latency (~15 ms) stands in for S3's; what matters
is which phase grows with the store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

from benchmarks.harness import moto_bucket, save_record


def _moto(local: Path) -> tuple[object, str, dict]:
    import xarray as xr

    server, options = moto_bucket()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xr.open_zarr(local, chunks=None).to_zarr("s3://bench/d.zarr", storage_options=options)
    return server, "s3://bench/d.zarr", options


def _config(url: str, options: dict, run: Path, from_store: bool):
    from hydra import compose, initialize_config_dir

    from screamcast.config import register

    register()
    root = Path(__file__).resolve().parents[1] / "configs"
    overrides = [
        "experiment=demo",
        f"data.url={url}",
        "++data.storage_options={" + ",".join(f"{k}:'{v}'" for k, v in options.items()) + "}",
        "data.in_memory=false",
        f"data.stats_from_store={str(from_store).lower()}",
        f"run_dir={run}",
        "steps=1",
        "valid_every=1000",
        "checkpoint_every=1000",
        "progress=false",
    ]
    with initialize_config_dir(str(root), version_base="1.3"):
        return compose("train", overrides=overrides)


def measure(url: str, options: dict, run: Path, from_store: bool) -> dict:
    """Seconds per phase of one launch."""
    from screamcast.data.stats import compute_stats, store_stats
    from screamcast.data.store import open_configured
    from screamcast.train import loop
    from screamcast.train.loop import train

    cfg = _config(url, options, run, from_store)
    d = cfg.data
    t0 = time.perf_counter()
    ds = open_configured(d)
    t1 = time.perf_counter()
    channels = [*d.prognostic, *d.diagnostic]
    if from_store:
        store_stats(ds, [*channels, *d.static], url)
    else:
        compute_stats(ds, channels, d.static)
    t2 = time.perf_counter()
    first = []  # when the first optimizer step returns
    step = loop.Trainer.train_step

    def timed(self, batch):
        out = step(self, batch)
        first.append(time.perf_counter())
        return out

    loop.Trainer.train_step = timed
    try:
        train(cfg)  # opens and computes again, builds the model and data, steps, validates
    finally:
        loop.Trainer.train_step = step
    return {
        "stats_from_store": from_store,
        "open_s": t1 - t0,
        "stats_s": t2 - t1,
        "train_to_first_step_s": first[0] - t2,
        "then_validation_and_save_s": time.perf_counter() - first[0],
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--record", action="store_true", help="benchmarks/results/launch_time.json")
    ap.add_argument("--days", type=float, default=3.0)
    a = ap.parse_args(argv)
    import xarray as xr

    from screamcast.data.stats import compute_stats
    from screamcast.sources.synthetic import DIAGNOSTIC, PROGNOSTIC, STATIC, write_store

    report = []
    with tempfile.TemporaryDirectory() as tmp:
        local = write_store(Path(tmp) / "d.zarr", 48, days=a.days)
        ds = xr.open_zarr(local, chunks=None)
        stats = compute_stats(ds, list(PROGNOSTIC + DIAGNOSTIC), list(STATIC))
        import zarr

        zarr.open_group(local, mode="r+").attrs["normalisation"] = stats.to_dict()  # as ingested
        server, url, options = _moto(local)
        try:
            for from_store in (False, True):
                report.append(measure(url, options, Path(tmp) / f"run{from_store}", from_store))
                print(report[-1], flush=True)
        finally:
            server.stop()
    if a.record:
        command = "python -m benchmarks.launch_time " + " ".join(argv or sys.argv[1:])
        save_record("launch_time", "launch_time", command, {"report": report})
    return report


if __name__ == "__main__":
    main()
