# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The Fabric training loop: set-up, the step, validation and the checkpoint policy.

Batches are a pure function of the optimizer step (sample ``step * global_batch + i``), so a
resumed run sees exactly the batches an uninterrupted one would: resume is bitwise on CPU.
A run directory that holds checkpoints is resumed with its full state; ``init_from`` loads
the weights (and statistics) of an earlier stage only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import torch
from lightning.fabric import Fabric

from screamcast import checkpoint_format as fmt
from screamcast import checkpoint_io as cio
from screamcast.config import TrainConfig, check_schema
from screamcast.config.train_checks import check_settings
from screamcast.data.batch import CropBatch, CubeBatch
from screamcast.data.calendar import calendar_of, seconds
from screamcast.data.compatible import channel_levels
from screamcast.data.crop_sampler import time_range
from screamcast.data.dataset import CropDataset
from screamcast.data.device_crops import DeviceBatches, device_crops
from screamcast.data.remote import StoreError
from screamcast.data.stats import Stats, compute_stats, store_stats
from screamcast.data.store import dataset_grid, open_configured, time_step
from screamcast.data.store_defaults import fill_from_store
from screamcast.file_lock import FileLock
from screamcast.grid import TileLayout
from screamcast.model.pipeline import build_pipeline
from screamcast.train import metrics_log as mlog
from screamcast.train import run_dir as run_dir_
from screamcast.train import threads
from screamcast.train.checkpoint_contents import (
    check_compatible,
    make_checkpoint,
    match_parameter_layout,
)
from screamcast.train.free_run import free_starts, selection_score
from screamcast.train.losses import loss_function
from screamcast.train.objectives import objective
from screamcast.train.run_state import PreemptionFlag, loaded_line, set_rng_state
from screamcast.train.schedulers import build_scheduler
from screamcast.train.stage_notes import demo_store_note
from screamcast.train.weight_average import WeightAverage

COLLAPSED = 0.97  # a validation loss above this share of the no-change predictor's: warned


class StepBatches(torch.utils.data.Sampler):
    """This rank's sample indices for steps ``start..stop-1``: ``step * G + rank + j * world``."""

    def __init__(self, start: int, stop: int, global_batch: int, rank: int, world: int):
        self.start, self.stop, self.global_batch = start, stop, global_batch
        self.rank, self.world = rank, world

    def __iter__(self):
        size = self.global_batch
        for step in range(self.start, self.stop):
            yield [step * size + i for i in range(self.rank, size, self.world)]

    def __len__(self) -> int:
        return self.stop - self.start


def make_fabric(cfg: TrainConfig) -> Fabric:
    precision = cfg.precision
    if precision == "auto":
        precision = "bf16-mixed" if torch.cuda.is_available() else "32-true"
    fabric = Fabric(
        accelerator=cfg.accelerator,
        devices=cfg.devices,
        num_nodes=cfg.num_nodes,
        strategy=cfg.strategy,
        precision=precision,
    )
    fabric.launch()
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", cfg.devices if cfg.devices > 0 else 1))
    threads.apply(cfg.threads, cfg.data.num_workers, local_ranks)
    fabric.seed_everything(cfg.seed)
    return fabric


def train(cfg: TrainConfig) -> Path:
    """Run (or resume) one training stage; returns the run directory."""
    check_schema(cfg)
    check_settings(cfg)  # before any store is opened or model built
    taken = fill_from_store(cfg.data, cfg.rollout_steps, cfg.model.levels)  # data=store
    check_settings(cfg)
    fabric = make_fabric(cfg)
    if taken:
        fabric.print(taken, flush=True)
    run_dir = Path(cfg.run_dir)
    held: list[FileLock] = []  # rank 0's lock stays here (not broadcast to the other ranks)
    cio._on_rank0(fabric, lambda: held.append(run_dir_.claim(run_dir)))
    try:
        if fabric.global_rank == 0 and (note := run_dir_.resume_note(cfg, run_dir)):
            fabric.print(note, flush=True)  # before the store is read: a reuse, said first
        trainer = Trainer(fabric, cfg, run_dir)  # a refused config stops here, unrecorded
        cio._on_rank0(fabric, run_dir_.record_config, cfg, run_dir)
        trainer.fit()
    finally:
        for lock in held:
            lock.release()
    if trainer.stopped_by is not None:  # saved and resumable, but not finished: say so
        raise run_dir_.TrainingStopped(trainer.stopped_by, run_dir)
    return run_dir


