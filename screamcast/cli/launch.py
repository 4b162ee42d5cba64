# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""``screamcast-launch``: start a command on several ranks (torchrun's launcher, through its
API), and end a failure with each rank's worded error once, naming the ranks, instead of every
rank's copy followed by the launcher's ChildFailedError traceback.

    screamcast-launch --nproc-per-node 2 screamcast-rollout --checkpoint ... --steps 720

The ranks' ``error: ...`` lines go to a folder this launcher reads (``SCREAMCAST_ERRORS``, set
for them; :func:`collect_errors` in each command's guard writes them there); the rest of their
output reaches the terminal as it would under torchrun.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

ERRORS_ENV = "SCREAMCAST_ERRORS"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="screamcast-launch",
        description="Run a screamcast command on several ranks of this node (torchrun's "
        "launcher); a failure ends in one line per distinct error, naming its ranks.",
    )
    p.add_argument("--nproc-per-node", type=int, required=True, help="ranks on this node")
    p.add_argument("--master-port", type=int, default=0, help="0: a free port")
    p.add_argument("command", help="screamcast-rollout, screamcast-train, or a script's path")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the command's own arguments")
    return p


def resolve(command: str) -> tuple[str, list[str]]:
    """``(program, leading args)``: a console script runs as ``python -m`` its module (so the
    ranks use this interpreter), a ``.py`` file through this Python, anything else as given."""
    scripts = {
        "screamcast-rollout": "screamcast.cli.rollout",
        "screamcast-train": "screamcast.cli.train",
    }
    if command in scripts:
        return sys.executable, ["-m", scripts[command]]
    if command.endswith(".py"):
        return sys.executable, [command]
    found = shutil.which(command)
    if found is None:
        raise ValueError(f"command {command!r} not found")
    return found, []


def summary(folder: Path, world: int) -> list[str]:
    """One line per distinct error the ranks wrote, naming the ranks that wrote it."""
    by_message: dict[str, list[int]] = {}
    for rank in range(world):
        path = folder / f"rank{rank}.txt"
        if path.exists():
            for line in dict.fromkeys(path.read_text().splitlines()):
                by_message.setdefault(line, []).append(rank)
    lines = []
    for message, ranks in by_message.items():
        who = "every rank" if len(ranks) == world else "rank " + ", ".join(map(str, ranks))
        lines.append(message.replace("error: ", f"error ({who} of {world}): ", 1))
    return lines


def launch(a: argparse.Namespace, folder: Path) -> int:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    program, lead = resolve(a.command)
    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=a.nproc_per_node,
        rdzv_backend="c10d",
        rdzv_endpoint=f"localhost:{a.master_port}",
        run_id="screamcast",
        max_restarts=0,
        monitor_interval=0.2,
    )
    os.environ[ERRORS_ENV] = str(folder)
    try:
        elastic_launch(config, program)(*lead, *a.args)
    except ChildFailedError as err:
        lines = summary(folder, a.nproc_per_node)
        codes = {r: f.exitcode for r, f in err.failures.items()}
        for line in lines:
            print(line, file=sys.stderr)
        if not lines:
            ranks = ", ".join(f"rank {r} (exit {c})" for r, c in sorted(codes.items()))
            print(f"error: {ranks} failed; its own output is above", file=sys.stderr)
        return next((c for c in codes.values() if c > 0), 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if a.nproc_per_node < 1:
        print("error: --nproc-per-node must be >= 1", file=sys.stderr)
        return 2
    for name in ("torch.distributed.elastic", "torch.distributed.launcher"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # its lines repeat the failure
    folder = Path(tempfile.mkdtemp(prefix="screamcast-errors-"))
    try:
        return launch(a, folder)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
