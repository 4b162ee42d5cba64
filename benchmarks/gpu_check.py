# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training-step and rollout-step throughput on whatever device there is (CUDA: bf16 autocast
and channels_last; CPU: the rollout's ``auto``, bf16 with AMX-BF16 else fp32, or ``--precision``):
crops, training through the global step (k = 4 and 8, activation checkpointing on and off,
peak memory), the rollout's step on the training tile and on whole faces, the domain-
decomposed step on ``--ranks`` processes (the halo exchange hidden and waited for, checked
against one rank; gloo, as NCCL refuses two ranks on one GPU), plus FLOPs per tile and a
projection to a production grid.

    python -m benchmarks.gpu_check                   # CUDA if present, < 5 minutes
    python -m benchmarks.gpu_check --scaling         # rollout step cost for n = 48, 96, 192
    bash benchmarks/gpu_check.sh                     # the same, for a lent GPU machine

Prints one JSON document (and writes it with --out). The projections are arithmetic on
measured numbers, not measurements: the production step from the measured forward rate of
production-size tiles (and, as a cross-check, from the rollout's achieved FLOP/s).
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import json
import resource
import time
from contextlib import contextmanager

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.gpu_check_crops import device_crop_rates
from benchmarks.gpu_check_exchange import exchange_rates
from benchmarks.gpu_check_global import global_step_rates
from screamcast.config.inference import StepperSection
from screamcast.data.stats import Stats
from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.model.pipeline import Pipeline, input_channels
from screamcast.model.unet import UNet
from screamcast.rollout.stepper import (
    PRECISIONS,
    GlobalStepper,
    inference_network,
    resolve_precision,
)

PROG, DIAG, STATIC = ["u", "v", "vorticity", "tracer", "temperature"], ["precip"], ["orog"]


def make_pipeline(width: int, levels: int) -> Pipeline:
    names = PROG + DIAG + STATIC
    stats = Stats({v: 0.0 for v in names}, {v: 1.0 for v in names}, {v: 0.1 for v in names})
    torch.manual_seed(0)
    net = UNet(input_channels(len(PROG), len(STATIC)), len(PROG) + len(DIAG), width, levels)
    torch.nn.init.normal_(net.head.weight, std=1e-2)
    return Pipeline(net, stats, PROG, DIAG, STATIC)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _proc_status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return None


def _release_freed_heap() -> None:
    """Hand memory that is freed but still mapped back to the OS (glibc), so the resident set
    counts live memory only; elsewhere a no-op."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@contextmanager
def peak_memory(device):
    """Peak memory while the block runs, into the yielded dict (MB): on CUDA the tensors'
    (``max_memory_allocated``); on CPU the process's resident set, freed heap released and its
    high-water mark reset first (``/proc/self/clear_refs``); ``before_mb``: the baseline."""
    m = {}
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        m["kind"] = "cuda max_memory_allocated"
        m["before_mb"] = torch.cuda.memory_allocated(device) / 2**20
    else:
        _release_freed_heap()
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM to the current RSS
            m["kind"] = "peak RSS (high-water mark reset before)"
        except OSError:
            m["kind"] = "peak RSS of the whole process (no reset here)"
        m["before_mb"] = _proc_status_mb("VmRSS") or 0.0
    yield m
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        m["peak_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    else:
        ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        m["peak_mb"] = _proc_status_mb("VmHWM") or ru


def _timed(fn, steps: int, device) -> tuple[float, dict]:
    """Seconds per call of ``fn`` after one warm-up call, and the peak memory of all the calls,
    the warm-up's included (what it allocates to keep, optimizer state or scratch buffers,
    is part of what the step takes)."""
    with peak_memory(device) as mem:
        fn()
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        _sync(device)
        dt = (time.perf_counter() - t0) / steps
    return dt, mem


def train_step_rate(pipeline, device, size: int, batch: int, steps: int, bf16: bool) -> dict:
    """Images per second of forward + backward + AdamW on random crops of ``size``, set up as the
    training loop does on CUDA when ``bf16`` (bf16 autocast, NHWC weights; the inputs stay NCHW
    as the loader gives them)."""
    fmt = torch.channels_last if bf16 else torch.contiguous_format
    pipeline = pipeline.to(device, memory_format=fmt).train()
    opt = torch.optim.AdamW(pipeline.parameters(), lr=1e-4)
    state = torch.randn(batch, len(PROG), size, size, device=device)
    forcing = torch.rand(batch, 2, size, size, device=device)
    static = torch.randn(batch, len(STATIC) + 4, size, size, device=device)
    target = torch.randn(batch, len(PROG) + len(DIAG), size, size, device=device)

    def step():
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = ((pipeline(state, forcing, static) - target) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    dt, mem = _timed(step, steps, device)
    return {
        "crop": size,
        "batch": batch,
        "step_s": dt,
        "images_per_s": batch / dt,
        "memory_format": "channels_last" if bf16 else "contiguous",
        "memory": mem,
    }


def tile_flops(pipeline, size: int) -> int:
    """FLOPs of one tile's forward pass, counted on the meta device: shapes only, no arithmetic,
    and the pipeline stays on its device."""
    meta = copy.deepcopy(pipeline).to("meta").eval()
    x = [torch.zeros(1, c, size, size, device="meta") for c in (len(PROG), 2, len(STATIC) + 4)]
    with FlopCounterMode(display=False) as counter:
        meta(*x)
    return int(counter.get_total_flops())


def tile_forward_rate(pipeline, device, size: int, batch: int, steps: int, precision: str) -> dict:
    """Tiles per second of the rollout's network forward alone on ``size`` tiles, set up as
    :class:`GlobalStepper` runs it (NHWC weights, bf16 autocast per ``precision``)."""
    net = inference_network(pipeline, device, channels_last=True)
    bf16 = resolve_precision(precision, device) == "bf16"
    x = [torch.randn(batch, c, size, size, device=device) for c in (len(PROG), 2, len(STATIC) + 4)]

    def forward():
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            return net.predict(*x)  # (batch, C + D, size, size), under no_grad

    dt, mem = _timed(forward, steps, device)
    return {"tile": size, "batch": batch, "batch_s": dt, "tiles_per_s": batch / dt, "memory": mem}


def rollout_step_rate(
    pipeline, device, n: int, tile: int, halo: int, steps: int, batch: int, precision: str = "auto"
):
    layout = TileLayout(PhysicsGrid.for_face_size(n), tile, halo)
    stepper = GlobalStepper(
        pipeline,
        layout,
        np.zeros((len(STATIC), 6, n, n)),
        StepperSection(halo_adjoint=True, batch_size=batch, precision=precision),  # intra-face
        str(device),
    )
    state = [torch.randn(len(PROG), 6, n, n)]
    t0, t1 = np.datetime64("2020-01-01T00"), np.datetime64("2020-01-01T01")

    def step():
        state[0] = stepper.step(state[0], t0, t1)[: len(PROG)].cpu()

    dt, mem = _timed(step, steps, device)
    phases = step_phases(stepper, state[0], t0, t1, steps, device)
    S = tile + 2 * halo
    return {
        "n": n,
        "tile": tile,
        "halo": halo,
        "tiles": layout.n_tiles,
        "step_s": dt,
        "sim_days_per_wall_day_at_1h": 3600.0 / dt,
        "tile_pixels": layout.n_tiles * S * S,
        "memory": mem,
        "phases_s": phases,
    }


def step_phases(stepper: GlobalStepper, x: torch.Tensor, t0, t1, steps: int, device) -> dict:
    """Seconds of each part of a step, each timed on its own (synchronised): where a GPU step's
    time goes. ``forwards`` is ``predict_tiles`` less its gather and insolation."""
    x = x.to(device)
    tiles = stepper.predict_tiles(x, t0, t1)  # (n_tiles, C + D, S, S)
    parts = {
        "gather": lambda: stepper.block.gather(x),
        "insolation": lambda: stepper.forcing(t0, t1),
        "predict_tiles": lambda: stepper.predict_tiles(x, t0, t1),
        "adjoint": lambda: stepper.block.adjoint(tiles, stepper.cross_face, stepper.window),
        "to_host": lambda: stepper.block.crop(tiles).cpu(),
    }
    s = {name: _timed(fn, steps, device)[0] for name, fn in parts.items()}
    s["forwards"] = s["predict_tiles"] - s["gather"] - s["insolation"]
    return s


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--n", type=int, default=192)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--halo", type=int, default=16)
    ap.add_argument("--width", type=int, default=48)
    ap.add_argument("--levels", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--scaling", action="store_true", help="rollout step for n = 48, 96, 192")
    ap.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="bf16: autocast, and NHWC training too (auto: on CUDA and on CPUs with AMX-BF16); "
        "bf16 on CPU tests the GPU code path",
    )
    ap.add_argument(
        "--production",
        type=int,
        nargs=3,
        default=[2048, 128, 32],
        metavar=("FACE", "TILE", "HALO"),
        help="the grid to project to",
    )
    ap.add_argument(
        "--production-batch",
        type=int,
        help="tiles per forward at the production tile size (64 on CUDA, 2 on CPU)",
    )
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument(
        "--record",
        action="store_true",
        help="save as benchmarks/results/gpu_check_<device>.json (machine, versions, commit); "
        "regenerate docs/performance.md's scaling tables",
    )
    ap.add_argument(
        "--global-n",
        type=int,
        nargs=3,
        default=[96, 32, 16],
        metavar=("FACE", "TILE", "HALO"),
        help="the grid of the training through the global step (k = 4 and 8)",
    )
    ap.add_argument(
        "--exchange-n",
        type=int,
        nargs=3,
        default=[96, 16, 8],
        metavar=("FACE", "TILE", "HALO"),
        help="the grid of the domain-decomposed step (--ranks processes, gloo)",
    )
    ap.add_argument("--ranks", type=int, default=4, help="ranks of that step (4: balanced)")
    ap.add_argument(
        "--no-crops", action="store_true", help="leave out the device crops (data.device_crops)"
    )
    return ap


def main(argv: list[str] | None = None) -> dict:
    a = parser().parse_args(argv)
    device = torch.device(a.device)
    pipeline = make_pipeline(a.width, a.levels)
    size = a.tile + 2 * a.halo
    cuda = device.type == "cuda"
    bf16 = resolve_precision(a.precision, device) == "bf16"
    report = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "precision": "bf16 autocast" if bf16 else "fp32",
        "model": {"width": a.width, "levels": a.levels},
        "flops_per_tile_forward": tile_flops(pipeline, size),
    }
    # Training NHWC as the loop's channels_last=null picks it on CUDA (bf16 here stands for CUDA).
    report["train"] = train_step_rate(pipeline, device, size, a.batch, a.steps, bf16)
    runs = [(48, 16, 8), (96, 32, 16), (192, 64, 16)] if a.scaling else [(a.n, a.tile, a.halo)]
    report["rollout"] = [
        rollout_step_rate(pipeline, device, n, t, h, a.steps, a.batch, a.precision)
        for n, t, h in runs
    ]
    # the default rollout's tiles and whole faces (--tile: skill kept, docs/rollout.md)
    report["rollout_whole_faces"] = rollout_step_rate(
        pipeline, device, a.n, a.n, a.halo, a.steps, max(1, a.batch // 4), a.precision
    )
    face, tile, halo = a.global_n
    report["train_global"] = global_step_rates(
        pipeline, device, face, tile, halo, bf16, a.steps, _timed
    )
    face, tile, halo = a.exchange_n
    report["exchange"] = exchange_rates(
        pipeline, device, face, tile, halo, a.ranks, a.steps, a.precision
    )
    report["projection"] = project(pipeline, device, report["rollout"], a)
    if not a.no_crops:  # skipped without zarr
        report["device_crops"] = device_crop_rates(device)
    if a.record:
        import sys

        from benchmarks.scaling_doc import record

        record(report, " ".join(["python", "-m", "benchmarks.gpu_check", *sys.argv[1:]]))
    return _emit(report, a.out)


def project(pipeline, device, rollout: list[dict], a) -> dict:
    """The production grid's step from the forward rate measured on its tile size (which also
    measures the memory of one batch of its tiles)."""
    face, tile, halo = a.production
    tiles, size = 6 * (face // tile) ** 2, tile + 2 * halo
    flops = tile_flops(pipeline, size)
    batch = a.production_batch or (64 if device.type == "cuda" else 2)
    fwd = tile_forward_rate(pipeline, device, size, batch, a.steps, a.precision)
    step = tiles / fwd["tiles_per_s"]
    last = rollout[-1]
    rollout_rate = last["tiles"] * tile_flops(pipeline, last["tile"] + 2 * last["halo"])
    rollout_rate /= last["step_s"]
    return {
        "grid": f"face {face}, tile {tile}, halo {halo}",
        "tiles": tiles,
        "tile_size": size,
        "flops_per_tile_forward": flops,
        "flops_per_step": tiles * flops,
        "tile_forward": fwd,
        "achieved_flops_per_s": fwd["tiles_per_s"] * flops,
        "projected_step_s": step,
        "projected_sim_days_per_wall_day_at_1h": 3600.0 / step,
        "rollout_achieved_flops_per_s": rollout_rate,
        "projected_step_s_from_rollout_flops": tiles * flops / rollout_rate,
        "note": "projections from this run's measurements, not measurements: the step is the "
        "network forwards of every production tile at the rate measured on that tile size "
        "(the rollout adds gather, reassembly, nudging and writing: 1.04-1.12x on CPU, "
        "benchmarks/bench_rollout.py)",
    }


def _emit(report: dict, out: str | None) -> dict:
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return report


if __name__ == "__main__":
    main()
