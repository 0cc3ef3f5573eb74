"""structreg._compat: the one module through which private scikit-learn (and SciPy) names and
SciPy's version differences come in.  These tests run under every supported version: the
floors of ``.ci/floors.txt`` (the CI step ``.ci/floors``) and the newest."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import numpy as np
import pytest
import scipy
import scipy.sparse as sp
from scipy.linalg import lapack
from sklearn.base import BaseEstimator
from sklearn.svm import SVC

from structreg import _compat

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "structreg"
COMPAT = PACKAGE / "_compat.py"
# the libraries whose private API may only come in through structreg/_compat.py
GUARDED = ("sklearn", "scipy", "numpy", "pandas", "dask", "pyamg", "cvxpy")


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_imports(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for every import of a private name of a guarded library in
    ``source``: ``from sklearn.utils._x import y``, ``from sklearn.utils import _y``,
    ``import sklearn.utils._x``, and an attribute chain ``sklearn.utils._x`` after
    ``import sklearn``; an import inside a function counts too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] not in GUARDED:
                continue
            names = [a.name for a in node.names if _private(a.name)]
            if _private(node.module) or names:
                found.append((node.lineno, f"from {node.module} import {names or '...'}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in GUARDED and _private(alias.name):
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in GUARDED:
                found.append((node.lineno, ".".join([value.id, *reversed(chain)])))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value.split(".")[0] in GUARDED and _private(arg.value):
                    found.append((node.lineno, f"import_module({arg.value!r})"))
    return found


def test_the_guard_finds_every_spelling_of_a_private_import():
    source = """
from sklearn.utils._param_validation import Interval
from sklearn.utils import _safe_indexing, check_array
from sklearn.utils.metaestimators import available_if, _safe_split
import sklearn.utils._indexing
import sklearn
sklearn.utils._testing.assert_allclose
def f():
    from scipy.optimize._highspy._core import _Highs
    return importlib.import_module("sklearn.utils._tags")
