"""The docstrings of structreg are text in the source, and say what a thing does.

- No module substitutes into ``__doc__`` (an assignment to it, or a ``.replace``/``.format``
  of it): a docstring a reader sees in the source is the one ``help()`` and the API pages show.
- No module, class, function or attribute docstring carries a measured time, memory or
  speed-up (seconds, GiB, MiB, ``3x``) outside its Examples: measurements live in the
  benchmarks page and the scale guide (docs/benchmarks.md, docs/user_guide/scale.md), which
  the docstrings name.
- The ``weights`` entries written out in GFHF's and PoissonLearning's docstrings list the
  choices and the default of the parameter constraints and signature, so the text cannot drift.
- Estimators of one family that share a parameter describe it in the same words: the text is
  written out in each docstring (a reader sees it where the class is), and this test keeps
  the copies equal, so a change to one that misses another fails.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import structreg
from structreg import (
    DRGV,
    DRLSC,
    GFHF,
    RLSC,
    DALapRLSC,
    DiscriminativeRLS,
    LapRLSC,
    LapRLSRegressor,
    LapSVM,
    PoissonLearning,
    SparseRLSC,
    SSDRWang,
    SSDRWu,
    StructuralRegressor,
)

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


def parameter_entries(doc: str) -> dict[str, str]:
    """``{name: entry}`` of the Parameters section of a cleaned docstring
    (:func:`inspect.cleandoc`): the ``name : type`` line and its indented description, as
    text; ``a, b : type`` gives both names the entry."""
    lines = doc.splitlines()
    if "Parameters" not in lines:
        return {}
    start = lines.index("Parameters") + 2
    entries: dict[str, list[str]] = {}
    names: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if line and not line.startswith(" "):
            if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]):
                break  # the next section
            names = [n.strip() for n in line.split(" : ")[0].split(",")]
            for name in names:
                entries[name] = [line.split(" : ", 1)[-1]]
        else:
            for name in names:
                entries[name].append(line)
    return {name: "\n".join(text).strip() for name, text in entries.items()}


FAMILIES = [
    (
        "graph-regularised kernel models",
        [LapRLSC, LapSVM, SSDRWu],
        [
            "kernel",
            "gamma",
            "degree",
            "coef0",
            "gamma_A",
            "gamma_I",
            "n_neighbors",
            "graph",
            "weights",
            "t",
            "normalized",
            "metric",
            "random_state",
        ],
    ),
    (
        "square-loss models with the Nystroem solver",
        [
            DALapRLSC,
            SSDRWang,
            SSDRWu,
            DRGV,
            DRLSC,
            DiscriminativeRLS,
            RLSC,
            SparseRLSC,
            LapRLSC,
            LapRLSRegressor,
            StructuralRegressor,
        ],
        ["centers", "n_components", "max_iter", "degree", "coef0"],
    ),
    (
        "DRLSC and DRGV",
        [DRLSC, DRGV],
        [
            "kernel",
            "gamma",
            "degree",
            "coef0",
            "eta",
            "formulation",
            "solver",
            "n_components",
            "centers",
            "max_iter",
            "tol",
            "class_weight",
            "random_state",
        ],
    ),
    (
        "regressors",
        [LapRLSRegressor, StructuralRegressor],
        ["solver", "fit_intercept", "n_components", "centers", "max_iter", "tol", "random_state"],
    ),
    (
        "Laplacian presets",
        [LapRLSC, LapRLSRegressor, DALapRLSC, LapSVM, SSDRWu],
        ["degree", "coef0", "t"],
    ),
]
"""Families of estimators and the parameters they describe in the same words (the others,
e.g. ``gamma_A``'s default or ``solver``'s choices, differ on purpose)."""


def differing_entries(estimators, names) -> dict[str, list[str]]:
    """``{parameter: [estimators]}`` of the ``names`` whose entries are not the same text in
    every one of ``estimators`` (a missing entry counts as a different one)."""
    docs = {e.__name__: parameter_entries(inspect.getdoc(e)) for e in estimators}
    return {
        name: sorted(docs)
        for name in names
        if len({entries.get(name) for entries in docs.values()}) != 1
    }


@pytest.mark.parametrize("family, estimators, names", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_a_family_describes_its_shared_parameters_alike(family, estimators, names):
    for estimator in estimators:
        missing = set(names) - set(parameter_entries(inspect.getdoc(estimator)))
        assert not missing, f"{estimator.__name__} documents no {sorted(missing)}"
    differ = differing_entries(estimators, names)
    assert not differ, f"{family}: parameters described differently: {differ}"


def test_the_family_check_can_fail():
    class A:
        """A.

        Parameters
        ----------
        t, u : float, default=1.0
            Width.
        k : int
            Neighbours.

        Attributes
        ----------
        t_ : float
        """

    class B:
        """B.

        Parameters
        ----------
        t : float, default=1.0
            Width.
        u : float, default=1.0
            Width of another thing.
        """

    assert parameter_entries(inspect.getdoc(A)) == {
        "t": "float, default=1.0\n    Width.",
        "u": "float, default=1.0\n    Width.",
        "k": "int\n    Neighbours.",
    }
    assert differing_entries([A, B], ["t", "u", "k"]) == {"u": ["A", "B"], "k": ["A", "B"]}
