# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Small stores in RAM: the extended faces of a dataset's time range, built once per process.

A crop is then a slice (bit for bit the crop read lazily). Part of
:class:`~screamcast.data.dataset.CropDataset` (a mixin: it uses the dataset's layout, url,
variables and time range); a load that cannot fit is refused before it starts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from screamcast.data.remote import StoreError
from screamcast.data.store import first_non_finite, ingestion_note


class InMemoryExtendedFaces:
    def _check_memory(self) -> None:
        """Refuse an in-memory load that cannot fit, before the kernel's OOM killer ends the job."""
        P, T = self.layout.padded, self.t_hi + self.steps - self.t_lo
        V, F = len(self.prognostic) + len(self.diagnostic), len(self.static)
        need = 4 * 6 * P * P * (V * T + F)  # float32 extended faces
        free = memory_available()
        if free is not None and need > free:
            raise StoreError(
                f"store {self.url}: in_memory needs {need / 2**30:.1f} GiB for the extended faces "
                f"of {V} variables x {T} times + {F} static (6 x {P} x {P} each), but "
                f"{free / 2**30:.1f} GiB are available: set data.in_memory=false (crops are then "
                f"read chunk by chunk) or shorten the time range"
            )

    def _load_extended(self, source: dict, names: list[str], static: bool) -> np.ndarray:
        """Small stores: the extended faces of the dataset's time range, built once per process,
        so that a crop is a slice. ``(V, [T,] 6, P, P)`` float32: ``(P / n)^2`` times the
        raw variables in memory. Ring values are the same float64 sums :func:`assemble`
        makes (lazy and in-memory crops are equal bit for bit). Non-finite values are
        reported here, by variable, time and face pixel."""
        L = self.layout
        n, H, P = L.n, L.halo, L.padded
        times = () if static else (slice(self.t_lo, self.t_hi + self.steps),)
        T = () if static else (self.t_hi + self.steps - self.t_lo,)
        ext = np.empty((len(names), *T, 6, P, P), dtype=np.float32)
        src, w = L.ring_sources, L.ring_weights  # (R, k) flat into (6, n, n); (R, k)
        for i, v in enumerate(names):
            raw = source[v][times]  # ([T,] 6, n, n), one read of the range
            self._check_finite(v, raw, static)
            ext[i, ..., H : H + n, H : H + n] = raw
            flat_in = raw.reshape(-1, 6 * n * n)  # (T or 1, 6 n n)
            flat_out = ext[i].reshape(-1, 6 * P * P)  # a view: (T or 1, 6 P P)
            for t in range(len(flat_in)):  # one time at a time: small float64 temporaries
                flat_out[t, L.ring_positions] = (flat_in[t][src] * w).sum(-1)  # (R, k) -> (R,)
        return ext

    def _check_finite(self, var: str, raw: np.ndarray, static: bool) -> None:
        found = first_non_finite(raw, self.url, var, None if static else self.times, self.t_lo)
        if found is not None:
            message, time = found
            note = "" if time is None else ingestion_note(self.url, self.storage_options, time)
            raise StoreError(message + note)

    def _windows(self, arrays, t: int, face: int, oy: int, ox: int) -> dict[str, np.ndarray]:
        """In-memory crops: views into the extended faces loaded by :meth:`_load_extended`."""
        if not self.t_lo <= t < self.t_hi:  # the starts whose k-step targets were loaded
            loaded = f"{self.t_lo}:{self.t_hi + self.steps}"
            raise IndexError(
                f"time index {t} is outside {self.url}'s loaded range {loaded} "
                f"for {self.steps}-step samples"
            )
        win = (face, slice(oy, oy + self.crop), slice(ox, ox + self.crop))
        tsel = slice(t - self.t_lo, t - self.t_lo + self.steps + 1)
        out = {}
        for g, static in self._groups():
            lead = (slice(None),) if static else (slice(None), tsel)
            out |= zip(g, arrays[tuple(g)][(*lead, *win)], strict=True)  # (V, [k + 1,] S, S)
        return out


def memory_available() -> int | None:
    """Bytes this process can still allocate: ``MemAvailable``, capped by a cgroup v2 limit."""
    free = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
    except OSError:
        return None
    cgroup = Path("/sys/fs/cgroup")
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            used = int((cgroup / "memory.current").read_text())
            free = min(free or 2**63, int(limit) - used)
    except (OSError, ValueError):
        pass
    return free
