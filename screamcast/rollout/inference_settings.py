# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The stepper's automatic settings made concrete when a rollout is planned: the inference
tile and the network's precision.

The defaults are the fastest settings that keep the emulator's skill (issue 59, measured in
docs/notes/2026-12-06-inference-tiles.md and docs/notes/2026-12-07-rollout-defaults.md):

- ``stepper.tile: null`` is the largest tile that divides the face, takes the network's
  halvings with the checkpoint's halo and has a window of at most :data:`MAX_WINDOW`
  pixels a side, among those that give every rank the same tiles; the network is fully
  convolutional, and a larger tile computes fewer halo pixels per kept pixel (whole faces of
  ne16pg2 are 0.56x the training tile's pixels);
- ``stepper.precision: auto`` is bf16 on CUDA and on CPUs with AMX-BF16 (2.6x faster there,
  skill unchanged to the third digit), fp32 elsewhere.

A resume takes both from the output it continues (its attrs record them) unless they are
given, so an output keeps its numbers whatever the machine or the defaults.
"""

from __future__ import annotations

import dataclasses

from screamcast.config.inference import InferenceConfig
from screamcast.rollout.domain import blocks
from screamcast.rollout.errors import RolloutError
from screamcast.rollout.stepper import resolve_precision

# an automatic tile's window (tile + 2 halo) at most this many pixels a side: at ne1024pg2
# (face 2048, halo 32) a tile of 256, 0.69x the training tile's (128) pixels a step, and a
# batch of 16 windows of a width-128 network's activations well inside a GPU
MAX_WINDOW = 512


def fitting_tiles(n: int, halo: int, levels: int) -> list[int]:
    """The tiles the grid and the network take, ascending: each divides the face, and with
    the checkpoint's halo on each side its window halves ``levels`` times."""
    return [t for t in range(1, n + 1) if n % t == 0 and (t + 2 * halo) % 2**levels == 0]


def check_tile(tile: int, halo: int, levels: int, n: int) -> None:
    """Refuse an inference tile outside :func:`fitting_tiles`, listing those."""
    tiles = fitting_tiles(n, halo, levels)
    if tile in tiles:
        return
    fits = ", ".join(map(str, tiles))
    if n % tile:
        raise RolloutError(
            f"{{stepper.tile}}: a tile of {tile} does not divide the face size {n} (tiles that "
            f"fit: {fits})",
            "stepper.tile",
        )
    raise RolloutError(
        f"{{stepper.tile}}: with the checkpoint's halo of {halo} on each side a tile of {tile} "
        f"has a window of {tile + 2 * halo} pixels, not divisible by 2**levels = {2**levels} "
        f"(the network's halvings; tiles that fit: {fits})",
        "stepper.tile",
    )


def balanced(world: int, m: int) -> bool:
    """Whether ``world`` ranks on faces of ``m x m`` tiles each hold the same number of tiles
    (:func:`screamcast.rollout.domain.blocks`; False where it cannot cut the faces)."""
    try:
        return len({len(b.tiles(m)) for b in blocks(world, m)}) == 1
    except ValueError:
        return False


def auto_tile(n: int, train_tile: int, halo: int, levels: int, world: int = 1) -> int:
    """The largest tile for ``stepper.tile: null`` (module docstring); the training tile when
    no larger one qualifies."""
    larger = [
        t
        for t in reversed(fitting_tiles(n, halo, levels))
        if t > train_tile and t + 2 * halo <= MAX_WINDOW
    ]
    return next((t for t in larger if balanced(world, n // t)), train_tile)


def adjoint_tile(n: int, train_tile: int, halo: int, levels: int) -> int:
    """The automatic tile with the halo adjoint: the checkpoint's training tile (the
    overlap-add was measured there, docs/rollout.md), else the largest fitting tile that
    leaves a face more than one tile, else the smallest that fits."""
    tiles = fitting_tiles(n, halo, levels)
    if train_tile in tiles and train_tile < n:
        return train_tile
    seamed = [t for t in tiles if t < n]
    return seamed[-1] if seamed else (tiles or [train_tile])[0]  # none fits: check_tile says


def check_adjoint_tile(
    tile: int, n: int, halo_adjoint: bool, cross_face: bool, tiles: list[int]
) -> None:
    """Refuse the intra-face halo adjoint at one tile a face: no two tiles of a face overlap,
    so it would silently reassemble as the crop does."""
    if not halo_adjoint or cross_face or tile < n:
        return
    smaller = ", ".join(str(t) for t in tiles if t < n) or "none"
    raise RolloutError(
        f"{{stepper.halo_adjoint}}: at {{stepper.tile}} {tile} each face is one tile, so the "
        f"intra-face halo adjoint has no overlapping halos to add and would change nothing; "
        f"give a smaller tile (tiles that fit: {smaller}), or add "
        "{stepper.halo_adjoint_cross_face} to add the halos across the cube's edges, or drop "
        "{stepper.halo_adjoint}",
        "stepper.halo_adjoint",
        "stepper.tile",
        "stepper.halo_adjoint_cross_face",
    )


def concrete(
    c: InferenceConfig, desc, n: int, world: int = 1, resumed: dict | None = None
) -> InferenceConfig:
    """``c`` with ``stepper.tile`` and ``stepper.precision`` concrete: as given, else the
    resumed output's (``resumed``: its attrs), else automatic (module docstring)."""
    s, halo, levels = c.stepper, int(desc.grid.halo), int(desc.model["levels"])
    resumed = resumed or {}
    tile = s.tile or resumed.get("tile")
    if tile is None and s.halo_adjoint:  # tiles whose halos overlap: the training tile's
        tile = adjoint_tile(n, int(desc.grid.tile), halo, levels)
    if tile is None:
        tile = auto_tile(n, int(desc.grid.tile), halo, levels, world)
    check_tile(int(tile), halo, levels, n)
    if not (s.tile is None and resumed.get("tile")):  # a resume keeps what its output ran
        fits = fitting_tiles(n, halo, levels)
        check_adjoint_tile(int(tile), n, s.halo_adjoint, s.halo_adjoint_cross_face, fits)
    precision = s.precision
    if precision == "auto":
        precision = resumed.get("precision") or resolve_precision("auto", s.device)
    stepper = dataclasses.replace(s, tile=int(tile), precision=precision)
    return dataclasses.replace(c, stepper=stepper)


def check_same_settings(every: list[tuple]) -> None:
    """Every rank's ``(tile, precision)`` as planned (``exchange.gather``): ``auto`` is each
    rank's own CPU's, and nodes of different CPUs would mix precisions in one output."""
    if len(set(every)) > 1:
        said = ", ".join(f"rank {r}: tile {t}, {p}" for r, (t, p) in enumerate(every))
        raise RolloutError(
            f"the ranks planned different settings ({said}): give --tile and --precision",
            "stepper.precision",
        )
