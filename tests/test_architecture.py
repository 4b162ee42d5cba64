# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The package's shape, read from its source: imports run one way through the layers, no
module imports itself round a cycle, no module is over 400 lines nor function over 60, no
library module parses a command line (that is screamcast/cli/'s job)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "screamcast"
# lower layers first; a module may import its own layer and the ones below it
LAYERS = [
    {"config", "file_lock", "replace_dir", "registry", "__init__"},
    {"grid"},
    {"halo"},
    {"data"},
    {"sources", "ingest"},
    {"model", "checkpoint_io", "checkpoint_format"},
    {"step"},
    {"train", "rollout"},
    {"evaluation"},
    {"cli"},
]
LAYER_OF = {part: i for i, parts in enumerate(LAYERS) for part in parts}


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The screamcast modules ``path`` imports (at any depth of its code)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(path, name, set(mods)) for name, path in mods.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYER_OF[parts[1] if len(parts) > 1 else "__init__"]


def test_imports_run_one_way_through_the_layers():
    wrong = [
        f"{a} ({layer(a)}) imports {b} ({layer(b)})"
        for a, deps in graph().items()
        for b in deps
        if layer(b) > layer(a) and not a.endswith("__main__")  # python -m shims call cli
    ]
    assert not wrong, "\n".join(wrong)


def test_the_rollout_and_training_import_nothing_of_evaluation():
    g = graph()
    bad = [(a, b) for a, deps in g.items() for b in deps if a.split(".")[1] in ("rollout", "train")]
    assert not [x for x in bad if x[1].startswith("screamcast.evaluation")]


def test_no_import_cycle():
    g = graph()
    # Tarjan's strongly connected components; a package's __init__ re-exporting its modules
    # is not a cycle of code, so package -> own submodule edges are left out
    edges = {a: {b for b in deps if not b.startswith(a + ".")} for a, deps in g.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_no_function_is_over_60_lines():
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > 60:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} {n}")
    assert not long, "\n".join(long)


def test_no_module_is_over_400_lines():
    """A module read in one sitting (issue 40's target): split by concern, not by length."""
    long = [
        f"{path.relative_to(PACKAGE)} {n}"
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 400
    ]
    assert not long, "\n".join(long)


def test_only_the_cli_parses_command_lines():
    parsing = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "argparse" in path.read_text() and path.parent.name != "cli"
    ]
    assert not parsing, parsing


def test_no_line_is_wrapped_by_hand():
    """The formatter wraps every line; a function that only fits the limit by hand-wrapping
    is split instead."""
    marked = [
        f"{p.relative_to(PACKAGE.parent)}:{i}"
        for p in PACKAGE.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if line.rstrip().endswith("# fmt: skip")
    ]
    assert not marked, marked


def test_the_rollout_defines_each_function_once_and_one_loop_steps():
    """One rollout program: no module-level function of the rollout's modules is defined
    twice, and the guard is checked in one place, the step loop every caller drives
    (screamcast/rollout/advance.py: the rollout on any rank count and training's free run)."""
    where: dict[str, list[str]] = {}
    for p in (PACKAGE / "rollout").rglob("*.py"):
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                where.setdefault(node.name, []).append(p.name)
    assert not {name: files for name, files in where.items() if len(files) > 1}
    checks = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "guard.check(" in p.read_text() or ".guard.check(" in p.read_text()
    ]
    assert checks == ["rollout/advance.py"]
