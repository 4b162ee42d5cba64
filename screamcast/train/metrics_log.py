# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The training run's metrics: ``metrics.csv`` and TensorBoard events."""

from __future__ import annotations

import csv
import os
from pathlib import Path


class MetricsLog:
    """``metrics.csv`` (appended across resumes, one row per step) and, when tensorboard is
    installed, event files in ``run_dir/tensorboard``. Rank 0 only.

    Not Lightning's ``CSVLogger``: a resumed run must drop the rows logged after its
    checkpoint and keep the columns of a file an older version started.
    """

    FIELDS = [
        "step",
        "samples",
        "lr",
        "train_loss",
        "valid_loss",
        "valid_loss_no_change",
        "valid_free_days",
        "valid_climate_u_bias_rms",
        "valid_climate_t_bias_rms",
        "valid_climate_eke_error",
        "valid_climate_score",
        "valid_score",
        "images_per_s",
        "data_ms",
    ]

    def __init__(self, path: Path, enabled: bool, resumed_at: int | None = None):
        self.path, self.enabled, self.tb = path, enabled, None
        self.fields = self.FIELDS
        if enabled and resumed_at is not None and path.exists():
            self._drop_rows_after(resumed_at)
        if enabled and not path.exists():
            with open(path, "w", newline="") as f:
                csv.DictWriter(f, self.FIELDS).writeheader()
        elif enabled:  # a resumed run keeps the columns its file already has
            with open(path, newline="") as f:
                self.fields = next(csv.reader(f), None) or self.FIELDS
        if enabled:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(path.parent / "tensorboard"))
            except ImportError:  # tensorboard is optional
                pass

    def _drop_rows_after(self, step: int) -> None:
        """A run killed after its last checkpoint logged steps that the resumed run logs
        again: drop them, so each step has one row (the file is replaced atomically)."""
        with open(self.path, newline="") as f:
            lines = f.read().splitlines(keepends=True)
        keep = lines[:1] + [
            line
            for line in lines[1:]
            if not line.split(",", 1)[0].isdigit() or int(line.split(",", 1)[0]) <= step
        ]
        if len(keep) < len(lines):
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text("".join(keep))
            os.replace(tmp, self.path)

    def write(self, row: dict) -> None:
        if self.enabled:
            with open(self.path, "a", newline="") as f:
                csv.DictWriter(f, self.fields, extrasaction="ignore").writerow(row)
            if self.tb is not None:
                for key, value in row.items():
                    if key != "step":
                        self.tb.add_scalar(key, value, row["step"])
                self.tb.flush()


def progress_bar(fabric, cfg, step):
    """rank 0's progress bar (None: off, or another rank)."""
    if not cfg.progress or fabric.global_rank != 0:
        return None
    from tqdm import tqdm

    return tqdm(total=cfg.steps, initial=step, desc="train", dynamic_ncols=True)


def log_line(row: dict, steps: int) -> str:
    """One row of metrics.csv as a line of the job's log."""
    valid = ""
    if "valid_loss" in row:
        valid = f" valid_loss {row['valid_loss']:.5g} (no change {row['valid_loss_no_change']:.5g})"
        if "valid_free_days" in row:
            valid += f" free run held {row['valid_free_days']:g} days"
    return (
        f"step {row['step']}/{steps} train_loss {row['train_loss']:.5g}{valid} "
        f"lr {row['lr']:.3g} images/s {row['images_per_s']:.1f}"
    )


def show_progress(bar, row: dict) -> None:
    """The bar moved one step, with the row's loss, rate and images per second."""
    if bar is not None:
        bar.update(1)
        bar.set_postfix(
            loss=f"{row['train_loss']:.4f}",
            lr=f"{row['lr']:.2e}",
            img_s=f"{row['images_per_s']:.1f}",
        )


class CurrentRate:
    """Images a second over about the last ``window`` seconds: the rate the run has now (an
    average since start-up hides a slowdown behind the first minutes, and the start-up's
    statistics pass and compilation behind a fast step)."""

    def __init__(self, samples: int, window: float = 30.0):
        import time

        self.window, self.clock = window, time.perf_counter
        self.marks = [(self.clock(), samples)]

    def update(self, samples: int) -> float:
        now = self.clock()
        self.marks.append((now, samples))
        while len(self.marks) > 2 and now - self.marks[1][0] >= self.window:
            self.marks.pop(0)  # keep one mark at least ``window`` old
        t, seen = self.marks[0]
        return (samples - seen) / max(now - t, 1e-9)


def run_summary(cfg, best: float, start: int, step: int, seconds: float) -> str:
    """What the run did and where its checkpoints are: the last line a job log shows."""
    said = f"{best:.5g}" if best < float("inf") else "none (no validation ran)"
    days = cfg.global_unroll.valid_free_days
    what = f"score (free runs of {days:g} days: held, then loss or climate)" if days else "loss"
    return (
        f"trained steps {start + 1}-{step} of {cfg.steps} in {seconds:.0f} s; "
        f"best validation {what} {said}; checkpoints in {cfg.run_dir} ({kept(cfg.run_dir)})"
    )


def kept(run_dir) -> str:
    """The run's checkpoints that exist (best.pth only once a validation ran)."""
    names = [n for n in ("latest.pth", "best.pth") if (Path(run_dir) / n).exists()]
    return ", ".join(names) or "none yet"
