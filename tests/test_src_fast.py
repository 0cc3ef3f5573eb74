"""The fast exact noisy basis pursuit against the lasso homotopy (LARS) it replaces."""

import numpy as np
import pytest

from structreg.models import sparse_representation as srm
from structreg.models.sparse_representation import SRC, noisy_basis_pursuit, unit_rows

EXACT = 1e-8


@pytest.fixture
def lars_rows(monkeypatch):
    """Counts the targets that the fast solver hands to the LARS homotopy."""
    count = [0]
    lars = srm._lars_codes

    def counting(dictionary, gram, targets, epsilon):
        count[0] += targets.shape[0]
        return lars(dictionary, gram, targets, epsilon)

    # the reference (srm._noisy_basis_pursuit_lars) calls _lars_chunk, which is not counted
    monkeypatch.setattr(srm, "_lars_chunk", lambda w, t, e: lars(w.atoms, w.gram, t, e))
    monkeypatch.setattr(srm, "_lars_codes", counting)
    return count


def _compare(D, Y, epsilon):
    lars = srm._noisy_basis_pursuit_lars(D, Y, epsilon).toarray()
    fast = noisy_basis_pursuit(D, Y, epsilon).toarray()
    np.testing.assert_allclose(fast, lars, rtol=0, atol=EXACT)
    return fast


@pytest.mark.parametrize(
    "n_atoms, n_features, epsilon",
    [(60, 20, 0.05), (60, 20, 0.3), (40, 40, 0.1), (120, 30, 0.02)],
)
def test_same_codes_as_lars_on_random_dictionaries(rng, lars_rows, n_atoms, n_features, epsilon):
    D = unit_rows(rng.normal(size=(n_atoms, n_features)))
    Y = unit_rows(rng.normal(size=(12, n_features)))
    codes = _compare(D, Y, epsilon)
    assert lars_rows[0] <= 1  # the certified path, not the fallback, gave (nearly) all codes
    residuals = np.linalg.norm(Y - codes @ D, axis=1)
    np.testing.assert_allclose(residuals, epsilon, rtol=1e-9)


def test_fewer_atoms_than_features_small_targets_and_zero_epsilon(rng, lars_rows):
    D = unit_rows(rng.normal(size=(15, 30)))
    in_span = unit_rows(rng.normal(size=(4, 15)) @ D)
    far = unit_rows(rng.normal(size=(4, 30)))  # infeasible: least squares
    small = 0.05 * unit_rows(rng.normal(size=(2, 30)))  # ||y|| below epsilon: zero code
    Y = np.vstack([in_span, far, small])
    codes = _compare(D, Y, 0.1)
    assert lars_rows[0] == 0
    assert not codes[-2:].any()
    np.testing.assert_allclose(codes[4:8], np.linalg.lstsq(D.T, far.T, rcond=None)[0].T)
    _compare(D, in_span, 0.0)  # basis pursuit: the homotopy for every target
    _compare(unit_rows(rng.normal(size=(40, 15))), Y[:, :15], 0.0)
    assert lars_rows[0] == len(in_span) + len(Y)


def test_epsilon_above_some_target_norms(rng):
    D = unit_rows(rng.normal(size=(50, 20)))
    Y = rng.uniform(0.05, 1.0, size=(10, 1)) * unit_rows(rng.normal(size=(10, 20)))
    codes = _compare(D, Y, 0.3)
    assert not codes[np.linalg.norm(Y, axis=1) <= 0.3].any()


def test_duplicated_and_parallel_atoms_keep_the_constraint_and_the_minimum(rng, lars_rows):
    """Of (anti)parallel atoms only the longest is used: a duplicated dictionary made LARS stop
    early with residuals above epsilon (0.2-0.26 for epsilon = 0.1); now every code meets
    the constraint with the l1 minimum that cvxpy finds."""
    cp = pytest.importorskip("cvxpy")
    D = unit_rows(rng.normal(size=(40, 15)))
    D[1], D[3], D[5] = D[0], -D[2], 2.0 * D[4]  # a duplicate, a negated copy, a longer copy
    Y = unit_rows(rng.normal(size=(6, 15)))
    codes = _compare(D, Y, 0.1)  # the batched solver and LARS agree on the reduced dictionary
    assert lars_rows[0] == 0
    np.testing.assert_allclose(np.linalg.norm(Y - codes @ D, axis=1), 0.1, rtol=1e-9)
    assert not codes[:, [1, 3, 4]].any()  # the first of equals, the longer of two
    for y, code in zip(Y, codes, strict=True):
        x = cp.Variable(len(D))
        problem = cp.Problem(cp.Minimize(cp.norm1(x)), [cp.norm(D.T @ x - y) <= 0.1])
        problem.solve(solver=cp.CLARABEL)
        assert np.abs(code).sum() == pytest.approx(problem.value, rel=1e-6)


