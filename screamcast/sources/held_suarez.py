# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Held-Suarez (1994) on Google's ``dinosaur`` spectral dynamical core: a real, turbulent 3-D
atmosphere to train and judge the emulator on (``../shared/reference/held-suarez.md``).

Dry primitive equations on sigma levels with Newtonian relaxation of temperature toward a
zonally symmetric equilibrium and Rayleigh drag near the surface; no seasons, no diurnal cycle,
no orography, no moisture. The state is spectral (vorticity, divergence, temperature variation,
log surface pressure): a restart is four arrays of modal coefficients, and a state of one
truncation pads (zero modes) or truncates to another, which is how the T21 baseline starts
from the T42 truth.

Values on E3SM's physics grid are the spectral expansion evaluated exactly at each cell's centre
(:class:`CellSynthesis`), not an interpolation of the Gaussian grid and not a cell mean.

``dinosaur`` (and JAX) are the optional extra ``screamcast[dycore]``: imported here only.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import numpy as np

FIELDS = ("vorticity", "divergence", "temperature_variation", "log_surface_pressure")
# the Gaussian latitudes of each truncation (dinosaur's Grid.T<N>: quadratic grids)
TRUNCATIONS = (21, 31, 42, 85)


class DycoreError(ValueError):
    """A setting or restart the dynamical core cannot use, named in the message."""


def _dinosaur():
    try:
        import dinosaur
    except ImportError as err:  # the optional extra
        raise DycoreError(
            "the Held-Suarez source needs the optional extra: pip install 'screamcast[dycore]' "
            f"(dinosaur and JAX; {err})"
        ) from None
    return dinosaur


@dataclasses.dataclass(frozen=True)
class DycoreConfig:
    """The simulation: spectral truncation ``T<truncation>``, ``levels`` equidistant sigma
    levels, the time step and the spectral filter (dinosaur's Held-Suarez set-up)."""

    truncation: int = 42
    levels: int = 20
    dt_minutes: float = 20.0
    # exponential filter on the highest total wavenumbers (above cutoff * T), every step
    filter_tau: float = 0.0087504  # nondimensional (1/Omega units), dinosaur's notebook value
    filter_order: float = 1.5
    filter_cutoff: float = 0.8

    def __post_init__(self):
        if self.truncation not in TRUNCATIONS:
            raise DycoreError(f"truncation T{self.truncation}: one of {TRUNCATIONS}")
        if self.levels < 2 or self.dt_minutes <= 0:
            raise DycoreError(f"levels >= 2 and a positive time step, got {self}")


@dataclasses.dataclass(frozen=True)
class Restart:
    """A spectral state and where it came from: ``arrays`` maps :data:`FIELDS` to modal
    coefficients ``(levels or 1, 2M - 1, L)`` (dinosaur's nondimensional units)."""

    arrays: dict
    truncation: int
    levels: int
    day: float  # simulated days since the run started from rest
    history: str  # how it was made (commands), newest last

    def save(self, path) -> None:
        """An ``.npz`` (float32), written beside and renamed: never a half-written restart."""
        import os

        tmp = f"{path}.tmp.npz"
        meta = {"truncation": self.truncation, "levels": self.levels, "day": self.day}
        np.savez_compressed(
            tmp,
            **{k: np.asarray(v, np.float32) for k, v in self.arrays.items()},
            meta=np.array(repr(meta)),
            history=np.array(self.history),
        )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path) -> Restart:
        import ast

        try:
            with np.load(path) as f:
                meta = ast.literal_eval(str(f["meta"]))
                arrays = {k: f[k] for k in FIELDS}
                history = str(f["history"])
        except (OSError, KeyError, ValueError, SyntaxError) as err:
            raise DycoreError(f"restart {path} cannot be read: {err}") from None
        return cls(
            arrays, int(meta["truncation"]), int(meta["levels"]), float(meta["day"]), history
        )


