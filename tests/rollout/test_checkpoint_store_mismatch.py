# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A checkpoint rolled out on a store of another grid and other variables is refused by naming
the mismatch, both sides of it, not by blaming the store for a variable it never had."""

from pathlib import Path

from tests.rollout.test_run_nudged import args, cli

ROOT = Path(__file__).resolve().parents[2]
HS_CHECKPOINT = ROOT / "benchmarks" / "held_suarez" / "emulator.pth"  # ne16pg2: U, V, T, PS
HS_STORE = ROOT / "benchmarks" / "held_suarez" / "initial_state.zarr"


def test_another_models_checkpoint_names_both_grids_and_both_variable_lists(
    tiny_store, tmp_path, capsys
):
    assert cli.main(args(HS_CHECKPOINT, tiny_store, tmp_path / "o.zarr", steps=1)) == 2
    err = capsys.readouterr().err
    assert (
        f"checkpoint {HS_CHECKPOINT} was trained on grid ne16pg2 with variables "
        "[U (4 levels), V (4 levels), T (4 levels), PS]; the initial condition "
        f"{tiny_store} (--data) is grid ne8pg2 with [land_fraction, orography, precip, "
        "temperature, tracer, u, v, vorticity], without U, V, T, PS" in err
    ), err
    assert not (tmp_path / "o.zarr").exists()


def test_this_stores_checkpoint_on_another_models_store(tiny_checkpoint, tmp_path, capsys):
    assert cli.main(args(tiny_checkpoint, HS_STORE, tmp_path / "o.zarr", steps=1)) == 2
    err = capsys.readouterr().err
    assert (
        "was trained on grid ne8pg2 with variables [u, v, vorticity, tracer, temperature, "
        f"precip, orography, land_fraction]; the initial condition {HS_STORE} (--data) is grid "
        "ne16pg2 with [PS, T (4 levels), U (4 levels), V (4 levels)], without u, v, vorticity, "
        "tracer, temperature, orography, land_fraction" in err
    ), err
    assert "has no variable" not in err
