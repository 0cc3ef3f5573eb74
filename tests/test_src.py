"""SRC: the exact noisy-basis-pursuit solver against cvxpy, and the classifier."""

import numpy as np
import pytest
from joblib import parallel_config

from structreg._compat import InvalidParameterError
from structreg.models.sparse_representation import SRC, noisy_basis_pursuit, unit_rows

cp = pytest.importorskip("cvxpy")


def _cvxpy_basis_pursuit(D, y, epsilon):
    """``min ||x||_1 s.t. ||y - x @ D|| <= epsilon`` (equality for epsilon = 0) by cvxpy."""
    x = cp.Variable(D.shape[0])
    if epsilon > 0:
        constraint = cp.norm(D.T @ x - y) <= epsilon
    else:
        constraint = D.T @ x == y
    problem = cp.Problem(cp.Minimize(cp.norm1(x)), [constraint])
    problem.solve()
    assert problem.status == cp.OPTIMAL
    return problem.value


def _random_problem(rng, n_atoms, n_features, duplicate=False):
    D = unit_rows(rng.normal(size=(n_atoms, n_features)))
    if duplicate:  # degenerate dictionary: repeated atoms and one minus another
        D[1] = D[0]
        D[3] = -D[2]
    y = unit_rows(rng.normal(size=(1, n_features)))[0]
    return D, y


@pytest.mark.parametrize(
    "n_atoms, n_features, epsilon, duplicate",
    [
        (40, 15, 0.05, False),
        (40, 15, 0.4, False),
        (25, 25, 0.05, False),
        (30, 12, 0.1, True),
        (12, 30, 0.0, False),  # overdetermined; y is put in the span below
        (40, 15, 0.0, False),
    ],
)
def test_feasible_and_l1_optimal_against_cvxpy(rng, n_atoms, n_features, epsilon, duplicate):
    D, y = _random_problem(rng, n_atoms, n_features, duplicate)
    if n_atoms < n_features:
        y = unit_rows((rng.normal(size=n_atoms) @ D)[None])[0]
    x = noisy_basis_pursuit(D, y[None], epsilon).toarray()[0]
    residual = np.linalg.norm(y - x @ D)
    assert residual <= epsilon + 1e-9
    optimum = _cvxpy_basis_pursuit(D, y, epsilon)
    l1 = np.abs(x).sum()
    assert l1 <= optimum * (1 + 1e-6)
    # and not below it beyond cvxpy's own accuracy (ours is feasible, so it cannot be)
    assert l1 >= optimum * (1 - 1e-4)
    if epsilon > 0:  # the constraint is active at the optimum (||y|| = 1 > epsilon)
        assert residual == pytest.approx(epsilon, rel=1e-9)


def test_overdetermined_infeasible_gives_least_squares(rng):
    D, y = _random_problem(rng, 8, 20)
    x = noisy_basis_pursuit(D, y[None], 0.05).toarray()[0]
    ls, *_ = np.linalg.lstsq(D.T, y, rcond=None)
    assert np.linalg.norm(y - ls @ D) > 0.05  # infeasible instance
    np.testing.assert_allclose(x, ls, atol=1e-9)


def test_small_targets_get_zero_code(rng):
    D, _ = _random_problem(rng, 10, 5)
    targets = np.vstack([np.zeros(5), 0.01 * D[0]])
    assert noisy_basis_pursuit(D, targets, 0.05).nnz == 0


def test_jobs_give_the_same_codes(rng):
    D = unit_rows(rng.normal(size=(30, 10)))
    Y = unit_rows(rng.normal(size=(7, 10)))
    serial = noisy_basis_pursuit(D, Y, 0.1).toarray()
    with parallel_config(backend="threading"):  # process workers take seconds to start
        parallel = noisy_basis_pursuit(D, Y, 0.1, n_jobs=2).toarray()
    np.testing.assert_allclose(parallel, serial, atol=1e-12)


def _union_of_subspaces(rng, n_classes=3, dim=3, n_features=30, per_class=15):
    bases = [np.linalg.qr(rng.normal(size=(n_features, dim)))[0] for _ in range(n_classes)]
    X = np.vstack([(B @ rng.normal(size=(dim, per_class))).T for B in bases])
    y = np.repeat(np.arange(n_classes) * 10 + 5, per_class)  # labels 5, 15, 25
    return X, y


def test_recovers_the_class_of_sparse_same_class_combinations(rng):
    X, y = _union_of_subspaces(rng)
    clf = SRC().fit(X, y)
    classes = np.unique(y)
    tests, truth = [], []
    for c in classes:
        atoms = np.flatnonzero(y == c)
        for _ in range(5):
            picked = rng.choice(atoms, size=2, replace=False)
            tests.append(rng.uniform(0.5, 2.0, size=2) @ X[picked])
            truth.append(c)
    tests = np.array(tests)
    np.testing.assert_array_equal(clf.predict(tests), truth)
    # the code concentrates on the right class, whose residual is within epsilon
    residuals = clf.class_residuals(tests)
    true_idx = np.searchsorted(clf.classes_, truth)
    assert np.all(residuals[np.arange(len(tests)), true_idx] <= 0.05 + 1e-9)
    decision = clf.decision_function(tests)
    np.testing.assert_allclose(decision, -residuals)
    np.testing.assert_array_equal(clf.classes_[decision.argmax(axis=1)], truth)


def test_training_points_and_binary_decision(rng):
    X, y = _union_of_subspaces(rng, n_classes=2)
    labels = np.where(y == 5, "a", "b")
    clf = SRC().fit(X, labels)
    np.testing.assert_array_equal(clf.predict(X), labels)
    decision = clf.decision_function(X)
    assert decision.shape == (len(X),)
    np.testing.assert_array_equal(clf.classes_[(decision > 0).astype(int)], labels)
    assert clf.dictionary_.shape == X.shape
    np.testing.assert_allclose(np.linalg.norm(clf.dictionary_, axis=1), 1.0)


def test_codes_are_scale_invariant(rng):
    X, y = _union_of_subspaces(rng)
    clf = SRC(epsilon=0.1).fit(X, y)
    a = clf.sparse_codes(X[:4]).toarray()
    b = clf.sparse_codes(7.0 * X[:4]).toarray()
    np.testing.assert_allclose(a, b, atol=1e-10)
    assert SRC(epsilon=0.1).fit(3.0 * X, y).sparse_codes(X[:4]).toarray() == pytest.approx(a)


def test_errors(rng):
    X, y = _union_of_subspaces(rng, n_classes=2)
    bad = X.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        SRC().fit(bad, y)
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class"):
        SRC().fit(X, np.zeros_like(y))
    clf = SRC().fit(X, y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="X has 5 features, but SRC is expecting 30"):
        clf.predict(X[:, :5])
    with pytest.raises(InvalidParameterError, match="epsilon"):
        SRC(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="targets have 5 features"):
        noisy_basis_pursuit(X, X[:, :5])