def resize_modal(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Modal coefficients ``(..., 2M - 1, L)`` at another truncation: the leading ``m`` (ordered
    0, 1, -1, 2, -2, ...) and ``l`` are kept, the others dropped (truncation) or zero (padding)."""
    out = np.zeros((*x.shape[:-2], *shape), x.dtype)
    a, b = min(shape[0], x.shape[-2]), min(shape[1], x.shape[-1])
    out[..., :a, :b] = x[..., :a, :b]
    return out


class HeldSuarez:
    """The dycore at one configuration: states advance by whole output intervals (jitted)."""

    def __init__(self, config: DycoreConfig):
        dino = _dinosaur()
        from dinosaur import (
            held_suarez,
            primitive_equations,
            primitive_equations_states,
            xarray_utils,
        )
        from dinosaur import time_integration as ti

        self.config, units = config, dino.scales.units
        grid = getattr(dino.spherical_harmonic.Grid, f"T{config.truncation}")()
        vertical = dino.sigma_coordinates.SigmaCoordinates.equidistant(config.levels)
        self.coords = dino.coordinate_systems.CoordinateSystem(horizontal=grid, vertical=vertical)
        self.specs = primitive_equations.PrimitiveEquationsSpecs.from_si()
        self._rest, aux = primitive_equations_states.isothermal_rest_atmosphere(
            coords=self.coords,
            physics_specs=self.specs,
            p0=1e5 * units.pascal,
            p1=5e3 * units.pascal,  # the surface-pressure bump that starts the eddies
        )
        self.reference_temperature = np.asarray(aux[xarray_utils.REF_TEMP_KEY])
        orography = primitive_equations.truncated_modal_orography(
            aux[xarray_utils.OROGRAPHY], self.coords
        )
        equation = ti.compose_equations(
            [
                primitive_equations.PrimitiveEquations(
                    self.reference_temperature, orography, self.coords, self.specs
                ),
                held_suarez.HeldSuarezForcingSigma(
                    self.coords, self.specs, self.reference_temperature
                ),
            ]
        )
        self.dt = self.specs.nondimensionalize(config.dt_minutes * units.minute)
        step = ti.step_with_filters(
            ti.imex_rk_sil3(equation, self.dt),
            [
                ti.exponential_step_filter(
                    grid, self.dt, config.filter_tau, config.filter_order, config.filter_cutoff
                )
            ],
        )
        self._step = step
        self.sigma_boundaries = np.asarray(vertical.boundaries)
        self.sigma_centers = np.asarray(vertical.centers)

    @property
    def modal_shape(self) -> tuple[int, int]:
        return tuple(self.coords.horizontal.modal_shape)

    def steps_per(self, hours: float) -> int:
        steps = hours * 60.0 / self.config.dt_minutes
        if not hours > 0:
            raise DycoreError(f"the time to run must be positive, got {hours:g} h")
        if abs(steps - round(steps)) > 1e-9 or round(steps) < 1:
            raise DycoreError(
                f"{hours:g} h is not a whole number of {self.config.dt_minutes:g}-minute steps"
            )
        return int(round(steps))

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one model object per run
    def _advance(self, steps: int):
        import jax
        from dinosaur import time_integration as ti

        return jax.jit(ti.repeated(self._step, steps))

    def rest_state(self, seed: int):
        import jax

        return self._rest(jax.random.PRNGKey(seed))

    def advance(self, state, hours: float):
        """The state ``hours`` later."""
        return self._advance(self.steps_per(hours))(state)

    def trajectory(self, state, hours: float, count: int) -> Iterator:
        """``count`` states, each ``hours`` after the one before (the first after ``state``)."""
        advance = self._advance(self.steps_per(hours))
        for _ in range(count):
            state = advance(state)
            yield state

    def to_restart(self, state, day: float, history: str) -> Restart:
        arrays = {k: np.asarray(getattr(state, k)) for k in FIELDS}
        return Restart(arrays, self.config.truncation, self.config.levels, day, history)

    def from_restart(self, restart: Restart):
        """A dinosaur state from ``restart`` (padded or truncated to this truncation; the levels
        must be this configuration's)."""
        import jax.numpy as jnp
        from dinosaur import primitive_equations

        if restart.levels != self.config.levels:
            raise DycoreError(
                f"the restart has {restart.levels} levels, this configuration "
                f"{self.config.levels}: restarts change truncation, never levels"
            )
        arrays = {
            k: jnp.asarray(resize_modal(v, self.modal_shape)) for k, v in restart.arrays.items()
        }
        return primitive_equations.State(**arrays)

    def perturbed(self, state, seed: int, kelvin: float = 0.01):
        """``state`` with a small random temperature perturbation (``kelvin`` rms per mode, the
        modes that exist): independent runs diverge from it within weeks (chaos)."""
        import jax.numpy as jnp
        from dinosaur import scales

        rng = np.random.default_rng(seed)
        t = np.asarray(state.temperature_variation)
        amp = self.specs.nondimensionalize(kelvin * scales.units.degK)
        noise = rng.standard_normal(t.shape).astype(t.dtype) * amp * self.coords.horizontal.mask
        return dataclasses.replace(state, temperature_variation=jnp.asarray(t + noise))


class CellSynthesis:
    """The spectral fields evaluated exactly at given points (E3SM's cell centres): one matrix
    product per field with the spherical harmonics tabulated at the points once."""

    def __init__(self, model: HeldSuarez, lat_deg: np.ndarray, lon_deg: np.ndarray):
        import jax
        import jax.numpy as jnp
        from dinosaur import associated_legendre, scales

        grid = model.coords.horizontal
        m_count, l_count = grid.longitude_wavenumbers, grid.total_wavenumbers
        lat, lon = np.radians(lat_deg), np.radians(lon_deg)
        # the real Fourier basis at the points, dinosaur's order and normalisation
        f = np.empty((lat.size, 2 * m_count - 1))  # (P, 2M - 1)
        f[:, 0] = 1.0 / np.sqrt(2 * np.pi)
        m = np.arange(1, m_count)
        f[:, 1::2] = np.cos(np.outer(lon, m)) / np.sqrt(np.pi)
        f[:, 2::2] = np.sin(np.outer(lon, m)) / np.sqrt(np.pi)
        p = associated_legendre.evaluate(m_count, l_count, np.sin(lat))  # (M, P, L)
        p = np.repeat(p, 2, axis=0)[1:]  # (2M - 1, P, L): sin and cos share P_l^m
        basis = f.T[:, None, :] * p.transpose(0, 2, 1)  # (2M - 1, L, P)
        self._basis = jnp.asarray(basis.reshape(-1, lat.size), jnp.float32)  # (K, P)
        self._cos_lat = jnp.asarray(np.cos(lat), jnp.float32)
        self.model = model
        units, specs = scales.units, model.specs
        self._scale = {
            "wind": float(specs.dimensionalize(1.0, units.meter / units.second).m),
            "temperature": float(specs.dimensionalize(1.0, units.degK).m),
            "pressure": float(specs.dimensionalize(1.0, units.pascal).m),
        }
        self._fields = jax.jit(self._compute)

    def _synth(self, modal):
        """``(Z, 2M - 1, L)`` -> ``(Z, P)``."""
        return modal.reshape(modal.shape[0], -1) @ self._basis

    def _compute(self, state):
        import jax.numpy as jnp
        from dinosaur import spherical_harmonic

        grid = self.model.coords.horizontal
        u_cos, v_cos = spherical_harmonic.get_cos_lat_vector(
            state.vorticity, state.divergence, grid
        )
        s = self._scale
        ref = jnp.asarray(self.model.reference_temperature, jnp.float32)[:, None]
        return {
            "U": self._synth(u_cos) / self._cos_lat * s["wind"],  # (Z, P)
            "V": self._synth(v_cos) / self._cos_lat * s["wind"],
            "T": (ref + self._synth(state.temperature_variation)) * s["temperature"],
            "PS": jnp.exp(self._synth(state.log_surface_pressure))[0] * s["pressure"],  # (P,)
        }

    def __call__(self, state) -> dict[str, np.ndarray]:
        """``U, V, T (levels, P)`` in m/s and K, ``PS (P,)`` in Pa, float32."""
        return {k: np.asarray(v, np.float32) for k, v in self._fields(state).items()}
