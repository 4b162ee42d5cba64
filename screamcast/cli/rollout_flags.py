# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's flags and the inference config keys they set: the one table between them.

``scripts/ace/run_screamcast_nudged.py`` builds its parser from it, the docs' options table
is generated from it, and an error about a key names the flag that set it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from screamcast.config.choices import (
    GUARD_ACTIONS,
    INCREMENTS,
    PARTIAL,
    PRECISIONS,
    TIME_INTERPOLATIONS,
    WINDOWS,
)


@dataclass(frozen=True)
class Flag:
    flag: str
    key: str  # the inference config's key (section.name)
    help: str
    kind: str = "value"  # value | true (store_true) | false (store_false) | switch | list
    type: type = str
    choices: tuple | None = None


def _comma_list(text: str) -> list[str]:
    return [v for v in text.split(",") if v]


FLAGS = (
    Flag("--checkpoint", "checkpoint.path", "a training checkpoint (best.pth)"),
    Flag("--data", "initial_condition.data", "store holding the initial condition (and truth)"),
    Flag(
        "--reference",
        "nudging.reference",
        "store to nudge toward: a cube whose face size divides the model's, or a regular "
        "(time, lat, lon) grid",
    ),
    Flag(
        "--output",
        "output.path",
        "local zarr store to write (must not exist, unless --resume/--overwrite); never an "
        "input, inside one or containing one; locked for the run",
    ),
    Flag(
        "--start",
        "initial_condition.start",
        "initial time, e.g. 2020-01-13T00:00 (default: first; second for two input times)",
    ),
    Flag("--steps", "output.steps", "steps to run (default 24)", type=int),
    Flag(
        "--halo-adjoint",
        "stepper.halo_adjoint",
        "overlap-add tile halo predictions inside each face",
        "true",
    ),
    Flag(
        "--halo-adjoint-cross-face",
        "stepper.halo_adjoint_cross_face",
        "also overlap-add across face edges; needs --halo-adjoint",
        "true",
    ),
    Flag(
        "--halo-adjoint-window",
        "stepper.halo_adjoint_window",
        "each tile's weight across its halo in the overlap-add (default cosine; uniform is the "
        "plain average); needs --halo-adjoint",
        choices=WINDOWS,
    ),
    Flag("--nudge-tau-hours", "nudging.tau_hours", "relaxation time scale (default 6)", type=float),
    Flag(
        "--nudge-increment",
        "nudging.increment",
        "a coarser cube reference's increment on the model's cells (default bicubic)",
        choices=INCREMENTS,
    ),
    Flag(
        "--nudge-time",
        "nudging.time",
        "the reference between its samples (default cubic)",
        choices=TIME_INTERPOLATIONS,
    ),
    Flag(
        "--nudge-vars",
        "nudging.variables",
        "comma-separated (default: the checkpoint's winds and temperature, every level, by "
        "name: u/U, v/V, temperature/T_mid/T); T_mid nudges all its levels, T_mid[10:] those "
        "from level index 10 down",
        "list",
    ),
    Flag(
        "--nudge-method",
        "nudging.method",
        "a registered corrector, or module:name (default relaxation)",
    ),
    Flag(
        "--partial-reference",
        "nudging.partial_reference",
        "a lat-lon reference covering part of the globe: nudge inside it (default) or refuse it",
        choices=PARTIAL,
    ),
    Flag(
        "--assume-grid",
        "stores.assume_grid",
        "accept stores without lat/lon as on the checkpoint's grid (else refused)",
        "true",
    ),
    Flag(
        "--climatology",
        "scoring.climatology",
        "a store on the model's grid whose time mean the anomaly correlation uses (needs the "
        "truth in --data)",
    ),
    Flag(
        "--metrics",
        "scoring.metrics",
        "comma-separated registered metrics (or module:name) to score beside the built-in ones",
        "list",
    ),
    Flag("--device", "stepper.device", "cpu, cuda, cuda:1, ... (default cpu)"),
    Flag("--batch-size", "stepper.batch_size", "tiles per forward pass (default 16)", type=int),
    Flag(
        "--tile",
        "stepper.tile",
        "inference tiles' side in pixels, dividing the face (default: the largest that fits; "
        "with --halo-adjoint the training tile; a resume keeps its output's)",
        type=int,
    ),
    Flag(
        "--threads",
        "stepper.threads",
        "torch's CPU threads (default 0: OMP_NUM_THREADS if set, else the cores other "
        "processes leave idle)",
        type=int,
    ),
    Flag(
        "--precision",
        "stepper.precision",
        "the network's (auto: bf16 on CUDA and on CPUs with AMX-BF16, else fp32; a resume "
        "keeps its output's); halo, reassembly and nudging stay fp32",
        choices=PRECISIONS,
    ),
    Flag(
        "--channels-last",
        "stepper.channels_last",
        "the network's convolutions in NHWC (default; --no-channels-last for NCHW)",
        "switch",
    ),
    Flag(
        "--overlap-exchange",
        "stepper.overlap_exchange",
        "several ranks: run the tiles that need no halo while the halo exchange is in flight "
        "(default; --no-overlap-exchange waits for it first)",
        "switch",
    ),
    Flag(
        "--resume",
        "output.resume",
        "continue an interrupted output (refused if its settings differ)",
        "true",
    ),
    Flag(
        "--overwrite",
        "output.overwrite",
        "replace an existing rollout output (only one this script wrote), kept until the new "
        "one is complete",
        "true",
    ),
    Flag(
        "--guard",
        "guard.action",
        "a step whose global mean, spread or extremes leave the training statistics' bounds "
        "(guard.* keys) stops the run (default), warns, or is let through (off: only a "
        "non-finite state stops it)",
        choices=GUARD_ACTIONS,
    ),
    Flag("--no-progress", "output.progress", "no progress bar", "false"),
)
FLAG_OF = {f.key: f.flag for f in FLAGS}


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag, its value stored under its config key only when given."""
    for f in FLAGS:
        kw = dict(dest=f.key, default=argparse.SUPPRESS, help=f.help)
        if f.kind == "true":
            parser.add_argument(f.flag, action="store_true", **kw)
        elif f.kind == "false":
            parser.add_argument(f.flag, action="store_false", **kw)
        elif f.kind == "switch":
            parser.add_argument(f.flag, action=argparse.BooleanOptionalAction, **kw)
        elif f.kind == "list":
            parser.add_argument(f.flag, type=_comma_list, **kw)
        else:
            parser.add_argument(f.flag, type=f.type, choices=f.choices, **kw)


def options_table() -> str:
    """The docs' options table (Markdown): flag, config key, what it does."""
    rows = ["| flag | config key | what it does |", "| --- | --- | --- |"]
    rows += [f"| `{f.flag}` | `{f.key}` | {f.help} |" for f in FLAGS]
    return "\n".join(rows)
