# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Training samples: crops with halo of the extended faces, read from a cubed-sphere store.

A crop is an ``S x S`` window of one *extended face* (the face plus the ring of width ``halo``
that :class:`~screamcast.halo.HaloOperator` builds), so crops near an edge carry the same KNN
halo values the rollout's tiles see. Lazily (large stores, S3) only the chunks a crop touches
are read (:mod:`screamcast.data.lazy_crops`), all reads of a sample at once through zarr's
async API; in memory (small stores, :mod:`screamcast.data.in_memory`) the extended faces are
built once and a crop is a slice. Where each sample comes from is drawn by
:class:`~screamcast.data.crop_sampler.CropSampler`. Samples are made a batch at a time
(``__getitems__``, which the DataLoader calls).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from functools import cached_property
from typing import Any

import numpy as np
import torch
import zarr

from screamcast.data.arrays import (
    channel_arrays,
    in_memory_arrays,
    is_column_store,
    read_units,
)
from screamcast.data.batch import CropBatch
from screamcast.data.calendar import decode_group_time
from screamcast.data.crop_sampler import CropSampler, time_range, window_starts
from screamcast.data.forcing import (
    extended_position_features,
    forcing_fields,
    forcing_names,
    solar_terms,
    trig_channels,
)
from screamcast.data.in_memory import InMemoryExtendedFaces
from screamcast.data.lazy_crops import LazyCropReads
from screamcast.data.region_sampler import RegionPlan, region_plan
from screamcast.data.remote import zarr_store
from screamcast.data.shard_cache import cache_wrapper
from screamcast.grid.extended import ExtendedFaceGeometry
from screamcast.grid.tiling import TileLayout


