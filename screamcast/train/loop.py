# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The Fabric training loop: data, model, optimizer, validation, checkpoints, preemption.

Batches are a pure function of the optimizer step (sample ``step * global_batch + i``), so a
resumed run sees exactly the batches an uninterrupted one would: resume is bitwise on CPU.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import numpy as np
import torch
from lightning.fabric import Fabric
from omegaconf import OmegaConf

from screamcast import __version__
from screamcast import checkpoint_io as cio
from screamcast.config import TrainConfig, check_schema
from screamcast.data.dataset import CropDataset
from screamcast.data.stats import Stats, compute_stats
from screamcast.data.store import open_store, time_step
from screamcast.file_lock import FileLock
from screamcast.grid import CubedSphereGrid, TileLayout
from screamcast.model.pipeline import build_pipeline
from screamcast.train.loss import rollout_loss
from screamcast.train.schedulers import build_scheduler


class StepBatches(torch.utils.data.Sampler):
    """This rank's sample indices for steps ``start..stop-1``: ``step * G + rank + j * world``."""

    def __init__(self, start: int, stop: int, global_batch: int, rank: int, world: int):
        self.start, self.stop, self.G, self.rank, self.world = (
            start,
            stop,
            global_batch,
            rank,
            world,
        )

    def __iter__(self):
        for step in range(self.start, self.stop):
            yield [step * self.G + i for i in range(self.rank, self.G, self.world)]

    def __len__(self) -> int:
        return self.stop - self.start


def _range(spec: list[int], total: int) -> tuple[int, int]:
    lo, hi = spec
    return (lo % total if lo < 0 else lo, total + hi if hi <= 0 else hi)


def check_compatible(ckpt: dict, cfg: TrainConfig, path: str) -> None:
    """Refuse a checkpoint whose variables, grid or architecture differ from the config."""
    c = ckpt["config"]
    for section, keys in (("data", ("prognostic", "diagnostic", "static", "n")),
                          ("model", ("width", "levels", "blocks"))):  # fmt: skip
        for key in keys:
            theirs, ours = c[section][key], OmegaConf.to_container(cfg[section])[key]
            if theirs != ours:
                raise ValueError(
                    f"checkpoint {path} has {section}.{key}={theirs}, but the config has {ours}"
                )


def _match_parameter_layout(optimizer: torch.optim.Optimizer) -> None:
    """Give each loaded optimizer state tensor its parameter's memory layout.

    A checkpoint written with the other ``channels_last`` setting holds moments in the other
    layout, and they would keep it (the updates are in place); AdamW's multi-tensor kernels
    need a parameter, its gradient and its moments to share strides, or they fall back to one
    kernel per tensor.
    """
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p, {})
            for key, value in state.items():
                moment = torch.is_tensor(value) and value.shape == p.shape
                if moment and value.stride() != p.stride():
                    state[key] = torch.empty_like(p, dtype=value.dtype).copy_(value)


def make_checkpoint(cfg, stats, pipeline, optimizer, scheduler, step, samples, best, dt) -> dict:
    """Self-contained for inference: weights, config, stats, variables, grid; plus the state to
    resume (optimizer, scheduler, counters, RNG). Tensors and plain containers only."""
    return {
        "model": pipeline,
        "optimizer": optimizer,
        "scheduler": scheduler,
        "step": step,
        "samples_seen": samples,
        "best_valid_loss": best,
        "config": OmegaConf.to_container(cfg, resolve=True),
        "stats": stats.to_dict(),
        "variables": {"prognostic": list(cfg.data.prognostic),
                      "diagnostic": list(cfg.data.diagnostic), "static": list(cfg.data.static)},
        "grid": {"n": cfg.data.n, "tile": cfg.data.tile, "halo": cfg.data.halo},
        "time_step_minutes": dt,
        "rng": cio.rng_state(),
        "screamcast_version": __version__,
    }  # fmt: skip


def train(cfg: TrainConfig) -> Path:
    """Run (or resume) one training stage; returns the run directory."""
    check_schema(cfg)
    precision = cfg.precision
    if precision == "auto":
        precision = "bf16-mixed" if torch.cuda.is_available() else "32-true"
    fabric = Fabric(accelerator=cfg.accelerator, devices=cfg.devices, num_nodes=cfg.num_nodes,
                    strategy=cfg.strategy, precision=precision)  # fmt: skip
    fabric.launch()
    fabric.seed_everything(cfg.seed)
    run_dir = Path(cfg.run_dir)
    rank0 = fabric.global_rank == 0
    held: list[FileLock] = []  # rank 0's lock stays here (not broadcast to the other ranks)
    cio._on_rank0(fabric, lambda: held.append(_claim_run_dir(cfg, run_dir)))
    try:
        return _train(fabric, cfg, run_dir, rank0)
    finally:
        for lock in held:
            lock.release()