from sklearn.utils import check_array
from . import _compat
from ._compat import safe_split
"""
    assert sorted({line for line, _ in private_imports(source)}) == [2, 3, 4, 5, 7, 9, 10]


def test_no_module_but_compat_imports_a_private_name():
    """Every private name of scikit-learn (and of the other dependencies) comes in through
    structreg/_compat.py; the package's other modules, the tests, benchmarks and examples
    import it from there."""
    offenders = []
    for folder in ("structreg", "tests", "benchmarks", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == COMPAT or path == Path(__file__).resolve():
                continue
            for line, what in private_imports(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not offenders, "import these through structreg._compat:\n" + "\n".join(offenders)


def test_compat_itself_imports_the_private_names():
    """The guard is not vacuous: the compat module is where the private names are."""
    found = " ".join(what for _, what in private_imports(COMPAT.read_text(encoding="utf-8")))
    for name in ("_param_validation", "_safe_split", "_safe_indexing", "_get_feature_names"):
        assert name in found


@pytest.mark.parametrize(
    "ours, module, theirs",
    [
        ("Interval", "sklearn.utils._param_validation", "Interval"),
        ("StrOptions", "sklearn.utils._param_validation", "StrOptions"),
        ("HasMethods", "sklearn.utils._param_validation", "HasMethods"),
        ("InvalidParameterError", "sklearn.utils._param_validation", "InvalidParameterError"),
        ("make_constraint", "sklearn.utils._param_validation", "make_constraint"),
        (
            "validate_parameter_constraints",
            "sklearn.utils._param_validation",
            "validate_parameter_constraints",
        ),
        ("safe_indexing", "sklearn.utils", "_safe_indexing"),
        ("safe_split", "sklearn.utils.metaestimators", "_safe_split"),
        ("get_feature_names", "sklearn.utils.validation", "_get_feature_names"),
        ("check_feature_names", "sklearn.utils.validation", "_check_feature_names"),
    ],
)
def test_the_sklearn_names_are_sklearn_s(ours, module, theirs):
    assert getattr(_compat, ours) is getattr(importlib.import_module(module), theirs)
    assert ours in _compat.__all__


def test_parameter_validation_refuses_and_accepts():
    from numbers import Real

    constraints = {"a": [_compat.Interval(Real, 0, None, closed="neither")]}
    _compat.validate_parameter_constraints(constraints, {"a": 1.0}, caller_name="f")
    with pytest.raises(_compat.InvalidParameterError, match="'a' parameter of f"):
        _compat.validate_parameter_constraints(constraints, {"a": 0.0}, caller_name="f")
    assert _compat.StrOptions({"x"}).is_satisfied_by("x")
    assert _compat.HasMethods(["fit"]).is_satisfied_by(SVC())


def test_safe_indexing_and_safe_split():
    X = np.arange(12.0).reshape(6, 2)
    rows = np.array([4, 1])
    np.testing.assert_array_equal(_compat.safe_indexing(X, rows), X[rows])
    np.testing.assert_array_equal(_compat.safe_indexing(sp.csr_matrix(X), rows).toarray(), X[rows])
    assert _compat.safe_indexing(list("abcdef"), rows) == ["e", "b"]
    # a precomputed kernel: the test rows against the training columns
    K = np.arange(36.0).reshape(6, 6)
    y = np.arange(6)
    train, test = np.array([0, 2, 3]), np.array([1, 5])
    svc = SVC(kernel="precomputed")
    K_train, y_train = _compat.safe_split(svc, K, y, train)
    K_test, y_test = _compat.safe_split(svc, K, y, test, train)
    np.testing.assert_array_equal(K_train, K[np.ix_(train, train)])
    np.testing.assert_array_equal(K_test, K[np.ix_(test, train)])
    np.testing.assert_array_equal(y_test, y[test])
    X_train, _ = _compat.safe_split(SVC(), X, y, train)
    np.testing.assert_array_equal(X_train, X[train])


def test_feature_names():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    np.testing.assert_array_equal(_compat.get_feature_names(frame), ["a", "b"])
    assert _compat.get_feature_names(frame.to_numpy()) is None
    est = BaseEstimator()
    _compat.check_feature_names(est, frame, reset=True)
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b"])
    with pytest.raises(ValueError, match="feature names"):
        _compat.check_feature_names(est, frame[["b", "a"]], reset=False)


# ------------------------------------------------------------------------------------ SciPy
def _scipy_version() -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", scipy.__version__).groups()
    return int(major), int(minor)


def test_minres_tolerance_name_follows_scipy():
    assert _compat.MINRES_TOL == ("rtol" if _scipy_version() >= (1, 12) else "tol")


def test_minres_solves_an_indefinite_system(rng):
    n = 40
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    w = np.r_[-np.linspace(1, 3, n // 2), np.linspace(1, 5, n - n // 2)]  # indefinite
    H = (Q * w) @ Q.T
    b = rng.normal(size=n)
    count = [0]

    def tick(_):
        count[0] += 1

    x, info = _compat.minres(H, b, x0=np.zeros(n), rtol=1e-10, maxiter=500, callback=tick)
    assert info == 0 and count[0] > 0
    assert np.linalg.norm(H @ x - b) <= 1e-8 * np.linalg.norm(b)
    # the tolerance reaches scipy: a loose one stops earlier
    x_loose, _ = _compat.minres(H, b, x0=np.zeros(n), rtol=1e-2, maxiter=500)
    assert np.linalg.norm(H @ x_loose - b) > 1e-8 * np.linalg.norm(b)


def _indefinite(rng, n: int, zero_diagonal: bool) -> np.ndarray:
    A = rng.normal(size=(n, n))
    A = A + A.T
    if zero_diagonal and n > 1:  # forces 2x2 pivots of Bunch-Kaufman
        np.fill_diagonal(A, 0.0)
    return A


@pytest.mark.parametrize("n", [1, 2, 5, 37, 120])
@pytest.mark.parametrize("zero_diagonal", [False, True])
@pytest.mark.parametrize("nrhs", [None, 1, 4])
def test_numpy_sytrs_solves_bunch_kaufman_systems(rng, n, zero_diagonal, nrhs):
    """The NumPy ``?sytrs`` used where SciPy lacks LAPACK's (SciPy < 1.15): the solution of
    the symmetric indefinite system from ``dsytrf``'s factor, with 1x1 and 2x2 pivots and
    row interchanges, to the accuracy of a backward-stable solve."""
    A = _indefinite(rng, n, zero_diagonal)
    b = rng.normal(size=n if nrhs is None else (n, nrhs))
    ldu, ipiv, info = lapack.dsytrf(A, lower=0)
    assert info == 0
    x = _compat._sytrs_upper(ldu, ipiv, b)
    assert x.shape == b.shape
    expected = np.linalg.solve(A, b)
    cond = np.linalg.cond(A)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-13 * cond * np.abs(expected).max())
    x2, info2 = _compat.sytrs(ldu, ipiv, b)
    assert info2 == 0
    np.testing.assert_allclose(x2, expected, rtol=0, atol=1e-13 * cond * np.abs(expected).max())
    if _compat.HAVE_LAPACK_SYTRS:  # the same algorithm: agrees with LAPACK to rounding
        np.testing.assert_allclose(x, lapack.dsytrs(ldu, ipiv, b)[0], rtol=1e-12, atol=1e-13)


def test_numpy_sytrs_meets_2x2_pivots_and_interchanges(rng):
    """The matrices of the test above do exercise both kinds of pivot and row swaps."""
    ldu, ipiv, _ = lapack.dsytrf(_indefinite(rng, 120, True), lower=0)
    assert (ipiv < 0).any() and (ipiv > 0).any()
    assert (np.abs(ipiv[ipiv > 0]) != np.flatnonzero(ipiv > 0) + 1).any()
    _, ipiv_mixed, _ = lapack.dsytrf(_indefinite(rng, 120, False), lower=0)
    assert (ipiv_mixed < 0).any()


def test_numpy_sytrs_does_not_change_its_arguments(rng):
    A = _indefinite(rng, 9, True)
    ldu, ipiv, _ = lapack.dsytrf(A, lower=0)
    b = rng.normal(size=(9, 2))
    saved = ldu.copy(), ipiv.copy(), b.copy()
    _compat._sytrs_upper(ldu, ipiv, b)
    for before, after in zip(saved, (ldu, ipiv, b), strict=True):
        np.testing.assert_array_equal(before, after)


def test_sytrs_uses_lapack_where_scipy_has_it():
    assert _compat.HAVE_LAPACK_SYTRS == hasattr(lapack, "dsytrs")
    assert _compat.HAVE_LAPACK_SYTRS == (_scipy_version() >= (1, 15))


def test_ldl_solve_of_an_indefinite_system_through_compat(rng, monkeypatch):
    """The package's Bunch-Kaufman solve (structreg.solvers.factor) gives the solution and
    the inertia of an indefinite system with LAPACK's ``?sytrs`` and with the NumPy one."""
    from structreg.solvers import factor

    A = _indefinite(rng, 30, True) + 0.1 * np.eye(30)
    b = rng.normal(size=(30, 2))
    expected = np.linalg.solve(A, b)
    n_negative = int(np.sum(np.linalg.eigvalsh(A) < 0))
    for lapack_sytrs in {_compat.HAVE_LAPACK_SYTRS, False}:
        monkeypatch.setattr(_compat, "HAVE_LAPACK_SYTRS", lapack_sytrs)
        keep: dict = {}
        x, negative = factor.ldl_solve(A, b, keep=keep)
        np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-10)
        assert negative == n_negative > 0
        B = rng.normal(size=(3, 30))
        np.testing.assert_allclose(
            factor.inverse_quadratic_forms(keep, B),
            np.einsum("ij,ji->i", B, np.linalg.solve(A, B.T)),
            rtol=1e-9,
        )


def test_highs_class_is_a_model_class_or_none():
    highs = _compat.highs_class()
    if highs is None:  # then linprog serves (structreg.structure.l1graph)
        with pytest.raises(ImportError):
            importlib.import_module("highspy")
        return
    h = highs()
    h.setOptionValue("output_flag", False)
    assert hasattr(h, "run")


# ----------------------------------------------------------------------------------- pandas
def test_label_array_gives_nullable_integers_with_na_as_float_nan():
    pd = pytest.importorskip("pandas")
    y = pd.Series([1, pd.NA, 0], dtype="Int64")
    out = _compat.label_array(y)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(out), [False, True, False])
    np.testing.assert_array_equal(out[[0, 2]], [1.0, 0.0])
    unsigned = _compat.label_array(pd.array([2, None], dtype="UInt8"))
    assert unsigned.dtype == np.float64 and np.isnan(unsigned[1])
    # anything else: np.asarray
    for plain in (pd.Series([1, 0], dtype="Int64"), pd.Series(["a", "b"]), [1, -1]):
        np.testing.assert_array_equal(_compat.label_array(plain), np.asarray(plain))
    plain = np.array([0, 1, -1])
    assert _compat.label_array(plain) is plain