class Trainer:
    """One training stage on the ranks of ``fabric``: ``fit()`` steps to ``cfg.steps``."""

    def __init__(self, fabric: Fabric, cfg: TrainConfig, run_dir: Path):
        self.fabric, self.cfg, self.run_dir = fabric, cfg, run_dir
        self.rank0 = fabric.global_rank == 0
        d = cfg.data
        self.ds = open_configured(d)  # d's 3-D variables become their channels
        if self.rank0 and (note := demo_store_note(cfg, self.ds)):
            fabric.print(note, flush=True)
        self.dt_minutes = seconds(time_step(self.ds)) / 60.0
        self.calendar = calendar_of(self.ds["time"].values)  # recorded in the checkpoints
        names = [*d.prognostic, *d.diagnostic, *d.static]
        self.levels = channel_levels(self.ds, names)  # likewise: what each channel index is
        self.resumed_from = cio.choose_resume_checkpoint(run_dir, fabric)
        self.step, self.samples, self.best = 0, 0, float("inf")
        self.stopped_by: int | None = None  # the signal that stopped fit() early
        self._build_model()
        self._build_data()

    def _initial_state(self) -> tuple[dict | None, Stats]:
        """The checkpoint to start from (a resume, or ``init_from``'s weights) and the stats."""
        cfg, d = self.cfg, self.cfg.data
        path = self.resumed_from or cfg.init_from
        ckpt = fmt.load(path) if path else None
        if ckpt is not None:
            desc = fmt.ModelDescription.from_dict(ckpt["description"])
            check_compatible(desc, cfg, str(path), self.ds.attrs["grid"])
            if not self.resumed_from:
                self.fabric.print(loaded_line(path, ckpt), flush=True)
            return ckpt, Stats.from_dict(ckpt["description"]["stats"])
        T = self.ds.sizes["time"]
        variables = d.prognostic + d.diagnostic
        if d.stats_from_store:  # an ingested store's statistics: no statistics pass
            return None, store_stats(self.ds, [*variables, *d.static], d.url)
        steps = cfg.rollout_steps
        train_times = time_range(d.train_range, T, steps, "data.train_range", d.url)
        outcome = None
        if self.rank0:  # rank 0 computes, everyone gets the same numbers, or its refusal
            where = dict(time_range=train_times, url=d.url, storage_options=d.storage_options)
            try:
                outcome = ("ok", compute_stats(self.ds, variables, d.static, **where))
            except StoreError as err:  # the other ranks wait in the broadcast: tell them
                outcome = ("refused", str(err))
        kind, value = self.fabric.broadcast(outcome)
        if kind == "refused":
            raise StoreError(value)
        return None, value

    def _build_model(self) -> None:
        cfg, fabric = self.cfg, self.fabric
        ckpt, self.stats = self._initial_state()
        self.loss = loss_function(cfg.loss)
        pipeline = build_pipeline(cfg, self.stats)
        if ckpt is not None:
            pipeline.load_state_dict(ckpt["model"])
        channels_last = cfg.channels_last
        if channels_last is None:
            channels_last = fabric.device.type == "cuda"
        if channels_last:  # before the optimizer and DDP: their buckets follow the layout
            pipeline = pipeline.to(memory_format=torch.channels_last)
        o = cfg.optim
        optimizer = torch.optim.AdamW(
            pipeline.parameters(), lr=o.lr, betas=tuple(o.betas), weight_decay=o.weight_decay
        )
        self.scheduler = build_scheduler(optimizer, cfg.scheduler, o.lr, cfg.steps)
        resumed = ckpt if self.resumed_from else None
        if resumed is not None:
            WeightAverage.resume_raw(pipeline, resumed)  # the weights the optimizer stepped
            self._restore(ckpt, optimizer)
        self.pipeline, self.optimizer = fabric.setup(pipeline, optimizer)
        # on the weights' device and dtype (None: off)
        self.average = WeightAverage.of(o.ema_decay, self.pipeline.module, resumed)

    def _restore(self, ckpt: dict, optimizer: torch.optim.Optimizer) -> None:
        """The full state of a resumed run: optimizer, schedule, counters, best loss, RNG."""
        optimizer.load_state_dict(ckpt["optimizer"])
        match_parameter_layout(optimizer)
        self.scheduler.load_state_dict(ckpt["scheduler"])
        self.step, self.samples = ckpt["step"], ckpt["samples_seen"]
        best = ckpt["best_valid_loss"]
        if self.rank0:
            best = cio.apply_best_valid_loss_floor(ckpt, self.run_dir)
        self.best = self.fabric.broadcast(best)
        set_rng_state(ckpt["rng"])
        self.fabric.print(f"resumed from {self.resumed_from} at step {self.step}")

    def _build_data(self) -> None:
        cfg, d, fabric = self.cfg, self.cfg.data, self.fabric
        layout = TileLayout(dataset_grid(self.ds), d.tile, d.halo)
        times = self.ds["time"].values
        world, rank = fabric.world_size, fabric.global_rank
        module = self.pipeline.module if hasattr(self.pipeline, "module") else self.pipeline
        self.objective = objective(
            cfg, self.pipeline, module, self.loss, self.ds, layout, fabric.device, self.stats
        )
        per_rank = cfg.global_unroll.cubes if cfg.unroll == "global" else d.batch_size
        self.global_batch = per_rank * world  # sample step * global_batch + i, i < global_batch
        train_set, valid_set, batch, n_valid = self.objective.datasets(
            layout, times, cfg.steps * self.global_batch, cfg.seed
        )
        if isinstance(train_set, CropDataset):
            # regions (data.region_stride) owned by one rank
            train_set.shard = (self.global_batch, world)
        workers = dict(
            num_workers=d.num_workers,
            worker_init_fn=threads.single_threaded_worker if d.num_workers else None,
        )
        valid_loader = torch.utils.data.DataLoader(
            torch.utils.data.Subset(valid_set, range(rank, n_valid, world)), batch_size=batch
        )
        # every rank's free runs start at the same validation cubes: one answer on any count
        self.free_starts = free_starts(cfg.global_unroll, valid_set)
        self.valid_loader = fabric.setup_dataloaders(valid_loader, use_distributed_sampler=False)
        steps = (self.step, cfg.steps)
        if device_crops(d, train_set, fabric.device, fabric.print):  # workers read, device cuts
            self.loader = DeviceBatches(train_set, rank, steps, per_rank, fabric.device, **workers)
            return
        batches = StepBatches(*steps, self.global_batch, rank, world)
        loader = torch.utils.data.DataLoader(train_set, batch_sampler=batches, **workers)
        self.loader = fabric.setup_dataloaders(loader, use_distributed_sampler=False)

    def train_step(self, batch: CropBatch | CubeBatch) -> float:
        """One optimizer step; returns the loss averaged over the ranks."""
        cfg = self.cfg
        self.pipeline.train()
        loss, _ = self.objective(batch)
        self.optimizer.zero_grad(set_to_none=True)
        self.fabric.backward(loss)
        if cfg.optim.grad_clip:
            self.fabric.clip_gradients(self.pipeline, self.optimizer, max_norm=cfg.optim.grad_clip)
        self.optimizer.step()
        if self.average is not None:
            self.average.update(self.pipeline.module)
        self.scheduler.step()
        self.step += 1
        self.samples += self.global_batch
        return float(self.fabric.all_reduce(loss.detach(), reduce_op="mean"))

    @torch.no_grad()
    def validate(self) -> tuple[float, float, float | None]:
        """Mean 1-step loss over the fixed validation samples (all ranks), the trivial
        predictor's on the same samples (no change: what a collapsed network scores), and the
        days the free run from the first validation cube held (None: not asked)."""
        self.pipeline.eval()
        total = torch.zeros(3, device=self.fabric.device)
        with torch.no_grad():
            for batch in self.valid_loader:
                loss, trivial = self.objective.validation(batch)
                count = len(batch.state)
                total[0] += loss.detach() * count
                total[1] += trivial * count
                total[2] += count
        total = self.fabric.all_reduce(total, reduce_op="sum")
        free = self.fabric.broadcast(self._free_runs(), src=0)  # one best checkpoint on all ranks
        return float(total[0] / total[2]), float(total[1] / total[2]), free

    def _free_runs(self) -> dict | None:
        """The free runs' columns (None: not asked): days held (the shortest), and with the
        climate selection its numbers and score."""
        if not self.free_starts:
            return None
        if self.objective.probe is None:
            return {"valid_free_days": self.objective.free_days(self.free_starts[0])}
        held, climate = self.objective.free_climate(self.free_starts)
        numbers = {f"valid_climate_{k}": v for k, v in climate.items() if k != "times"}
        return {"valid_free_days": min(held)} | numbers

    def _validation_row(self) -> dict:
        """The validation's columns, and the score the best checkpoint minimises (the loss;
        with a free run, the days it fell short first; with the climate selection, the free
        runs' climate score: train/free_run.py)."""
        with self._averaged():  # the weights' average, when kept, is what is judged
            loss, trivial, free = self.validate()
        self._warn_if_collapsed(loss, trivial)
        row = {"valid_loss": loss, "valid_loss_no_change": trivial} | (free or {})
        if "valid_climate_score" in row:
            return row | {"valid_score": row["valid_climate_score"] + 1e-3 * loss}
        held = row.get("valid_free_days")
        days = self.cfg.global_unroll.valid_free_days
        return row | {"valid_score": selection_score(loss, held, days)}

    def _warn_if_collapsed(self, valid: float, trivial: float) -> None:
        """A validation loss at the no-change predictor's means the network predicts no
        change: too high a learning rate without warm-up does this silently (it sat at 0.95,
        the zero-tendency level, for 2,500 steps on Held-Suarez data)."""
        if self.step >= 2 * self.cfg.valid_every and valid >= COLLAPSED * trivial:
            self.fabric.print(
                f"warning: step {self.step}: validation loss {valid:.4g} is "
                f"{valid / trivial:.2f} of the no-change predictor's ({trivial:.4g}): the "
                "network has learnt nothing (collapsed, or not started); lower optim.lr or "
                "set scheduler.warmup_steps (docs/training.md)",
                flush=True,
            )

    def save(self, is_best: bool) -> None:
        """``latest.pth`` (with ``best.pth`` linked when this is the best state, and
        ``steps_<N>.pth`` every ``keep_every`` steps)."""
        cfg, step = self.cfg, self.step
        keep = [f"steps_{step:08d}.pth"] if cfg.keep_every and step % cfg.keep_every == 0 else []
        with self._averaged() as raw:
            self._write(step, keep, raw, is_best)

    def _averaged(self):
        """The weights' average in the pipeline inside (yields the raw weights), or nothing."""
        if self.average is None:
            return contextlib.nullcontext(None)
        return self.average.swapped(self.pipeline.module)

    def _write(self, step: int, keep: list[str], raw: dict | None, is_best: bool) -> None:
        """``latest.pth`` of the pipeline's weights (with the raw ones, under an average)."""
        state = make_checkpoint(
            self.cfg,
            self.stats,
            self.pipeline,
            self.optimizer,
            self.scheduler,
            step,
            self.samples,
            self.best,
            self.dt_minutes,
            self.ds.attrs["grid"],
            self.calendar,
            self.levels,
        )
        if raw is not None:
            state |= {"model_raw": raw, "ema_updates": self.average.updates}
        cio.save_checkpoint_atomic(
            self.fabric, self.run_dir / cio.LATEST, state, best=is_best, keep_as=keep
        )

    def _due(self, every: int) -> bool:
        return self.step % every == 0 or self.step == self.cfg.steps

    def fit(self) -> None:
        cfg = self.cfg
        log = mlog.MetricsLog(
            self.run_dir / "metrics.csv",
            self.rank0,
            resumed_at=self.step if self.resumed_from else None,
        )
        bar = mlog.progress_bar(self.fabric, cfg, self.step)
        t0, start = time.perf_counter(), self.step
        t_fetch, rate = t0, mlog.CurrentRate(self.samples)
        with PreemptionFlag() as flag:
            for batch in self.loader:
                row = {"data_ms": 1e3 * (time.perf_counter() - t_fetch)}  # waited for the batch
                row["train_loss"] = self.train_step(batch)
                row |= {
                    "step": self.step,
                    "samples": self.samples,
                    "lr": self.scheduler.get_last_lr()[0],
                }
                if self._due(cfg.valid_every):
                    row |= self._validation_row()
                is_best = row.get("valid_score", float("inf")) < self.best
                self.best = min(self.best, row.get("valid_score", self.best))
                row["images_per_s"] = rate.update(self.samples)  # over the last seconds
                if self.step % cfg.log_every == 0 or "valid_loss" in row:
                    log.write(row)
                    if bar is None:  # no progress bar: a line per log_every instead
                        self.fabric.print(mlog.log_line(row, cfg.steps), flush=True)
                mlog.show_progress(bar, row)
                stop = flag.should_stop(self.fabric)
                if is_best or stop or self._due(cfg.checkpoint_every):
                    self.save(is_best)
                if stop:
                    self.fabric.print(
                        f"signal {flag.signum} ({signal.Signals(flag.signum).name}): saved "
                        f"{self.run_dir}/latest.pth at step {self.step}, exiting; resume "
                        "with the same command (its run_dir is resumed from latest.pth)"
                    )
                    self.stopped_by = int(flag.signum or signal.SIGTERM)  # a rank told by another
                    break
                t_fetch = time.perf_counter()
        if bar is not None:
            bar.close()
        seconds = time.perf_counter() - t0
        self.fabric.print(mlog.run_summary(cfg, self.best, start, self.step, seconds), flush=True)