class CropDataset(InMemoryExtendedFaces, LazyCropReads, torch.utils.data.Dataset):
    """Random crops with halo and ``steps``-step targets from a cubed-sphere store.

    Sample ``i`` of epoch ``e`` is a pure function of ``(seed, e, i)`` (:meth:`draw`): the same
    on every rank and worker, whatever the order. ``fixed=True`` ignores the epoch (validation).
    ``in_memory=True`` builds the extended faces of the time range once per process (for
    stores that fit in RAM, ``(P / n)^2`` times over): a crop is then a slice. Lazily, a
    sample whose reads fail with a transient error is read again ``retries`` times, waiting
    ``backoff * 2^attempt`` seconds (on top of s3fs's and botocore's own retries).
    Each item is a dict of float32 tensors: ``state (C, S, S)`` at t, ``target (k, C + D, S,
    S)`` at t+1..t+k, ``forcing (k + 1, Fc, S, S)`` insolation / S0 at t..t+k (``solar_time``:
    and cos, sin of the local hour angle, Fc = 3), ``static (F + K, S, S)`` (the store's static
    variables, then K position features: ``grid_metric``'s 4, sin/cos lat, lon), ``area (S,
    S)``; plus ``time``, ``face``, ``origin`` (oy, ox) for bookkeeping.
    """

    def __init__(
        self,
        url: str,
        layout: TileLayout,
        prognostic: list[str],
        diagnostic: list[str] = (),
        static: list[str] = (),
        crop: int = 64,
        steps: int = 1,
        time_range: tuple[int, int] | None = None,
        samples: int = 1000,
        seed: int = 0,
        fixed: bool = False,
        storage_options: dict | None = None,
        times: np.ndarray | None = None,
        in_memory: bool = False,
        retries: int = 3,
        backoff: float = 1.0,
        store_wrapper: Any = None,
        solar_time: bool = False,
        insolation: bool = True,
        grid_metric: bool = False,
        regions: RegionPlan | None = None,
        max_in_flight: int = 16,
        s3_client: str = "s3fs",
        segments: list | None = None,
    ):
        P = layout.padded
        if not 0 < crop <= P:
            raise ValueError(f"crop={crop} must be in 1..{P} (face {layout.n} + 2 * halo)")
        self.url, self.layout, self.crop, self.steps = url, layout, crop, steps
        self.prognostic, self.diagnostic, self.static = (
            list(prognostic),
            list(diagnostic),
            list(static),
        )
        self.samples, self.seed, self.fixed, self.epoch = samples, seed, fixed, 0
        self.storage_options, self.in_memory = storage_options, in_memory
        self.retries, self.backoff = retries, backoff  # per sample, after s3fs's own retries
        # e.g. data.read_counter.ReadCounter: sees every read the crops make (this process's)
        self.store_wrapper = store_wrapper
        self.solar_time = solar_time
        self.insolation = insolation
        self.grid_metric = grid_metric
        # crops drawn a region at a time (region_sampler): each fetched region is cut into
        # regions.per_region crops, kept until its window of crops is done
        self.regions = regions
        # a sharded store is read in whole shards (one request each) when crops come from
        # regions, in parts (a request per inner chunk) otherwise
        self.whole_shards = regions is not None
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.max_in_flight = max_in_flight  # a sample's reads in flight at once
        self.s3_client = s3_client  # s3fs or obstore (remote.zarr_store)
        self.segments = segments  # independent runs in one store: no sample spans two
        self._init_state(layout)
        self._init_times(times, time_range)

    def _init_state(self, layout: TileLayout) -> None:
        """What the dataset keeps between samples (caches, handles, draws)."""
        self._region_cache: OrderedDict[tuple, dict] = OrderedDict()
        # (global batch G, world): index step * G + rank + j * world is rank's (StepBatches);
        # with regions each rank draws whole regions of its own, so no two ranks read one
        self.shard = (1, 1)
        self.geo = ExtendedFaceGeometry(layout)
        self._pid: int | None = None
        self._arrays: dict[str, Any] = {}
        self._units: list[tuple[list, list[int]]] = []  # lazy reads' units per group (_open)

    def _init_times(self, times, time_range) -> None:
        """The store's times and the start times whose targets lie inside ``time_range``."""
        url, steps = self.url, self.steps
        if times is None:
            store = zarr_store(url, self.storage_options)
            times = decode_group_time(zarr.open_group(store, mode="r"))
        self.times = times
        lo, hi = time_range or (0, len(times))
        self.t_lo, self.t_hi = lo, hi - steps
        if self.t_hi <= self.t_lo:
            raise ValueError(f"time range {lo}:{hi} of {url} is too short for {steps}-step samples")
        starts = None
        if self.segments and len(self.segments) > 1:
            starts = window_starts(lo, hi, steps, self.segments)
        P, crop, seed = self.layout.padded, self.crop, self.seed
        self.sampler = CropSampler(
            P, crop, self.t_lo, self.t_hi, seed, self.fixed, self.regions, starts
        )

    @classmethod
    def from_config(
        cls,
        data,
        split: str,
        layout: TileLayout,
        times: np.ndarray,
        steps: int = 1,
        samples: int | None = None,
        seed: int = 0,
        segments: list | None = None,
    ) -> CropDataset:
        """The ``train`` or ``valid`` crops a :class:`~screamcast.config.DataConfig` describes:
        its store, variables, crop size and time range (``valid``: fixed draws, seed + 1)."""
        if split not in ("train", "valid"):
            raise ValueError(f"split must be 'train' or 'valid', got {split!r}")
        valid = split == "valid"
        spec = data.valid_range if valid else data.train_range
        return cls(
            data.url,
            layout,
            list(data.prognostic),
            list(data.diagnostic),
            list(data.static),
            crop=data.crop,
            steps=steps,
            time_range=time_range(
                spec, len(times), steps, f"data.{'valid' if valid else 'train'}_range", data.url
            ),
            samples=data.valid_samples if valid else samples,
            seed=seed + valid,
            fixed=valid,
            storage_options=data.storage_options,
            times=times,
            in_memory=data.in_memory,
            solar_time=data.solar_time,
            insolation=data.insolation,
            grid_metric=data.grid_metric,
            regions=region_plan(data, layout.padded) if not valid else None,
            store_wrapper=cache_wrapper(data),
            segments=segments,
            max_in_flight=getattr(data, "max_in_flight", 16),
            s3_client=getattr(data, "s3_client", "s3fs"),
        )

    @cached_property
    def _position(self) -> np.ndarray:
        """``(K, 6, P, P)`` float32 position features of every extended-face pixel: the grid's
        metric if asked, then sin/cos of lat and lon, the insolation's inputs, so a crop needs
        no trigonometry (16 or 32 bytes per pixel, built on first use)."""
        return extended_position_features(self.geo, self.grid_metric)

    @cached_property
    def _solar(self) -> np.ndarray:
        """``(4, T)`` the time-only terms of the zenith angle at every store time, in the
        store's calendar (:func:`~screamcast.data.forcing.solar_terms`): computed once."""
        return np.stack(solar_terms(self.times))

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.samples

    def _open(self) -> dict[str, Any]:
        """Open the arrays once per process (s3fs and zarr's loop do not survive a fork)."""
        if self._pid != os.getpid():
            store = zarr_store(self.url, self.storage_options, client=self.s3_client)
            if self.store_wrapper is not None:
                store = self.store_wrapper(store)
            group = zarr.open_group(store, mode="r")
            variables = self.prognostic + self.diagnostic
            if is_column_store(group):  # E3SM's ncol order: mapped onto the faces, in memory
                source = in_memory_arrays(self.url, self.storage_options, variables, self.static)
            else:  # one array per channel (a level of a 3-D variable is a channel)
                source = channel_arrays(group, variables + self.static, self.url)
            if self.in_memory:  # {variables: (V, [time,] 6, P, P)} extended faces, see below
                self._check_memory()
                self._arrays = {
                    tuple(g): self._load_extended(source, g, static) for g, static in self._groups()
                }
            else:
                self._arrays = source
                # per group: the channels each read serves (a stacked store: all of them at
                # once), and where each of the group's variables lies in the units' order
                self._units = []
                for g, _ in self._groups():
                    units = read_units(source, g, self.whole_shards)
                    read = [name for names, _ in units for name in names]
                    self._units.append((units, [read.index(v) for v in g]))
            self._pid = os.getpid()
        return self._arrays

    def draw(self, index: int) -> tuple[int, int, int, int]:
        """``(time, face, oy, ox)`` of sample ``index`` this epoch (:class:`CropSampler`)."""
        return self.sampler.draw(index, self.epoch, self.shard)

    def _groups(self) -> list[tuple[list[str], bool]]:
        """(variables, static?): the time-dependent ones and the static ones, each assembled at
        once; empty groups left out."""
        groups = [(self.prognostic + self.diagnostic, False), (self.static, True)]
        return [(g, static) for g, static in groups if g]

    def read(self, t: int, face: int, oy: int, ox: int) -> dict[str, np.ndarray]:
        """Every variable's crop: time-dependent ones as ``(k + 1, S, S)``, static ``(S, S)``."""
        return self.read_many([(t, face, oy, ox)])[0]

    def read_many(self, draws: list[tuple[int, int, int, int]]) -> list[dict[str, np.ndarray]]:
        """:meth:`read` for several crops (one sample's reads in flight at a time: issuing a
        whole batch's at once was slower, see docs/performance.md)."""
        arrays = self._open()
        if self.in_memory:
            return [self._windows(arrays, *d) for d in draws]
        if self.regions is not None:
            return [self._from_region(arrays, *d) for d in draws]
        return [self._read_lazy(arrays, *d) for d in draws]

    def _forcing(self, static: np.ndarray, when: np.ndarray) -> np.ndarray:
        """The forcing channels (:func:`~screamcast.data.forcing.forcing_names`) of crops
        whose inputs are ``static (B, F + K, S, S)`` at the store's time indices ``when (B,
        k + 1)``: ``(B, k + 1, Fc, S, S)``, by the builder the rollout's tiles use."""
        B, _, S, _ = static.shape
        names = forcing_names(self.solar_time, self.insolation)
        if not names:  # a world without a sun: no forcing channels
            return np.empty((B, when.shape[1], 0, S, S), np.float32)
        trig = static[:, self._trig, None].astype(np.float64)  # (B, 4, 1, S, S)
        trig = trig.transpose(1, 0, 2, 3, 4)  # (4, B, 1, S, S)
        terms = self._solar[:, when, None, None]  # (4, B, k + 1, 1, 1)
        fields = forcing_fields(names, terms, trig)  # Fc x (B, k + 1, S, S)
        return np.stack(fields, axis=2).astype(np.float32)  # (B, k + 1, Fc, S, S)

    @cached_property
    def _trig(self) -> list[int]:
        """The static channels holding sin, cos of latitude and longitude."""
        return trig_channels(len(self.static), self.grid_metric)

    def __getitem__(self, index: int) -> CropBatch:
        return self.__getitems__([index])[0]

    def __getitems__(self, indices: list[int]) -> list[CropBatch]:
        """The samples of a batch, made together (the DataLoader calls this): insolation for
        all at once, no per-sample tensors. Each sample's tensors are views of ``(B, ...)``
        batch tensors."""
        draws = [self.draw(i) for i in indices]
        crops = self.read_many(draws)
        B, S, k, C = len(draws), self.crop, self.steps, len(self.prognostic)
        outputs, F = self.prognostic + self.diagnostic, len(self.static)
        state = np.empty((B, C, S, S), np.float32)
        target = np.empty((B, k, len(outputs), S, S), np.float32)
        K = len(self._position)  # (metric,) sin/cos lat, lon
        static = np.empty((B, F + K, S, S), np.float32)  # static variables, position
        area = np.empty((B, S, S), np.float32)
        when = np.empty((B, k + 1), np.int64)  # time indices of each sample
        for b, ((t, face, oy, ox), crop) in enumerate(zip(draws, crops, strict=True)):
            win = (face, slice(oy, oy + S), slice(ox, ox + S))
            for c, v in enumerate(outputs):
                if c < C:
                    state[b, c] = crop[v][0]
                target[b, :, c] = crop[v][1:]
            for c, v in enumerate(self.static):
                static[b, c] = crop[v]
            static[b, F:] = self._position[(slice(None), *win)]  # (K, S, S)
            area[b] = self.geo.area[win[1:]]  # the same on every face
            when[b] = np.arange(t, t + k + 1)
        area /= area.mean(axis=(1, 2), keepdims=True)
        batch = CropBatch(
            state=state,
            target=target,  # (B, k, C + D, S, S)
            forcing=self._forcing(static, when),  # (B, k + 1, Fc, S, S)
            static=static,
            area=area,
            time=np.array([d[0] for d in draws]),
            face=np.array([d[1] for d in draws]),
            origin=np.array([d[2:] for d in draws]).reshape(B, 2),
        )
        batch = CropBatch(*(torch.from_numpy(value) for value in batch))
        return [CropBatch(*(value[b] for value in batch)) for b in range(B)]
