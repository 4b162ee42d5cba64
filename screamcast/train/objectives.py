# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What a training stage optimises, named by the config's ``unroll``: crops unrolled with the
halo ring reset to the truth or left the model's own, or whole cubes through the global step.
Each builds its own samples and scores training and validation batches on one path (the
validation without gradients)."""

from __future__ import annotations

import numpy as np
import torch

from screamcast.config.training import UNROLLS
from screamcast.data.batch import CropBatch, CubeBatch, first_lead
from screamcast.data.calendar import seconds
from screamcast.data.crop_sampler import segments_of, time_range
from screamcast.data.cube_samples import CubeSamples, static_fields
from screamcast.data.dataset import CropDataset
from screamcast.data.zonal_climate import ZonalStats
from screamcast.halo import HaloOperator
from screamcast.model.state import State
from screamcast.step.correctors import StepGeometry, build_correctors
from screamcast.step.cube_predictor import CubePredictor
from screamcast.step.reassembly import Reassembly
from screamcast.step.step import Step
from screamcast.step.tile_inputs import TileInputs
from screamcast.train.free_run import ClimateProbe, FreeRun, climate_score, short_fraction
from screamcast.train.global_unroll import GlobalUnroll, lead_weights
from screamcast.train.loss import no_change_loss, rollout_loss


def check_unroll(cfg) -> None:
    if cfg.unroll not in UNROLLS:
        raise ValueError(f"config: unroll must be one of {', '.join(UNROLLS)}, got {cfg.unroll!r}")
    lead_weights(cfg.lead_weights, cfg.rollout_steps)
    if cfg.global_unroll.valid_free_days < 0:
        raise ValueError(
            f"config: global_unroll.valid_free_days={cfg.global_unroll.valid_free_days} must "
            "be >= 0 (0: no free run at validation)"
        )
    if cfg.global_unroll.valid_free_days and cfg.unroll != "global":
        raise ValueError(
            "config: global_unroll.valid_free_days runs the rollout's step from a whole cube: "
            "it needs unroll=global"
        )
    if cfg.correctors and cfg.unroll != "global":
        raise ValueError(
            "config: correctors act on the whole globe (global means): they need unroll=global "
            "in training (the rollout applies the checkpoint's correctors either way)"
        )


class CropObjective:
    """Crops of ``tile + 2 * halo`` (:class:`~screamcast.data.dataset.CropDataset`)."""

    def __init__(self, cfg, pipeline, loss, times, segments=None):
        """``times``: the store's model times (a crop's forcing is found at its own)."""
        self.cfg, self.pipeline, self.loss, self.times = cfg, pipeline, loss, times
        self.segments = segments  # the store's independent runs: no sample spans two
        reset = cfg.unroll == "crop_truth_ring" and cfg.rollout_steps > 1
        self.halo = cfg.data.halo if reset else 0
        self.weights = lead_weights(cfg.lead_weights, cfg.rollout_steps)

    def datasets(self, layout, times, samples: int, seed: int):
        d, k = self.cfg.data, self.cfg.rollout_steps
        runs = {"segments": self.segments}
        train = CropDataset.from_config(d, "train", layout, times, k, samples, seed, **runs)
        valid = CropDataset.from_config(d, "valid", layout, times, k, seed=seed, **runs)
        return train, valid, d.batch_size, d.valid_samples

    def __call__(self, batch: CropBatch):
        w = self.weights.to(batch.state.device) if self.cfg.lead_weights else None
        return rollout_loss(self.pipeline, batch, self.times, self.halo, w, loss=self.loss)

    def validation(self, batch: CropBatch) -> tuple[torch.Tensor, torch.Tensor]:
        one_step = first_lead(batch)
        loss, _ = rollout_loss(self.pipeline, one_step, self.times, 0, loss=self.loss)
        return loss, no_change_loss(self.pipeline, one_step, self.loss)


class GlobalObjective:
    """Whole cubes through the global step with the config's correctors."""

    def __init__(self, cfg, pipeline, module, loss, ds, layout, device, stats=None):
        """``pipeline``: what is called (Fabric's wrapper); ``module``: the pipeline itself;
        ``stats``: the training statistics (the free run's guard)."""
        self.cfg, self.ds, self.times, self.device = cfg, ds, ds["time"].values, device
        g = cfg.global_unroll
        op = HaloOperator(layout, device)
        inputs = TileInputs(module, layout, static_fields(ds, list(cfg.data.static)), op)
        reassembly = Reassembly(g.reassembly)
        predict = CubePredictor(pipeline, op, inputs, reassembly, g.window)
        area = np.asarray(layout.grid.area, np.float64)  # (6, n, n)
        channels = tuple(module.prognostic + module.diagnostic)
        geometry = StepGeometry(channels, torch.as_tensor(area, dtype=torch.float32))
        correctors = build_correctors(cfg.correctors, geometry)
        step = Step(predict, module.n_prognostic, correctors)
        weights = lead_weights(cfg.lead_weights, cfg.rollout_steps)
        scale, mean = module.loss_scale(), module.mean
        self.unroll = GlobalUnroll(
            step, loss, scale, mean, area, weights, g.checkpoint, g.input_noise
        ).with_climate_losses(
            self._power(layout), g.spectral_weight, g.time_mean_weight, module.std
        )
        self.free_run, self.probe = None, None
        if g.valid_free_days:  # the rollout's step: its bounds too
            free_step = Step(predict, module.n_prognostic, correctors, module.bounded)
            dt = self.times[1] - self.times[0]
            self.free_run = FreeRun.of(free_step, channels, stats, area, dt, g.valid_free_days)
            if g.valid_climate_starts:
                self.probe = self._climate_probe(channels, layout.grid, dt)

    def _climate_probe(self, channels, grid, dt) -> ClimateProbe:
        """The free runs' climate probe, daily, against the training range's climate (up to
        a year of its days)."""
        d, g = self.cfg.data, self.cfg.global_unroll
        if g.valid_climate_starts < 3:
            raise ValueError(
                "config: global_unroll.valid_climate_starts needs at least 3 starts (a climate "
                f"from one or two is one weather's), got {g.valid_climate_starts}"
            )
        every = max(1, min(round(86400.0 / seconds(dt)), self.free_run.steps))  # daily
        truth = ZonalStats(grid.lat, grid.area)
        uvt = tuple(g.climate_names)
        probe = ClimateProbe(channels, grid.lat, grid.area, truth, every, uvt)
        lo, hi = time_range(d.train_range, len(self.times))
        for t in list(range(lo, hi, every))[:365]:
            y = np.stack([np.asarray(self.ds[v].isel(time=t).values) for v in channels])
            probe.add(truth, torch.as_tensor(y))  # (C + D, 6, n, n)
        return probe

    def free_climate(self, samples: list) -> tuple[list[float], dict]:
        """Days each free run held from ``samples`` and their climate's score (one set of
        zonal statistics over every run's days, against the training data's)."""
        stats, held = self.probe.stats(), []
        for sample in samples:
            days, _ = self.free_run(self._state(sample), self.probe, stats)
            held.append(days)
        short = short_fraction(held, self.cfg.global_unroll.valid_free_days)
        return held, climate_score(stats, self.probe.truth, short)

    def _power(self, layout):
        """The spectral loss's power per degree on the layout's grid, when it is weighted."""
        g = self.cfg.global_unroll
        if not g.spectral_weight:
            return None
        from screamcast.train.climate_losses import SpectralPower

        return SpectralPower(layout.grid, g.spectral_lmax or layout.grid.n).to(self.device)

    def datasets(self, layout, times, samples: int, seed: int):
        d, k, T = self.cfg.data, self.cfg.rollout_steps, len(times)
        names = list(d.prognostic), list(d.diagnostic)
        train_times = time_range(d.train_range, T, k, "data.train_range", d.url)
        augment = None
        if d.symmetry:
            from screamcast.data.symmetry import SymmetryAugment

            augment = SymmetryAugment(layout.grid, [*names[0], *names[1]], tuple(d.mirror_odd))
        times = {"input_times": d.input_times}
        train = CubeSamples(self.ds, *names, train_times, k, samples, seed, False, augment, **times)
        n_valid = self.cfg.global_unroll.valid_samples
        # validation scores one step (the loss the stage's best checkpoint is chosen by)
        valid_times = time_range(d.valid_range, T, 1, "data.valid_range", d.url)
        valid = CubeSamples(self.ds, *names, valid_times, 1, n_valid, fixed=True, **times)
        return train, valid, self.cfg.global_unroll.cubes, n_valid

    def __call__(self, batch: CubeBatch):
        return self.unroll(batch, self.times)

    def validation(self, batch: CubeBatch) -> tuple[torch.Tensor, torch.Tensor]:
        one_step = first_lead(batch)
        loss, _ = self.unroll(one_step, self.times)
        return loss, self.unroll.no_change(one_step)

    def free_days(self, sample: CubeBatch) -> float:
        """Days the free run (``global_unroll.valid_free_days``) from a validation ``sample``
        (``state (C, 6, n, n)``, ``start``) held."""
        held, _ = self.free_run(self._state(sample))
        return held

    def _state(self, sample: CubeBatch) -> State:
        """A validation sample's state at its time (its previous step's fields too, for a
        network of two input times): where a free run starts."""
        C = len(self.cfg.data.prognostic)
        x = sample.state.to(self.device)  # (T C, 6, n, n)
        previous = x[C:] if len(x) == 2 * C else None
        return State.one(x[:C], self.times[int(sample.start)], previous)


def objective(cfg, pipeline, module, loss, ds, layout, device, stats=None):
    """The objective ``cfg.unroll`` names."""
    check_unroll(cfg)
    if cfg.unroll == "global":
        return GlobalObjective(cfg, pipeline, module, loss, ds, layout, device, stats)
    if cfg.data.symmetry:  # a crop moved by a turn of the globe is another crop already
        raise ValueError("data.symmetry=true moves whole cubes: it needs unroll=global")
    if cfg.data.input_times != 1:  # crops are read one start time at a time
        raise ValueError(
            f"data.input_times={cfg.data.input_times} is trained through the global step: it "
            "needs unroll=global"
        )
    return CropObjective(cfg, pipeline, loss, ds["time"].values, segments_of(ds))
