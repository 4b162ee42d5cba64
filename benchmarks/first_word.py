# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Each command's time to its first word (table: docs/notes/2026-12-08-own-data.md):
``--help``, a bad flag, and a config mistake (a misspelt training key, a missing
checkpoint), whole processes timed from launch to exit (the word is the last thing each
prints), and the slowest imports of ``python -X importtime`` behind them.

``python -m benchmarks.first_word [--repeats 5] [--record]``. Target: at most 2 s on an idle
2-core machine for every command (issue 69); a busy machine's numbers say so in the record
(the load average is kept beside them).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTE = ROOT / "docs/notes/2026-12-08-own-data.md"  # where the record's table is generated
TARGET_S = 2.0
CASES = {  # what each command is asked besides --help and a bad flag
    "screamcast-train": ["optim.lrr=1e-3"],
    "screamcast-rollout": ["--checkpoint", "missing.pth", "--data", "x.zarr", "--output", "o"],
    "screamcast-evaluate": ["missing.zarr", "--truth", "missing_truth.zarr"],
}


def commands() -> dict[str, str]:
    """The installed commands (pyproject.toml's [project.scripts])."""
    scripts = entry_points(group="console_scripts")
    return {ep.name: ep.value for ep in scripts if ep.value.startswith("screamcast.")}


def argv_of(target: str, args: list[str]) -> list[str]:
    module, function = target.split(":")
    code = f"import sys; from {module} import {function} as m; sys.exit(m())"
    return [sys.executable, "-c", code, *args]


def timed(argv: list[str], repeats: int) -> dict:
    """min/median/max wall seconds of ``argv`` and its exit code."""
    walls, code = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        run = subprocess.run(argv, capture_output=True, cwd=ROOT, timeout=300)
        walls.append(time.perf_counter() - t0)
        code = run.returncode
    return {
        "min_s": min(walls),
        "median_s": statistics.median(walls),
        "max_s": max(walls),
        "exit": code,
    }


def slowest_imports(argv: list[str], top: int = 3) -> list[tuple[str, float]]:
    """The ``top`` cumulative imports ``-X importtime`` reports, in seconds."""
    run = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, cwd=ROOT
    )
    found = []
    for line in run.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and len(m[2]) <= 2:  # top-level imports of the command
            found.append((m[3], int(m[1]) / 1e6))
    return sorted(found, key=lambda x: -x[1])[:top]


def measure(repeats: int) -> list[dict]:
    rows = []
    for name, target in sorted(commands().items()):
        for case, args in (
            ("--help", ["--help"]),
            ("bad flag", ["--no-such-flag"]),
            ("mistake", CASES.get(name)),
        ):
            if args is None:
                continue
            argv = argv_of(target, args)
            row = {"command": name, "case": case} | timed(argv, repeats)
            row["slowest_imports"] = slowest_imports(argv)
            rows.append(row)
            print(
                f"{name:26s} {case:9s} median {row['median_s']:.2f} s (max {row['max_s']:.2f})",
                flush=True,
            )
    return rows


def table(data: dict) -> str:
    lines = [
        f"`{data['command']}` at {data['machine']['commit']}, {data['when']}, load average "
        f"{data['load_before']:.2f} before; {data['repeats']} runs each, target <= {TARGET_S:g} s:",
        "",
        "| command | case | median s | max s | met | slowest imports |",
        "|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        imports = ", ".join(f"{m} {s:.2f}" for m, s in r["slowest_imports"])
        met = "yes" if r["median_s"] <= TARGET_S else "**no**"
        cells = [r["command"], r["case"], f"{r['median_s']:.2f}", f"{r['max_s']:.2f}", met]
        lines.append("| " + " | ".join([*cells, imports]) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--record", action="store_true")
    a = p.parse_args()
    load = os.getloadavg()[0]
    rows = measure(a.repeats)
    if a.record:
        from benchmarks.harness import save_record, write_block

        command = "python -m benchmarks.first_word " + " ".join(sys.argv[1:])
        body = {"rows": rows, "repeats": a.repeats, "load_before": load, "target_s": TARGET_S}
        save_record("first_word", "first_word", command.strip(), body)
        write_block(
            "first_word", NOTE, "<!-- first_word:begin -->", "<!-- first_word:end -->", table
        )


if __name__ == "__main__":
    main()
