# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where a global step's time goes, and what the network's forward gains from each option
(issue 41): the breakdown (gather, forward, reassembly, correctors, guard) of one step of a
checkpoint on a store, and the forward of all tiles in one batch eager under ``no_grad``,
under ``inference_mode``, ``torch.compile``'d and under bf16 autocast, interleaved medians.

    python scripts/research/forward_options.py --checkpoint benchmarks/held_suarez/emulator.pth \\
        --data benchmarks/held_suarez/initial_state.zarr [--repeats 10] [--output rec.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from benchmarks.harness import interleaved_many, provenance
    from screamcast.config.inference import InferenceConfig
    from screamcast.model.state import State
    from screamcast.rollout.driver import Part
    from screamcast.rollout.exchange import LocalExchange
    from screamcast.rollout.plan import plan_rollout
    from screamcast.rollout.rollout_step import build_guard, build_step

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--output")
    a = p.parse_args(argv)
    keys = {
        "checkpoint.path": a.checkpoint, "initial_condition.data": a.data,
        "output.path": str(Path(tempfile.mkdtemp()) / "o.zarr"), "output.steps": 1,
        "output.progress": False, "stepper.halo_adjoint": True, "stepper.batch_size": 10**4,
    }  # fmt: skip
    plan, inputs = plan_rollout(InferenceConfig.from_keys(keys))
    stepper = Part(plan, inputs, LocalExchange()).stepper("cpu")
    step, guard = build_step(plan, stepper), build_guard(plan)
    x = torch.as_tensor(inputs.initial[: len(plan.prog)])
    t0, t1 = plan.out_times[:2]
    tiles = stepper.block.gather(x)
    forcing, static = stepper.forcing(t0, t1), stepper.static_tiles
    net = stepper.pipeline
    y = stepper._forward(tiles, t0, t1)
    state = State.one(x, t0)
    fields = step(state, [t1]).fields()[0]

    def grad_off(fn):
        def run():
            with torch.no_grad():
                return fn()

        return run

    parts = {
        "gather": lambda: stepper.block.gather(x),
        "forward": lambda: stepper._forward(tiles, t0, t1),
        "reassembly": lambda: stepper.block.adjoint(y, False, "cosine"),
        "correctors": grad_off(lambda: [c(x[None], fields[None]) for c in step.correctors]),
        "guard": lambda: guard.check(fields, 1, t1),
        "whole step": lambda: step(state, [t1]),
    }
    breakdown = interleaved_many(parts, repeats=a.repeats, warmup=1)
    start = time.perf_counter()
    compiled = torch.compile(net.forward)
    with torch.no_grad():
        compiled(tiles, forcing, static)
    compile_s = time.perf_counter() - start

    def inference():
        with torch.inference_mode():
            return net.forward(tiles, forcing, static)

    def bf16():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            return net.forward(tiles, forcing, static).float()

    options = {
        "eager, no_grad": grad_off(lambda: net.forward(tiles, forcing, static)),
        "inference_mode": inference,
        "torch.compile": grad_off(lambda: compiled(tiles, forcing, static)),
        "bf16 autocast": bf16,
    }
    forwards = interleaved_many(options, repeats=a.repeats, warmup=1)
    with torch.no_grad():
        ref = net.forward(tiles, forcing, static)
        errors = {name: float((fn() - ref).abs().max()) for name, fn in options.items()}
    record = {
        "command": "python scripts/research/forward_options.py " + " ".join(argv or sys.argv[1:]),
        "machine": provenance(),
        "tiles": int(tiles.shape[0]),
        "threads": torch.get_num_threads(),
        "breakdown_ms": {k: 1e3 * v for k, v in breakdown.items()},
        "forward_ms": {k: 1e3 * v for k, v in forwards.items()},
        "max_abs_difference": errors,
        "compile_s": compile_s,
    }
    print(json.dumps(record, indent=1) + "\n")
    if a.output:
        Path(a.output).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
