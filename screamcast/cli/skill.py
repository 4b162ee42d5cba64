# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-skill experiment=demo run_dir=runs/demo``: one-step skill of a run's best.pth.

Prints the held-out one-step RMSE of a run's ``best.pth`` next to persistence's, per
variable, over whole crops and over their inner part (``data.halo`` in from every side: what
a rollout tile keeps). Takes the same overrides as ``scripts/train.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from screamcast.cli.guard import guarded
from screamcast.cli.hydra_config import CONFIGS, compose_train


@guarded
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    flags = [a for a in argv if a.startswith("-")]
    if flags:
        said = f"{flags[0]}: the skill takes training overrides (key=value), no flags"
        print(f"error: {said}; see --help", file=sys.stderr)
        return 2
    from screamcast.config.train_checks import TrainConfigError, check_overrides

    try:
        check_overrides(argv, CONFIGS)
    except TrainConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    cfg = compose_train(argv)
    best = Path(cfg.run_dir) / "best.pth"
    if not best.is_file():
        print(f"error: {best} does not exist (run_dir= names a training run)", file=sys.stderr)
        return 2
    from screamcast.checkpoint_io import CheckpointError
    from screamcast.train.skill import inner_margin, persistence_and_model_rmse

    try:
        rmse = persistence_and_model_rmse(cfg, str(best))
    except (ValueError, CheckpointError) as err:  # a store or checkpoint unlike the config's
        print(f"error: {err}", file=sys.stderr)
        return 2
    h = inner_margin(cfg.data)
    print(f"one-step RMSE on {cfg.data.valid_samples} held-out crops ({best}), whole crops and")
    print(f"their inner part ({h} in from every side, what a rollout tile keeps):")
    print(f"{'variable':<14}{'model':>12}{'persistence':>14}{'ratio':>8}{'inner ratio':>13}")
    for i, var in enumerate(cfg.data.prognostic):
        m, p = rmse["model"][i], rmse["persistence"][i]
        inner = rmse["model_inner"][i] / rmse["persistence_inner"][i]
        print(f"{var:<14}{m:>12.4g}{p:>14.4g}{m / p:>8.3f}{inner:>13.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
