"""The docstrings of structreg are text in the source, and say what a thing does.

- No module substitutes into ``__doc__`` (an assignment to it, or a ``.replace``/``.format``
  of it): a docstring a reader sees in the source is the one ``help()`` and the API pages show.
- No module, class, function or attribute docstring carries a measured time, memory or
  speed-up (seconds, GiB, MiB, ``3x``) outside its Examples: measurements live in the
  benchmarks page and the scale guide (docs/benchmarks.md, docs/user_guide/scale.md), which
  the docstrings name.
- The ``weights`` entries written out in GFHF's and PoissonLearning's docstrings list the
  choices and the default of the parameter constraints and signature, so the text cannot drift.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import structreg
from structreg import GFHF, PoissonLearning

PACKAGE = Path(structreg.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))

MEASUREMENT = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)? ?(?:ms|s|GiB|MiB)(?![\w'])|\d(?:\.\d+)?x\b")
"""A time or memory written with its unit (``25 s``, ``0.7 s``, ``13.8 GiB``, ``4,398 s``) or a
measured speed-up (``2-3x``)."""

SETTING = re.compile(r"\bdefault\b|\bper block\b|\bbudget\b", re.IGNORECASE)
"""A line that states a setting (``64 MiB by default``), not a measurement."""


def _doc_nodes(tree: ast.Module):
    """``(what, text)`` for the module docstring, the class and function docstrings and the
    attribute docstrings (a string literal after an assignment) at module and class level."""
    bodies = [("module", tree.body)]
    bodies += [
        (f"{type(node).__name__} {node.name}", node.body)
        for node in ast.walk(tree)
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for where, body in bodies:
        for i, stmt in enumerate(body):
            if not (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                continue
            if i == 0:
                yield f"{where} docstring", stmt.value.value
            elif isinstance(body[i - 1], (ast.Assign, ast.AnnAssign)):
                yield (
                    f"{where}, docstring of the assignment on line {stmt.lineno}",
                    stmt.value.value,
                )


def measurements(text: str) -> list[str]:
    """The lines of ``text`` before its Examples section that carry a measured time or memory."""
    text = re.split(r"\n\s*Examples\n\s*-{3,}\n", text)[0]
    return [
        line.strip()
        for line in text.splitlines()
        if MEASUREMENT.search(line) and not SETTING.search(line)
    ]


def substitutions(tree: ast.Module) -> list[int]:
    """Lines that assign to ``__doc__`` or call a method (``replace``, ``format``) on it."""

    def is_doc(node):
        return (isinstance(node, ast.Name) and node.id == "__doc__") or (
            isinstance(node, ast.Attribute) and node.attr == "__doc__"
        )

    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_doc(t) for t in targets):
                found.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and is_doc(node.func.value)
        ):
            found.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "__doc__"
        ):
            found.append(node.lineno)
    return sorted(set(found))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_substitution_into_docstrings(path):
    lines = substitutions(ast.parse(path.read_text()))
    assert not lines, (
        f"{path.relative_to(PACKAGE)} builds a docstring in code (lines {lines}): "
        "write the text in the docstring"
    )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_measurements_in_docstrings(path):
    found = {
        where: lines
        for where, text in _doc_nodes(ast.parse(path.read_text()))
        if (lines := measurements(text))
    }
    assert not found, (
        f"{path.relative_to(PACKAGE)}: measured times or memory in docstrings {found}; "
        "move them to docs/user_guide/scale.md or the benchmarks and name the page"
    )


def test_the_checks_can_fail():
    planted = ast.parse(
        '"""Solves 1e6 points in 25 s and 13.8 GiB."""\n'
        "class A:\n"
        '    """Fine."""\n'
        'A.__doc__ = A.__doc__.replace("WEIGHTS", "text")\n'
    )
    assert [w for w, t in _doc_nodes(planted) if measurements(t)] == ["module docstring"]
    assert substitutions(planted) == [4]
    assert measurements("Fast.\n\n    Examples\n    --------\n    >>> 1  # 3 s\n") == []
    assert measurements("Blocks of 64 MiB by default.") == []


@pytest.mark.parametrize("estimator", [GFHF, PoissonLearning])
def test_documented_weights_are_the_constraints(estimator):
    entry = re.search(r"\n    weights : \{(.*?)\}, default=\"(.*?)\"\n", estimator.__doc__)
    assert entry, f"{estimator.__name__}'s docstring has no weights entry"
    documented = {choice.strip().strip('"') for choice in entry.group(1).split(",")}
    (options,) = estimator._parameter_constraints["weights"]
    assert documented == set(options.options)
    default = inspect.signature(estimator.__init__).parameters["weights"].default
    assert entry.group(2) == default