def test_dependent_atoms_without_duplicates(rng):
    D = unit_rows(rng.normal(size=(30, 20)))
    D[5] = unit_rows((D[0] + D[1])[None])[0]  # in the span of two others
    Y = unit_rows(rng.normal(size=(8, 20)))
    fast = noisy_basis_pursuit(D, Y, 0.1).toarray()
    lars = srm._noisy_basis_pursuit_lars(D, Y, 0.1).toarray()
    # the minimiser need not be unique: the same l1 norm, the constraint met
    np.testing.assert_allclose(np.abs(fast).sum(1), np.abs(lars).sum(1), rtol=0, atol=EXACT)
    assert np.all(np.linalg.norm(Y - fast @ D, axis=1) <= 0.1 + 1e-9)


def test_infeasible_rank_deficient_dictionary(rng, lars_rows):
    basis = unit_rows(rng.normal(size=(5, 25)))
    D = unit_rows(rng.normal(size=(12, 5)) @ basis)  # 12 atoms spanning 5 dimensions
    Y = unit_rows(rng.normal(size=(5, 25)))
    _compare(D, Y, 0.05)  # no unique least-squares fit: the end of the lasso path
    assert lars_rows[0] == len(Y)


def test_every_target_certified_or_handed_to_lars(rng, monkeypatch, lars_rows):
    D = unit_rows(rng.normal(size=(50, 20)))
    Y = unit_rows(rng.normal(size=(5, 20)))
    monkeypatch.setattr(srm, "ADMM_ROUNDS", 0)  # nothing certified: all by the homotopy
    _compare(D, Y, 0.1)
    assert lars_rows[0] == len(Y)


def test_certificate_rejects_a_non_optimal_code(rng):
    D = unit_rows(rng.normal(size=(30, 10)))
    y = unit_rows(rng.normal(size=(1, 10)))[0]
    work = srm._Dictionary.of(D)
    x = noisy_basis_pursuit(D, y[None], 0.1).toarray()[0]
    support = np.flatnonzero(x)
    signs = np.sign(x[support])
    corr = D @ y
    code, lam = srm._solve_on_support(work, y, corr, 0.1, support, signs)
    np.testing.assert_allclose(code, x[support], atol=1e-12)
    assert srm._kkt_holds(x, D @ (y - x @ D), lam, support, signs)
    wrong_signs = signs.copy()
    wrong_signs[0] *= -1  # one sign flipped: solvable (same support), but not optimal
    code, lam = srm._solve_on_support(work, y, corr, 0.1, support, wrong_signs)
    bad = np.zeros(len(D))
    bad[support] = code
    assert not srm._kkt_holds(bad, D @ (y - bad @ D), lam, support, wrong_signs)


@pytest.fixture(scope="module")
def usps():
    from structreg.datasets import load_dataset

    X, y = load_dataset("usps", return_X_y=True)
    X, y = unit_rows(np.asarray(X, dtype=float)), np.asarray(y).astype(int)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(y))
    return X[order], y[order]


@pytest.mark.parametrize("per_class, n_targets", [(10, 30), (30, 8)])
def test_same_codes_and_predictions_on_usps(usps, monkeypatch, per_class, n_targets):
    X, y = usps
    atoms = np.concatenate([np.flatnonzero(y == c)[:per_class] for c in np.unique(y)])
    rest = np.setdiff1d(np.arange(len(y)), atoms)[:n_targets]
    _compare(X[atoms], X[rest], 0.05)
    clf = SRC().fit(X[atoms], y[atoms])
    fast = clf.predict(X[rest])
    monkeypatch.setattr(srm, "noisy_basis_pursuit", srm._noisy_basis_pursuit_lars)
    np.testing.assert_array_equal(clf.predict(X[rest]), fast)


def test_objective_against_cvxpy(rng):
    cp = pytest.importorskip("cvxpy")
    D = unit_rows(rng.normal(size=(25, 8)))
    for y in unit_rows(rng.normal(size=(3, 8))):
        x = cp.Variable(len(D))
        problem = cp.Problem(cp.Minimize(cp.norm1(x)), [cp.norm(D.T @ x - y) <= 0.1])
        problem.solve(solver=cp.CLARABEL)
        ours = noisy_basis_pursuit(D, y[None], 0.1).toarray()[0]
        assert np.linalg.norm(y - ours @ D) <= 0.1 + 1e-12
        assert np.abs(ours).sum() == pytest.approx(problem.value, rel=1e-6)
