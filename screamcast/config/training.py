# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Structured configs registered with Hydra's ConfigStore: a misspelt key fails loudly.

``configs/train.yaml`` starts from the ``base_train`` schema; group files (``data/``,
``model/``, ...) fill it in and ``experiment/`` files override across groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore


@dataclass
class DataConfig:
    url: str = "demo_data/demo.zarr"
    storage_options: dict = field(default_factory=dict)
    # null (configs/data/store.yaml): taken from the store (screamcast.data.store_defaults)
    prognostic: list[str] | None = field(
        default_factory=lambda: ["u", "v", "vorticity", "tracer", "temperature"]
    )
    diagnostic: list[str] = field(default_factory=lambda: ["precip"])
    static: list[str] | None = field(default_factory=lambda: ["orography", "land_fraction"])
    n: int | None = 48  # face size in cells: ne * pg of E3SM's physics grid ne<ne>pg<pg>
    pg: int = 2  # cells per element edge, when the store's attrs do not name its grid
    # 3-D variables: the level indices to keep, e.g. {T_mid: [0, 4, 7]} (default: every level)
    levels: dict[str, list[int]] = field(default_factory=dict)
    tile: int | None = 16
    halo: int | None = 8
    crop: int | None = 32
    train_range: list[int] | None = field(default_factory=lambda: [0, -48])  # < 0: from end
    valid_range: list[int] | None = field(default_factory=lambda: [-48, 0])  # 0 as end: to end
    valid_samples: int = 32
    batch_size: int = 8
    num_workers: int = 0
    in_memory: bool = False  # extended faces of the time range in RAM, per process (small stores)
    stats_from_store: bool = False  # use an ingested store's statistics (all its times)
    assume_grid: bool = False  # accept a store without lat/lon as on the grid (else refused)
    # forcing: insolation at t and t+1, and with this the local solar time (cos, sin of the
    # hour angle) at both: at night the insolation is zero and cannot tell the time of day
    solar_time: bool = True
    # insolation at t and t+1 as input (false for data without a sun or seasons, such as a
    # Held-Suarez dycore: the network then sees no clock it could fit the year's noise to)
    insolation: bool = True
    # the grid's local metric as 4 more static inputs (screamcast/grid/metric.py): the east and
    # north extent of a pixel step in x and in y, which change across a face and past its edge
    grid_metric: bool = True
    # > 0: training crops drawn a region at a time (screamcast/data/region_sampler.py): blocks
    # of about region_stride origins a side, region_crops crops cut from each fetched region,
    # the crops of shuffle_regions regions shuffled together (lazily read stores read less)
    region_stride: int = 0
    region_crops: int = 4
    shuffle_regions: int = 16
    # with regions: the loader's workers only read whole windows of regions (a packed stack's
    # float16 words); unpacking, the halo ring and the crops are cut on the training device
    # (screamcast/data/device_crops.py): a tenth of the CPU work per crop, each region read once
    device_crops: bool = False
    # a local cache of the whole shards region reads fetch (data.shard_cache), for several
    # epochs over an S3 store: a directory ("" for none) and its bound in GiB
    cache_dir: str = ""
    cache_gb: float = 10.0
    max_in_flight: int = 16  # a lazily read sample's requests in flight at once
    s3_client: str = "s3fs"  # training crops' S3 reads: s3fs, or obstore (pip install obstore)
    # the global unroll's samples moved by the forcing's exact symmetries (quarter turns in
    # longitude, the north-south mirror: screamcast/data/symmetry.py); only for a forcing
    # symmetric in both (Held-Suarez). mirror_odd: the variables whose sign the mirror flips
    symmetry: bool = False
    mirror_odd: list[str] = field(default_factory=lambda: ["V", "v"])
    # 2: the network also takes the state one step earlier (as the last step's change, in
    # the residual's units), as the DLWP family does; trained through the global step
    input_times: int = 1


@dataclass
class ModelConfig:
    width: int = 32
    levels: int = 2
    blocks: int = 1
    # the decoder's upsampling: bilinear, or nearest (what older checkpoints were trained with,
    # and what they keep: their configs lack the key); docs/training.md
    upsample: str = "bilinear"
    # grid-scale dissipation of each predicted state, y - nu lap(lap(y)) per tile in grid units
    # (0: none; at most 1/64; screamcast/model/hyperdiffusion.py, docs/training.md)
    hyperdiffusion: float = 0.0


@dataclass
class PipelineConfig:
    do_precip_relu: bool = False
    precip_name: str = "precip"


@dataclass
class OptimConfig:
    lr: float = 1e-4
    weight_decay: float = 0.01
    betas: list[float] = field(default_factory=lambda: [0.9, 0.99])
    grad_clip: float = 1.0
    # the weights' exponential moving average (0: off): validated, kept and rolled out, while
    # the optimizer steps the raw weights (screamcast/train/weight_average.py)
    ema_decay: float = 0.0


@dataclass
class SchedulerConfig:
    name: str = "constant"  # constant | cosine | dampened_cosine_with_hard_restarts
    warmup_steps: int = 0
    cosine_n_cycles: int = 1
    damping: float = 0.5
    min_lr: float = 1e-6