def _claim_run_dir(cfg: TrainConfig, run_dir: Path) -> FileLock:
    """Rank 0: lock the run directory for this run (two trainings in one directory would
    overwrite each other's checkpoints), then record the resolved config."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(run_dir / ".lock", f"run directory {run_dir}").acquire()
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    return lock


def _train(fabric: Fabric, cfg: TrainConfig, run_dir: Path, rank0: bool) -> Path:
    d = cfg.data
    ds = open_store(
        d.url,
        d.storage_options,
        d.prognostic + d.diagnostic,
        d.static,
        d.n,
        assume_grid=d.assume_grid,
    )
    T = ds.sizes["time"]
    dt_minutes = float(time_step(ds) / np.timedelta64(1, "m"))
    train_range, valid_range = _range(d.train_range, T), _range(d.valid_range, T)
    resume = cio.choose_resume_checkpoint(run_dir, fabric)
    ckpt = cio.load_checkpoint(resume) if resume else None
    if ckpt is None and cfg.init_from:
        ckpt = cio.load_checkpoint(cfg.init_from)
        check_compatible(ckpt, cfg, cfg.init_from)
    if ckpt is not None:
        stats = Stats.from_dict(ckpt["stats"])
    else:  # rank 0 computes, everyone gets the same numbers
        variables = d.prognostic + d.diagnostic
        mine = compute_stats(ds, variables, d.static, time_range=train_range) if rank0 else None
        stats = fabric.broadcast(mine)
    if resume:
        check_compatible(ckpt, cfg, str(resume))
    pipeline = build_pipeline(cfg, stats)
    if ckpt is not None:
        pipeline.load_state_dict(ckpt["model"])
    channels_last = cfg.channels_last
    if channels_last is None:
        channels_last = fabric.device.type == "cuda"
    if channels_last:
        pipeline = pipeline.to(memory_format=torch.channels_last)
    o = cfg.optim
    optimizer = torch.optim.AdamW(
        pipeline.parameters(), lr=o.lr, betas=tuple(o.betas), weight_decay=o.weight_decay
    )
    scheduler = build_scheduler(optimizer, cfg.scheduler, cfg.optim.lr, cfg.steps)
    step, samples, best = 0, 0, float("inf")
    if resume:
        optimizer.load_state_dict(ckpt["optimizer"])
        _match_parameter_layout(optimizer)
        scheduler.load_state_dict(ckpt["scheduler"])
        step, samples, best = ckpt["step"], ckpt["samples_seen"], ckpt["best_valid_loss"]
        best = cio.apply_best_valid_loss_floor(ckpt, run_dir) if fabric.global_rank == 0 else best
        best = fabric.broadcast(best)
        cio.set_rng_state(ckpt["rng"])
        fabric.print(f"resumed from {resume} at step {step}")
    pipeline, optimizer = fabric.setup(pipeline, optimizer)

    layout = TileLayout(CubedSphereGrid(d.n), d.tile, d.halo)
    common = dict(layout=layout, prognostic=d.prognostic, diagnostic=d.diagnostic, static=d.static,
                  crop=d.crop, steps=cfg.rollout_steps, storage_options=d.storage_options,
                  times=ds["time"].values, in_memory=d.in_memory)  # fmt: skip
    world, rank = fabric.world_size, fabric.global_rank
    G = d.batch_size * world  # the global batch: sample step * G + i, i < G
    train_set = CropDataset(d.url, time_range=train_range, samples=cfg.steps * G,
                            seed=cfg.seed, **common)  # fmt: skip
    valid_set = CropDataset(d.url, time_range=valid_range, samples=d.valid_samples,
                            seed=cfg.seed + 1, fixed=True, **common)  # fmt: skip
    loader = torch.utils.data.DataLoader(
        train_set,
        batch_sampler=StepBatches(step, cfg.steps, G, rank, world),
        num_workers=d.num_workers,
    )
    valid_loader = torch.utils.data.DataLoader(
        torch.utils.data.Subset(valid_set, range(rank, d.valid_samples, world)),
        batch_size=d.batch_size,
    )
    loader, valid_loader = fabric.setup_dataloaders(
        loader, valid_loader, use_distributed_sampler=False
    )

    log = _MetricsLog(run_dir / "metrics.csv", rank0, resumed_at=step if resume else None)
    bar = _progress(fabric, cfg, step)
    with cio.PreemptionFlag() as flag:
        t0, seen0 = time.perf_counter(), samples
        t_fetch = t0
        for batch in loader:
            data_ms = 1e3 * (time.perf_counter() - t_fetch)  # the step waited this for its batch
            pipeline.train()
            loss, _ = rollout_loss(pipeline, batch, d.halo if cfg.rollout_steps > 1 else 0)
            optimizer.zero_grad(set_to_none=True)
            fabric.backward(loss)
            if cfg.optim.grad_clip:
                fabric.clip_gradients(pipeline, optimizer, max_norm=cfg.optim.grad_clip)
            optimizer.step()
            scheduler.step()
            step += 1
            samples += G
            mean_loss = float(fabric.all_reduce(loss.detach(), reduce_op="mean"))
            row = {"step": step, "samples": samples, "lr": scheduler.get_last_lr()[0]}
            row["train_loss"], row["data_ms"] = mean_loss, data_ms
            if step % cfg.valid_every == 0 or step == cfg.steps:
                row["valid_loss"] = validate(fabric, pipeline, valid_loader)
            is_best = row.get("valid_loss", float("inf")) < best
            best = min(best, row.get("valid_loss", best))
            row["images_per_s"] = (samples - seen0) / (time.perf_counter() - t0)
            if step % cfg.log_every == 0 or "valid_loss" in row:
                log.write(row)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{row['train_loss']:.4f}", lr=f"{row['lr']:.2e}",
                                img_s=f"{row['images_per_s']:.1f}")  # fmt: skip
            stop = flag.should_stop(fabric)
            if is_best or stop or step == cfg.steps or step % cfg.checkpoint_every == 0:
                keep = (
                    [f"steps_{step:08d}.pth"]
                    if cfg.keep_every and step % cfg.keep_every == 0
                    else []
                )
                state = make_checkpoint(
                    cfg, stats, pipeline, optimizer, scheduler, step, samples, best, dt_minutes
                )
                cio.save_checkpoint_atomic(
                    fabric, run_dir / cio.LATEST, state, best=is_best, keep_as=keep
                )
            if stop:
                fabric.print(f"signal {flag.signum}: saved latest.pth at step {step}, exiting")
                break
            t_fetch = time.perf_counter()
    if bar is not None:
        bar.close()
    return run_dir


@torch.no_grad()
def validate(fabric: Fabric, pipeline, loader) -> float:
    """Mean 1-step loss over the fixed validation samples (all ranks)."""
    pipeline.eval()
    total = torch.zeros(2, device=fabric.device)
    for batch in loader:
        one_step = {**batch, "target": batch["target"][:, :1]}
        loss, _ = rollout_loss(pipeline, one_step, 0)
        count = len(batch["state"])
        total[0] += loss.detach() * count
        total[1] += count
    total = fabric.all_reduce(total, reduce_op="sum")
    return float(total[0] / total[1])


class _MetricsLog:
    """``metrics.csv`` (appended across resumes) and, when tensorboard is installed, event
    files in ``run_dir/tensorboard``. Rank 0 only."""

    FIELDS = ["step", "samples", "lr", "train_loss", "valid_loss", "images_per_s", "data_ms"]

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
            line for line in lines[1:] if not line.split(",", 1)[0].isdigit()
            or int(line.split(",", 1)[0]) <= step
        ]  # fmt: skip
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


def _progress(fabric, cfg, step):
    if not cfg.progress or fabric.global_rank != 0:
        return None
    from tqdm import tqdm

    return tqdm(total=cfg.steps, initial=step, desc="train", dynamic_ncols=True)


def persistence_and_model_rmse(cfg: TrainConfig, checkpoint: str) -> dict[str, np.ndarray]:
    """One-step RMSE over the validation samples: the trained model vs persistence."""
    ckpt = cio.load_checkpoint(checkpoint)
    pipeline = build_pipeline(cfg, Stats.from_dict(ckpt["stats"]))
    pipeline.load_state_dict(ckpt["model"])
    d = cfg.data
    ds = open_store(
        d.url,
        d.storage_options,
        d.prognostic + d.diagnostic,
        d.static,
        d.n,
        assume_grid=d.assume_grid,
    )
    layout = TileLayout(CubedSphereGrid(d.n), d.tile, d.halo)
    valid = CropDataset(d.url, layout, d.prognostic, d.diagnostic, d.static, crop=d.crop, steps=1,
                        time_range=_range(d.valid_range, ds.sizes["time"]), samples=d.valid_samples,
                        seed=cfg.seed + 1, fixed=True, storage_options=d.storage_options,
                        times=ds["time"].values)  # fmt: skip
    batch = next(iter(torch.utils.data.DataLoader(valid, batch_size=d.valid_samples)))
    pred = pipeline.predict(batch["state"], batch["forcing"][:, 0:2, 0], batch["static"])
    C = len(d.prognostic)
    w = batch["area"][:, None]
    truth = batch["target"][:, 0, :C]

    def rmse(x):
        return (((x - truth) ** 2 * w).mean(dim=(0, 2, 3)) / w.mean()).sqrt().numpy()

    return {"model": rmse(pred[:, :C]), "persistence": rmse(batch["state"])}
