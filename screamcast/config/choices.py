# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The values a setting may take, in one place: the config checks them, the modules that act
on them (halo, stepper, nudging) refuse anything else."""

WINDOWS = ("uniform", "linear", "cosine")  # the overlap-add's tile windows (screamcast.halo)
PRECISIONS = ("auto", "bf16", "fp32")  # the network's arithmetic in the rollout
INCREMENTS = ("bicubic", "bilinear", "block")  # a coarser cube reference's increment
TIME_INTERPOLATIONS = ("cubic", "linear")  # a nudging reference between its samples
PARTIAL = ("nudge", "refuse")  # a regional nudging reference
GUARD_ACTIONS = ("stop", "warn", "off")  # the rollout guard (screamcast.rollout.guard)

# the largest grid-scale dissipation nu (model.hyperdiffusion, stepper.hyperdiffusion): the
# explicit step damps every mode without reversing its sign (64 nu <= 1)
MAX_HYPERDIFFUSION = 1.0 / 64.0
# screamcast-export --average: instantaneous, or means over each day or month
AVERAGES = ("none", "daily", "monthly")
