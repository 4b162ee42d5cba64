# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""docs/figures/e3sm_element.png: one spectral element of E3SM's physics grid and its cells.

``python scripts/research/e3sm_element_figure.py [--grid ne4pg2]
[--out docs/figures/e3sm_element.png]``
draws the south-west corner element of face 0 in the face's gnomonic plane (tan alpha,
tan beta): its equiangular corners, its pg x pg cells (3-D bilinear subdivision), their centres
(normalised corner means), and the equiangular grid of the same size for comparison, with the
largest centre offset in cell widths in the title.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from screamcast.evaluation.cube_net import pyplot  # noqa: E402
from screamcast.grid import CubedSphereGrid, PhysicsGrid  # noqa: E402
from screamcast.grid.cubed_sphere import FACE_AXES  # noqa: E402


def plane(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Face 0's gnomonic coordinates ``(tan alpha, tan beta)`` of unit vectors ``(..., 3)``."""
    n, a, b = FACE_AXES[0]
    dn = xyz @ n
    return (xyz @ a) / dn, (xyz @ b) / dn


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", default="ne4pg2")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "e3sm_element.png")
    args = ap.parse_args(argv)
    g = PhysicsGrid.from_name(args.grid)
    eq = CubedSphereGrid(g.n)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    pg = g.pg
    s = np.linspace(0, pg, 41)  # cell edges, finely sampled: bilinear edges are not straight
    for k in range(pg + 1):
        for cx, cy in ((np.full_like(s, k), s), (s, np.full_like(s, k))):
            px, py = plane(g.corner_xyz(0, cx, cy))
            ax.plot(px, py, color="k", lw=1.6 if k in (0, pg) else 0.9)
    edges = np.tan(-np.pi / 4 + np.arange(pg + 1) * (np.pi / 2) / g.n)
    for e in edges:
        ax.plot([e, e], edges[[0, -1]], color="tab:orange", ls="--", lw=0.8)
        ax.plot(edges[[0, -1]], [e, e], color="tab:orange", ls="--", lw=0.8)
    i = np.arange(pg)
    cx, cy = plane(g.xyz[0][np.ix_(i, i)])
    ex, ey = plane(eq.xyz[0][np.ix_(i, i)])
    ax.plot(cx.ravel(), cy.ravel(), "ko", ms=5, label=f"{g.name} cell centres")
    ax.plot(ex.ravel(), ey.ravel(), "x", color="tab:orange", ms=7, label=f"equiangular n={g.n}")
    move = np.linalg.norm(g.xyz - eq.xyz, axis=-1).max() / g.cell_width()
    area = np.abs(eq.area / g.area - 1).max()
    ax.set_title(
        f"{g.name}: element (0, 0) of face 0 and its {pg}x{pg} cells\n"
        f"equiangular centres off by up to {move:.3f} cell widths, areas by {100 * area:.2f}%",
        fontsize=9,
    )
    ax.set_xlabel("tan(alpha)")
    ax.set_ylabel("tan(beta)")
    ax.set_aspect("equal")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out} ({g.name}: centres {move:.4f} cell widths, areas {area:.4%})")


if __name__ == "__main__":
    main()