@dataclass
class GlobalUnrollConfig:
    """Training through the global step (``unroll=global``: screamcast/train/global_unroll.py)."""

    cubes: int = 1  # whole cubes per rank and optimizer step
    checkpoint: bool = True  # recompute each step in the backward pass (memory: one state a step)
    reassembly: str = "intra-face"  # the rollout's: crop, intra-face or cross-face
    window: str = "cosine"  # the overlap-add's tile window
    valid_samples: int = 8  # validation cubes, spread evenly over data.valid_range
    # noise added to each unroll's first state in training, in units of each channel's
    # one-step-change std (the model then learns to pull a perturbed state back)
    input_noise: float = 0.0
    # days of a free run from the first validation cube at every validation, through the
    # rollout's step, checked by the rollout's guard (0: none); with it the stage's best
    # checkpoint is the one that ran furthest, then the lowest loss (train/free_run.py)
    valid_free_days: float = 0.0
    # >= 3: the free runs start from this many validation states (spread over data.valid_range)
    # and the best checkpoint is the one whose runs' climate is closest to the training data's
    # (zonal-mean U, T, eddy kinetic energy; the fraction of run-days short: train/free_run.py)
    valid_climate_starts: int = 0
    climate_names: list[str] = field(default_factory=lambda: ["U", "V", "T"])  # winds, temperature
    # the climate's losses beside each step's (screamcast/train/climate_losses.py): the power
    # per total wavenumber l = 1..spectral_lmax (0: the face size) as a relative L1, averaged
    # over the leads, and the unroll's time mean against the truth's (x rollout_steps)
    spectral_weight: float = 0.0
    spectral_lmax: int = 0
    time_mean_weight: float = 0.0


UNROLLS = ("crop_truth_ring", "crop_own_ring", "global")


@dataclass
class TrainConfig:
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    run_dir: str = "runs/default"
    init_from: str | None = None
    steps: int = 1000
    rollout_steps: int = 1
    # how each next input of a multi-step unroll is made: crop_truth_ring (a crop whose halo
    # ring is reset to the truth, as neighbouring tiles would supply it), crop_own_ring (the
    # crop's own prediction everywhere), global (whole cubes through the rollout's step:
    # gather, reassembly and correctors; halos the model's own, across cube edges too)
    unroll: str = "crop_truth_ring"
    lead_weights: list[float] = field(default_factory=list)  # per step of the unroll; [] = 1 each
    global_unroll: GlobalUnrollConfig = field(default_factory=GlobalUnrollConfig)
    # the step's correctors, {type: NAME, config: {...}} each (screamcast/step/correctors.py):
    # applied by unroll=global and recorded in the checkpoint, so the rollout applies them too
    correctors: list[Any] = field(default_factory=list)
    # the training loss, registered by name (screamcast.train.losses) or given as module:name
    loss: str = "area_weighted_mse"
    checkpoint_every: int = 100
    keep_every: int = 0
    valid_every: int = 100
    log_every: int = 10
    seed: int = 0
    accelerator: str = "auto"
    devices: int = 1
    num_nodes: int = 1
    strategy: str = "auto"
    precision: str = "auto"  # auto: bf16-mixed on CUDA, 32-true on CPU
    # Convolution weights (and so activations) in NHWC: what tensor-core convolutions want.
    # null: on CUDA only (on CPU it slows training of the larger models:
    # docs/notes/2026-11-training.md).
    channels_last: bool | None = None
    # torch threads per rank; null: the cores left to it after its data-loader workers
    # (screamcast.train.threads; OMP_NUM_THREADS, when set, is left as it is)
    threads: int | None = None
    progress: bool = True


def check_schema(cfg) -> None:
    """Refuse keys the schema does not have, however they were added.

    Hydra's struct mode stops ``optim.lrr=1``, but its own error message suggests
    ``+optim.lrr=1``, which (like ``++``) adds the key; it was then recorded and ignored.
    """
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError

    try:
        OmegaConf.merge(OmegaConf.structured(TrainConfig), OmegaConf.to_container(cfg))
    except ConfigKeyError as err:
        section = err.full_key.rpartition(".")[0]
        node = OmegaConf.select(OmegaConf.structured(TrainConfig), section) if section else None
        known = sorted((node if node is not None else OmegaConf.structured(TrainConfig)).keys())
        raise ValueError(
            f"config: unknown key '{err.full_key}' (known keys"
            f"{' of ' + section if section else ''}: {', '.join(known)})"
        ) from None


def register() -> None:
    """Register the schema and the ``eval_crop`` resolver (``tile + 2 * halo``)."""
    from omegaconf import OmegaConf

    ConfigStore.instance().store(name="base_train", node=TrainConfig)
    if not OmegaConf.has_resolver("eval_crop"):
        OmegaConf.register_new_resolver("eval_crop", _eval_crop)
    if not OmegaConf.has_resolver("largest_crop"):
        OmegaConf.register_new_resolver("largest_crop", largest_crop)


def _eval_crop(tile, halo) -> int | None:
    """``tile + 2 * halo``; None while they are still to be taken from the store."""
    return None if tile is None or halo is None else int(tile) + 2 * int(halo)


def largest_crop(cap, n, halo, levels) -> int | None:
    """The pretraining stages' crop: ``cap`` or the whole face with its halo where that is
    smaller, rounded down to the network's halvings (``2**levels``); None while the face size
    or halo is still to be taken from the store."""
    if n is None or halo is None:
        return None
    step = 2 ** int(levels)
    return min(int(cap), int(n) + 2 * int(halo)) // step * step


register()
