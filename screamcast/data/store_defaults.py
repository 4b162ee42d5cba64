# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training settings taken from the store where the config leaves them null
(``configs/data/store.yaml``): a stage on a user's own store in one try.

The demo's and the Held-Suarez presets name their grid and variables; an ingested store holds
them itself (its grid, its time-dependent and static variables, its times), so the preset
asks only for ``data.url``. What was taken is said in one line, so a user sees it.
"""

from __future__ import annotations

from screamcast.data.store import dataset_grid, open_store

FILLED = ("n", "prognostic", "static", "tile", "halo", "train_range", "valid_range")
VALID_SHARE = 10  # the held-out validation times: the last tenth of the store


def fill_from_store(data, rollout_steps: int = 1, levels: int = 2) -> str | None:
    """Set ``data``'s null settings from the store it names; returns the line saying what
    they became (None when nothing was null). ``levels``: the network's halvings, which the
    crop ``tile + 2 * halo`` must take."""
    null = [k for k in FILLED if getattr(data, k) is None]
    if not null:
        return None
    ds = open_store(data.url, data.storage_options, assume_grid=data.assume_grid, pg=data.pg)
    taken = {}
    if data.n is None:
        taken["n"] = dataset_grid(ds).n
    n = taken.get("n", data.n)
    timed = [str(v) for v in ds.data_vars if "time" in ds[v].dims]
    if data.prognostic is None:
        diagnostic = set(data.diagnostic or [])
        taken["prognostic"] = [v for v in timed if v not in diagnostic]
    if data.static is None:
        taken["static"] = [str(v) for v in ds.data_vars if "time" not in ds[v].dims]
    if data.tile is None or data.halo is None:
        tile, halo = store_tile_halo(n, levels, data.tile, data.halo)
        taken |= {"tile": tile} if data.tile is None else {}
        taken |= {"halo": halo} if data.halo is None else {}
    held = max(ds.sizes["time"] // VALID_SHARE, rollout_steps + 1)
    if data.train_range is None:
        taken["train_range"] = [0, -held]
    if data.valid_range is None:
        taken["valid_range"] = [-held, 0]
    for key, value in taken.items():
        setattr(data, key, value)
    said = ", ".join(f"data.{k}={v}" for k, v in taken.items()).replace("'", "")
    return f"from the store {data.url}: {said}"


def store_tile_halo(
    n: int, levels: int, tile: int | None = None, halo: int | None = None
) -> tuple[int, int]:
    """The largest tile of at most 16 that divides the face and leaves more than one tile a
    face (the seams the crops and the halo adjoint learn), with the largest halo of at most
    half of it whose crop ``tile + 2 * halo`` halves ``levels`` times; a given ``tile`` or
    ``halo`` is kept. Refused, naming the keys, where none fits (an odd face)."""
    step = 2**levels
    tiles = [tile] if tile else [t for t in range(min(16, n - 1), 0, -1) if n % t == 0] or [n]
    for t in tiles:
        halos = [halo] if halo is not None else range(max(t // 2, 1), 0, -1)
        for h in halos:
            if (t + 2 * h) % step == 0 and h <= n // 2:
                return t, h
    raise ValueError(
        f"data.tile, data.halo: no tile of at most 16 dividing the face size {n} has a halo "
        f"with tile + 2 * halo divisible by 2**model.levels = {step}; set data.tile and "
        "data.halo (and data.crop) yourself"
    )
