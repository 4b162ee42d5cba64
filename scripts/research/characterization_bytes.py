# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Whether two checkouts roll the characterisation variants out to the same bytes.

``python scripts/research/characterization_bytes.py OLD_CHECKOUT NEW_CHECKOUT``: each
checkout's own ``tests/test_characterization_inference.py::run_config`` (its inputs, its
fixed-seed checkpoint, its rollout API) runs every variant in a subprocess with that checkout
first on ``sys.path``; the arrays are compared byte for byte. What a refactoring that must not
change a number is checked with (the stored references differ from a run here by up to 2
float32 spacings, so they cannot show "bit for bit").
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

RUN = """
import sys, tempfile, importlib.util
from pathlib import Path
import numpy as np
root, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(root))
test = root / "tests/test_characterization_inference.py"
spec = importlib.util.spec_from_file_location("char", test)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
import screamcast
assert Path(screamcast.__file__).resolve().is_relative_to(root.resolve()), screamcast.__file__
for name in m.VARIANTS:
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(out / f"{name}.npz", **m.run_config(name, Path(tmp)))
"""


def arrays(checkout: Path, out: Path) -> None:
    out.mkdir()
    env = os.environ | {"PYTHONPATH": str(checkout)}
    subprocess.run([sys.executable, "-c", RUN, str(checkout), str(out)], check=True, env=env)


def main(old: str, new: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "old", Path(tmp) / "new"
        arrays(Path(old), a)
        arrays(Path(new), b)
        same = True
        for path in sorted(a.glob("*.npz")):
            x, y = np.load(path), np.load(b / path.name)
            equal = all(x[k].tobytes() == y[k].tobytes() for k in x.files)
            same &= equal
            print(f"{path.stem:32s} {'identical bytes' if equal else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
