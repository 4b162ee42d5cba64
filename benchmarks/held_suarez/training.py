# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The emulator's training: the stage schedule chained by Hydra overrides (warm-up and a high
rate, the cosine anneal, the 2- then 4-step fine-tunes on crops, then 4- and 8-step
fine-tunes through the global step with its correctors, then 8- and 16-step ones with the
grid-scale dissipation in the step), each stage starting from the last one's best checkpoint,
within a CPU budget of about 75 minutes on 2 cores (steps per stage below; the record has each
stage's minutes; docs/held-suarez.md)."""

from __future__ import annotations

import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = ["model.width=48", "model.levels=3", "model.blocks=1"]
# the step's correctors (screamcast/step/correctors.py): the dycore's dry mass and the mean
# temperature of its 4 equal-mass layers held through every step; the checkpoint records them
CORRECTORS = (
    "correctors=[{type: dry_mass, config: {variable: PS}},"
    " {type: mean_temperature, config: {variable: T}}]"
)
GLOBAL = ["unroll=global", CORRECTORS, "global_unroll.valid_samples=4"]
# nu lap(lap(y)) on each predicted tile (screamcast/model/hyperdiffusion.py): without it a
# two-cell checkerboard grows from a cube corner and stops a free run at day ~21; trained with
# it through 16-step unrolls every start held 120 days (docs/notes/2026-12-03-dissipation.md)
DISSIPATION = "model.hyperdiffusion=0.0039"
# (name, steps, overrides): crops are tile + 2 * halo (32) throughout, so the tile fine-tune
# (stage 3 of the production schedule) is the first stage itself
STAGES = [
    ("s1_warm", 2500, ["optim.lr=1e-3", "scheduler.warmup_steps=100", "valid_every=500"]),
    (
        "s2_anneal",
        800,
        ["optim.lr=1e-3", "scheduler=anneal", "scheduler.min_lr=1e-5", "valid_every=400"],
    ),
    ("s4a_two_step", 300, ["optim.lr=1e-4", "rollout_steps=2", "valid_every=150"]),
    ("s4b_four_step", 150, ["optim.lr=5e-5", "rollout_steps=4", "valid_every=75"]),
    # through the rollout's own step: whole cubes, halos the model's own, the correctors
    ("s5_global_four", 300, ["optim.lr=3e-5", "rollout_steps=4", *GLOBAL, "valid_every=100"]),
    ("s6_global_eight", 150, ["optim.lr=2e-5", "rollout_steps=8", *GLOBAL, "valid_every=50"]),
    # the same step with the dissipation the checkpoint then carries into every rollout
    (
        "s7_dissipated_eight",
        150,
        ["optim.lr=2e-5", "rollout_steps=8", *GLOBAL, DISSIPATION, "valid_every=50"],
    ),
    (
        "s8_dissipated_sixteen",
        80,
        ["optim.lr=2e-5", "rollout_steps=16", *GLOBAL, DISSIPATION, "valid_every=50"],
    ),
]


def config(*overrides):
    from hydra import compose, initialize_config_dir

    from screamcast.config import register

    register()
    with initialize_config_dir(str(ROOT / "configs"), version_base="1.3"):
        return compose("train", overrides=list(overrides))


def stage_overrides(extra: list[str], overrides=(), global_overrides=()) -> list[str]:
    """A stage's own overrides after every stage's (``overrides``), and ``global_overrides``
    when the stage trains through the global step (the climate's losses and its free runs
    at validation need whole cubes)."""
    whole_cubes = "unroll=global" in extra
    return [*overrides, *extra, *(global_overrides if whole_cubes else ())]


def train_stages(
    store: Path,
    workdir: Path,
    scale: float = 1.0,
    overrides: list[str] = (),
    log=print,
    global_overrides: list[str] = (),
) -> tuple[Path, dict]:
    """Run the stages not yet done; returns the last stage's best checkpoint and the minutes
    each stage took (``scale`` multiplies every stage's steps: the CI's tiny run;
    ``overrides`` go to every stage after the model's, ``global_overrides`` to the stages
    through the global step)."""
    from screamcast.train.loop import train

    previous, minutes = None, {}
    for name, steps, extra in STAGES:
        run_dir = workdir / "train" / name
        steps = max(int(steps * scale), 2)
        done = run_dir / "best.pth"
        if not (done.exists() and (run_dir / "done").exists()):
            over = [
                "data=held_suarez",
                f"data.url={store}",
                *MODEL,
                *stage_overrides(extra, overrides, global_overrides),
                f"steps={steps}",
                f"checkpoint_every={max(steps // 4, 1)}",
                "keep_every=0",
                "progress=false",
                "log_every=100",
                f"run_dir={run_dir}",
            ]
            if previous is not None:
                over.append(f"init_from={previous}")
            t0 = time.perf_counter()
            train(config(*over))
            (run_dir / "done").write_text(f"{(time.perf_counter() - t0) / 60:.2f}\n")
        minutes[name] = float((run_dir / "done").read_text())
        log(f"{name}: {steps} steps, {minutes[name]:.1f} min")
        previous = done
    return previous, minutes
