"""The package's import graph: imports only go down the layers, and no two modules import
each other (directly or around a cycle).  Every import counts, the lazy ones inside
functions included (read from the source with ``ast``, nothing is imported).

The layer order is written here and in the architecture page of the developer docs
(``docs/developer/architecture.md``); lowest first:
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "structreg"

LAYERS: list[tuple[str, ...]] = [
    ("_compat", "_numerics", "_params", "_chunks", "_locality", "_resources", "exceptions"),
    ("datasets",),
    ("kernels", "clustering"),
    ("structure",),
    ("solvers",),
    ("models",),
    ("model_selection", "bounds"),
    ("experiments",),
    ("cli", "__main__", ""),  # "" is the package's own __init__
]
"""Layer of each top-level module or subpackage of ``structreg``, lowest first.  A module
may import from its own layer or any lower one; within a layer, no cycles."""

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "experiments": ("solvers",),  # experiments reach solvers only through models
}
"""Downward imports that are still not allowed: (importer, imported) top-level names."""


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``module`` imports, anywhere in its source (a name imported from
    a package counts as its submodule when it is one)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" for alias in node.names] + [source]
            targets = [t for t in targets[:-1] if t in modules] or [source]
        for target in targets:
            if not (target == "structreg" or target.startswith("structreg.")):
                continue
            while target not in modules:
                target = target.rsplit(".", 1)[0]
            if target != module:
                found.add(target)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_files(root)
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> int:
    name = top(module)
    for i, names in enumerate(LAYERS):
        if name in names:
            return i
    raise AssertionError(f"module {module} has no layer: add {name!r} to LAYERS")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for module, targets in graph.items():
        for target in targets:
            if layer(target) > layer(module):
                bad.append(
                    f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
                )
            elif top(target) in FORBIDDEN.get(top(module), ()):
                bad.append(f"{module} imports {target}: {top(module)} may not import {top(target)}")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    for module in module_files():
        layer(module)


def test_imports_only_go_down():
    bad = upward_imports(import_graph())
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "modules that import each other: " + "; ".join(" -> ".join(c) for c in found)


@pytest.fixture
def planted(tmp_path):
    """A copy of the package in which the solvers import the models (lazily, inside a
    function) and a model imports the CLI: both must be caught."""
    import shutil

    root = tmp_path / "structreg"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "data"))
    cg = root / "solvers" / "cg.py"
    cg.write_text(cg.read_text() + "\n\ndef _planted():\n    from ..models import LapRLSC\n")
    rlsc = root / "models" / "rlsc.py"
    rlsc.write_text(rlsc.read_text() + "\nfrom .. import cli  # planted\n")
    return root


def test_a_planted_upward_import_and_cycle_are_caught(planted):
    graph = import_graph(planted)
    bad = upward_imports(graph)
    assert any(b.startswith("structreg.solvers.cg ") and "structreg.models" in b for b in bad)
    assert any(b.startswith("structreg.models.rlsc ") and "structreg.cli" in b for b in bad)
    assert any("structreg.solvers.cg" in c and "structreg.models" in c for c in cycles(graph))


SOLVE_PRIMITIVES = {
    "splu",
    "spilu",
    "spsolve",
    "factorized",
    "cholesky",
    "amg_conjugate_gradient",
    "amg_preconditioner",
    "solve_laplace_system",
    "excess_solve",
}
"""Names through which a module would solve a graph's Laplace system itself: sparse
factorisations, CHOLMOD, multigrid and the Laplace solve's own parts.  Graph methods in
``models`` call the solves of ``solvers.laplace`` (``solve_harmonic``, ``solve_poisson``,
``harmonic_function``, ``poisson_function``) and nothing below them."""


def solve_primitives_used(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module file -> the names of :data:`SOLVE_PRIMITIVES` it imports or calls by name."""
    found = {}
    for path in sorted((root / "models").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
        if names & SOLVE_PRIMITIVES:
            found[path.name] = names & SOLVE_PRIMITIVES
    return found


def test_laplace_solves_stay_out_of_the_models():
    assert solve_primitives_used() == {}


def test_a_planted_laplace_solve_in_the_models_is_caught(tmp_path):
    import shutil

    root = tmp_path / "structreg"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "data"))
    harmonic = root / "models" / "harmonic.py"
    harmonic.write_text(harmonic.read_text() + "\nfrom scipy.sparse.linalg import splu\n")
    assert solve_primitives_used(root) == {"harmonic.py": {"splu"}}
