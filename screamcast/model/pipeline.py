# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""normalise -> network -> residual -> denormalise -> precipitation handling.

The statistics live in buffers, so a checkpoint's ``state_dict`` carries them and the model
normalises the way it was trained on any store. Prognostic variables are predicted as a
residual scaled by the std of one-step changes; diagnostic ones as a normalised field.
``do_precip_relu=False`` (recommended): bounded outputs (precipitation,
:mod:`screamcast.model.constraints`) are left unclipped in training (a ReLU there can leave a
head stuck below zero with no gradient) and clipped at inference.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn

from screamcast.data.forcing import forcing_names, position_channels
from screamcast.data.stats import Stats
from screamcast.model import constraints
from screamcast.model.hyperdiffusion import check_nu, hyperdiffuse


def forcing_channels(solar_time: bool, insolation: bool = True) -> int:
    """The forcing's channels: each of :func:`~screamcast.data.forcing.forcing_names` at t
    and t+1 (the insolation; with ``solar_time`` also cos, sin of the hour angle; none
    without a sun)."""
    return 2 * len(forcing_names(solar_time, insolation))


class Pipeline(nn.Module):
    def __init__(
        self,
        net: nn.Module,
        stats: Stats,
        prognostic: list[str],
        diagnostic: list[str],
        static: list[str],
        do_precip_relu: bool = False,
        precip_name: str = "precip",
        solar_time: bool = False,
        grid_metric: bool = False,
        insolation: bool = True,
        hyperdiffusion: float = 0.0,
        input_times: int = 1,
    ):
        super().__init__()
        self.input_times = check_input_times(input_times)
        self.hyperdiffusion = check_nu(hyperdiffusion)  # the predicted state's dissipation
        if solar_time and not insolation:
            raise ValueError("data.solar_time needs data.insolation (the sun it tells the time of)")
        self.solar_time = solar_time  # the forcing it takes (forcing_channels)
        self.insolation = insolation
        self.grid_metric = grid_metric  # the position inputs it takes (position_channels)
        self.net = net
        self.prognostic, self.diagnostic, self.static = (
            list(prognostic),
            list(diagnostic),
            list(static),
        )
        self.do_precip_relu = do_precip_relu
        outputs = self.prognostic + self.diagnostic
        self.bounded = constraints.bounded_outputs(outputs, precip_name)  # [(index, bounds)]

        def column(values):  # (1, V, 1, 1) for broadcasting over (B, V, S, S)
            return torch.tensor(values, dtype=torch.float32).view(1, -1, 1, 1)

        self.register_buffer("mean", column([stats.mean[v] for v in outputs]))
        self.register_buffer("std", column([stats.std[v] for v in outputs]))
        self.register_buffer("diff_std", column([stats.diff_std[v] for v in self.prognostic]))
        self.register_buffer("static_mean", column([stats.mean[v] for v in self.static]))
        self.register_buffer("static_std", column([stats.std[v] for v in self.static]))

    @property
    def n_prognostic(self) -> int:
        return len(self.prognostic)

    def loss_scale(self) -> torch.Tensor:
        """Per-output scale of the loss: diff_std for prognostic, std for diagnostic."""
        C = self.n_prognostic
        return torch.cat([self.diff_std, self.std[:, C:]], dim=1)  # (1, C + D, 1, 1)

    def state_inputs(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``state (B, input_times C, S, S)`` (t's fields, then t - dt's) -> (t's fields
        ``(B, C, S, S)``, the network's state channels): t normalised, and with two input
        times the change over the last step in the residual's units (diff_std), which a
        network reads more easily than a second state nearly equal to the first."""
        C = self.n_prognostic
        if state.shape[1] != self.input_times * C:
            raise ValueError(
                f"the network takes {self.input_times} input time(s) of {C} prognostic "
                f"channels, got {state.shape[1]} channels"
            )
        now = state[:, :C]  # (B, C, S, S)
        x = (now - self.mean[:, :C]) / self.std[:, :C]
        if self.input_times == 2:
            x = torch.cat([x, (now - state[:, C:]) / self.diff_std], dim=1)  # (B, 2C, S, S)
        return now, x

    def forward(
        self, state: torch.Tensor, forcing: torch.Tensor, static: torch.Tensor
    ) -> torch.Tensor:
        """One step in physical units.

        state ``(B, C, S, S)`` (``(B, 2C, S, S)``, t's fields then t - dt's, with two input
        times); forcing ``(B, forcing_channels, S, S)`` (t's, then t+1's); static ``(B, F,
        S, S)`` whose first ``len(static)`` channels are store variables (normalised here).
        Returns ``(B, C + D, S, S)``: the prognostic state at t+1 and the diagnostics.
        """
        C, Fs = self.n_prognostic, len(self.static)
        state, x = self.state_inputs(state)
        s = torch.cat([(static[:, :Fs] - self.static_mean) / self.static_std, static[:, Fs:]], 1)
        out = self.net(torch.cat([x, forcing, s], dim=1)).float()  # (B, C + D, S, S)
        prog = hyperdiffuse(state + out[:, :C] * self.diff_std, self.hyperdiffusion)
        diag = self.mean[:, C:] + out[:, C:] * self.std[:, C:]
        y = torch.cat([prog, diag], dim=1)
        if self.do_precip_relu:
            y = constraints.relu(y, self.bounded)
        return y

    @torch.no_grad()
    def predict(self, state, forcing, static) -> torch.Tensor:
        """Inference: :meth:`forward`, bounded outputs clipped (precipitation at zero)."""
        return constraints.clamp_(self.forward(state, forcing, static), self.bounded)


def check_input_times(input_times) -> int:
    """1 (the state at t) or 2 (and at t - dt); anything else refused, naming the key."""
    if input_times not in (1, 2):
        raise ValueError(f"config: data.input_times must be 1 or 2, got {input_times!r}")
    return int(input_times)


def input_channels(
    n_prognostic: int,
    n_static: int,
    solar_time: bool = False,
    grid_metric: bool = False,
    insolation: bool = True,
    input_times: int = 1,
) -> int:
    """State (each input time) + forcing + static variables + position features (with the
    grid's metric)."""
    forcing = forcing_channels(solar_time, insolation)
    return input_times * n_prognostic + forcing + n_static + position_channels(grid_metric)


def build_pipeline(cfg, stats: Stats) -> Pipeline:
    """The network and pipeline a ``TrainConfig`` (the dataclass or its OmegaConf form, or a
    checkpoint's config) describes."""
    from screamcast.model.unet import UNet

    d, m = cfg.data, cfg.model  # an old checkpoint's: migrated (checkpoint_format)
    solar_time, grid_metric = bool(d.solar_time), bool(d.grid_metric)
    insolation, times = bool(d.insolation), check_input_times(getattr(d, "input_times", 1))
    net = UNet(
        input_channels(
            len(d.prognostic), len(d.static), solar_time, grid_metric, insolation, times
        ),
        len(d.prognostic) + len(d.diagnostic),
        m.width,
        m.levels,
        m.blocks,
        m.upsample,
    )
    return Pipeline(
        net,
        stats,
        d.prognostic,
        d.diagnostic,
        d.static,
        cfg.pipeline.do_precip_relu,
        cfg.pipeline.precip_name,
        solar_time,
        grid_metric,
        insolation,
        float(m.hyperdiffusion),
        times,
    )


def pipeline_of(description, stats: Stats, hyperdiffusion: float | None = None) -> Pipeline:
    """The network a checkpoint's description names: its variables and its model-only config
    (``network``, :func:`screamcast.checkpoint_format.network_of`), not the training config;
    ``hyperdiffusion``: the step's dissipation, when inference sets its own."""
    net, v = description.network, description.variables
    model = dict(net["model"])
    if hyperdiffusion is not None:
        model["hyperdiffusion"] = hyperdiffusion
    cfg = SimpleNamespace(
        data=SimpleNamespace(
            prognostic=list(v.prognostic),
            diagnostic=list(v.diagnostic),
            static=list(v.static),
            **net["inputs"],
        ),
        model=SimpleNamespace(**model),
        pipeline=SimpleNamespace(**net["pipeline"]),
    )
    return build_pipeline(cfg, stats)
