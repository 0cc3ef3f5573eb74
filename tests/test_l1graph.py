"""The l1-graph (exact basis pursuit and restricted lasso) and the S-RLSC penalty."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import pairwise_distances
from sklearn.preprocessing import normalize

from structreg.structure import l1graph
from structreg.structure.l1graph import (
    SparseReconstructionPenalty,
    l1_graph,
    reconstruction_penalty,
)


def _dual_optimum(D: np.ndarray, x: np.ndarray) -> float:
    """``max x^T lam  s.t. |D lam| <= 1, |lam| <= 1`` by an interior-point solver: by LP
    duality the optimum of ``min ||a||_1 + ||e||_1  s.t.  x = D^T a + e``."""
    lam = cp.Variable(x.shape[0])
    problem = cp.Problem(cp.Maximize(x @ lam), [cp.abs(D @ lam) <= 1, cp.abs(lam) <= 1])
    problem.solve(solver="CLARABEL")
    return problem.value


@pytest.mark.parametrize("n, d", [(30, 8), (12, 20)])
def test_exact_codes_are_optimal(rng, n, d):
    X = rng.normal(size=(n, d))
    A = l1_graph(X)
    assert sp.isspmatrix_csr(A) and A.shape == (n, n)
    assert np.all(A.diagonal() == 0)
    Xn = normalize(X)
    A = A.toarray()
    for i in range(n):
        D, a = np.delete(Xn, i, axis=0), np.delete(A[i], i)
        e = Xn[i] - D.T @ a  # the constraint x_i = X_{-i}^T a + e defines e
        objective = np.abs(a).sum() + np.abs(e).sum()
        optimum = _dual_optimum(D, Xn[i])
        # weak duality: every feasible (a, e) costs at least the dual optimum; equality = optimal
        assert objective >= optimum - 1e-6
        assert objective == pytest.approx(optimum, rel=1e-6)
        assert np.count_nonzero(a) + np.count_nonzero(np.abs(e) > 1e-9) <= d  # a vertex


def test_exact_dual_certificate_from_scratch(rng):
    """Cross-check without a third-party solver: one full LP per point (scipy.linprog) on the
    primal ``min 1^T (a+ + a- + e+ + e-)`` has the same optimum."""
    from scipy.optimize import linprog

    X = normalize(rng.normal(size=(15, 6)))
    A = l1_graph(X).toarray()
    for i in range(15):
        D = np.delete(X, i, axis=0).T
        B = np.hstack([D, -D, np.eye(6), -np.eye(6)])
        res = linprog(np.ones(B.shape[1]), A_eq=B, b_eq=X[i], bounds=(0, None), method="highs")
        a = np.delete(A[i], i)
        ours = np.abs(a).sum() + np.abs(X[i] - D @ a).sum()
        assert ours == pytest.approx(res.fun, rel=1e-7)


def test_exact_without_highs_bindings_is_the_same(rng, monkeypatch):
    X = rng.normal(size=(20, 7))
    A = l1_graph(X, n_candidates=3)
    monkeypatch.setattr(l1graph, "_highs_class", lambda: None)
    A_linprog = l1_graph(X, n_candidates=3)
    np.testing.assert_allclose(A_linprog.toarray(), A.toarray(), atol=1e-9)


@pytest.mark.parametrize("caps", [(1, 10**6), (1, 1)], ids=["cold-restart", "interior-point"])
def test_exact_recovers_from_stalled_simplex(rng, monkeypatch, caps):
    """Stalled warm starts are re-solved cold, then by the interior-point method."""
    X = rng.normal(size=(20, 7))
    A = l1_graph(X, n_candidates=3)
    monkeypatch.setattr(l1graph, "_iteration_caps", lambda n_rows, n_cols: caps)
    np.testing.assert_allclose(l1_graph(X, n_candidates=3).toarray(), A.toarray(), atol=1e-7)


def test_exact_result_does_not_depend_on_the_working_set(rng):
    X = rng.normal(size=(25, 6))
    A1 = l1_graph(X, n_candidates=1).toarray()
    A24 = l1_graph(X, n_candidates=24).toarray()
    np.testing.assert_allclose(A1, A24, atol=1e-9)


def test_union_of_subspaces_codes_stay_in_the_subspace(rng):
    # three independent 3-dimensional subspaces of R^15, eight points in each
    bases = [np.linalg.qr(rng.normal(size=(15, 3)))[0] for _ in range(3)]
    X = np.vstack([(B @ rng.normal(size=(3, 8))).T for B in bases])
    group = np.repeat(np.arange(3), 8)
    A = l1_graph(X).toarray()
    Xn = normalize(X)
    for i in range(len(X)):
        support = np.flatnonzero(np.abs(A[i]) > 1e-10)
        assert support.size >= 1
        assert np.all(group[support] == group[i])  # subspace preserving
        # x_i lies in the span of its subspace: no error term is needed
        np.testing.assert_allclose(Xn[support].T @ A[i, support], Xn[i], atol=1e-8)


def test_duplicate_point_is_coded_by_its_twin(rng):
    X = rng.normal(size=(10, 5))
    X = np.vstack([X, 3.0 * X[4]])  # same direction: the same sample after normalisation
    A = l1_graph(X).toarray()
    assert A[10, 4] == pytest.approx(1.0) and np.abs(np.delete(A[10], 4)).sum() < 1e-9
    assert A[4, 10] == pytest.approx(1.0)


def test_rows_are_scaled_to_unit_norm(rng):
    X = rng.normal(size=(15, 4))
    scale = rng.uniform(0.1, 10, size=(15, 1))
    for mode in ("exact", "lasso"):
        A = l1_graph(X, mode=mode, n_candidates=5).toarray()
        np.testing.assert_allclose(l1_graph(scale * X, mode=mode, n_candidates=5).toarray(), A)


def test_lasso_codes_use_only_candidates_and_satisfy_kkt(rng):
    n, d, k, alpha = 40, 6, 7, 1e-2
    X = rng.normal(size=(n, d))
    A = l1_graph(X, mode="lasso", n_candidates=k, alpha=alpha).toarray()
    Xn = normalize(X)
    dist = pairwise_distances(Xn)
    np.fill_diagonal(dist, np.inf)
    for i in range(n):
        cand = np.argsort(dist[i])[:k]
        assert np.all(np.isin(np.flatnonzero(A[i]), cand))
        # optimality of min 1/2 ||x - D a||^2 + alpha ||a||_1 on the candidates
        a = A[i, cand]
        grad = Xn[cand] @ (Xn[i] - Xn[cand].T @ a)
        assert np.all(np.abs(grad) <= alpha + 1e-10)
        on = a != 0
        np.testing.assert_allclose(grad[on], alpha * np.sign(a[on]), atol=1e-10)
    assert A.diagonal().sum() == 0


def _lasso_kkt_violation(X, A, k, alpha):
    Xn = normalize(X)
    dist = pairwise_distances(Xn)
    np.fill_diagonal(dist, np.inf)
    worst = 0.0
    for i in range(len(X)):
        cand = np.argsort(dist[i], kind="stable")[:k]
        a = A[i, cand]
        grad = Xn[cand] @ (Xn[i] - Xn[cand].T @ a)
        on = a != 0
        worst = max(worst, np.max(np.abs(grad) - alpha, initial=0.0))
        worst = max(worst, np.max(np.abs(grad[on] - alpha * np.sign(a[on])), initial=0.0))
    return worst


def test_lasso_coordinate_descent_fallback(rng, monkeypatch):
    """Points the ADMM + polish step cannot certify are solved by coordinate descent."""
    X = rng.normal(size=(30, 5))
    A = l1_graph(X, mode="lasso", n_candidates=6, alpha=1e-2).toarray()
    monkeypatch.setattr(l1graph, "_ADMM_MAX_ROUNDS", 0)
    A_cd = l1_graph(X, mode="lasso", n_candidates=6, alpha=1e-2).toarray()
    np.testing.assert_allclose(A_cd, A, atol=1e-6)
    assert _lasso_kkt_violation(X, A_cd, 6, 1e-2) < 1e-8


def test_lasso_with_duplicate_candidates(rng):
    X = rng.normal(size=(12, 4))
    X = np.vstack([X, X[:6]])  # six points appear twice: non-unique lasso minimisers
    A = l1_graph(X, mode="lasso", n_candidates=5, alpha=1e-2)
    assert np.all(A.diagonal() == 0)
    # the twin of a point is its nearest candidate (distance 0) but never the point itself
    assert _lasso_kkt_violation(X, A.toarray(), 5, 1e-2) < 1e-8


def test_lasso_with_large_alpha_is_empty(rng):
    X = rng.normal(size=(10, 3))
    assert l1_graph(X, mode="lasso", alpha=2.0).nnz == 0  # alpha > max |x_j^T x_i|


def test_n_candidates_at_least_n_uses_all_other_points(rng):
    X = rng.normal(size=(12, 4))
    for mode in ("exact", "lasso"):
        clipped = l1_graph(X, mode=mode, n_candidates=100).toarray()
        np.testing.assert_allclose(clipped, l1_graph(X, mode=mode, n_candidates=11).toarray())


@pytest.mark.parametrize("mode", ["exact", "lasso"])
def test_parallel_equals_serial(rng, mode):
    X = rng.normal(size=(40, 6))
    A1 = l1_graph(X, mode=mode, n_candidates=8, n_jobs=1)
    A2 = l1_graph(X, mode=mode, n_candidates=8, n_jobs=2)
    assert (A1 != A2).nnz == 0


def test_reconstruction_penalty_is_symmetric_psd(rng):
    X = rng.normal(size=(25, 5))
    A = l1_graph(X)
    M = reconstruction_penalty(A)
    assert sp.isspmatrix_csr(M)
    IA = np.eye(25) - A.toarray()
    np.testing.assert_allclose(M.toarray(), IA.T @ IA, atol=1e-12)
    assert abs(M - M.T).max() == 0
    assert np.linalg.eigvalsh(M.toarray()).min() > -1e-10
    f = rng.normal(size=25)
    assert f @ M @ f == pytest.approx(np.sum((f - A @ f) ** 2))


def test_penalty_builds_from_all_training_rows(rng):
    X = rng.normal(size=(20, 4))
    y = np.zeros(20, dtype=int)
    labeled = np.arange(20) < 5  # the labels do not matter: the graph is over all points
    penalty = SparseReconstructionPenalty(mode="lasso", n_candidates=6, alpha=1e-2)
    M = penalty.build(X, y, labeled)
    expected = reconstruction_penalty(l1_graph(X, mode="lasso", n_candidates=6, alpha=1e-2))
    assert (M != expected).nnz == 0
    assert penalty.psd
    assert clone(penalty).get_params() == {
        "mode": "lasso",
        "n_candidates": 6,
        "alpha": 1e-2,
        "n_jobs": None,
        "scale": None,
    }
    assert not hasattr(penalty, "A_")


@pytest.mark.parametrize(
    "X, kwargs, message",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0]]), {}, "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0], [1.0, 1.0]]), {}, "infinity"),
        (np.array([[1.0, 2.0]]), {}, "minimum of 2"),
        (np.ones((3, 2)), {"mode": "omp"}, "mode must be one of"),
        (np.ones((3, 2)), {"n_candidates": 0}, "n_candidates must be a positive integer"),
        (np.ones((3, 2)), {"n_candidates": 2.5}, "n_candidates must be a positive integer"),
        (np.ones((3, 2)), {"alpha": 0.0}, "alpha must be a positive"),
        (np.ones((3, 2)), {"tol": -1.0}, "tol must be a positive"),
    ],
)
def test_bad_input(X, kwargs, message):
    with pytest.raises(ValueError, match=message):
        l1_graph(X, **kwargs)


def test_penalty_reports_bad_mode(rng):
    with pytest.raises(ValueError, match="mode must be one of"):
        SparseReconstructionPenalty(mode="omp").build(rng.normal(size=(5, 2)), None, None)


def test_reconstruction_penalty_bad_input():
    with pytest.raises(ValueError, match="square"):
        reconstruction_penalty(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        reconstruction_penalty(np.array([[0.0, np.nan], [1.0, 0.0]]))


@pytest.mark.parametrize("mode", ["exact", "lasso"])
def test_zero_rows_get_empty_rows_and_columns(mode):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 4))
    X[[2, 7]] = 0.0
    A = l1_graph(X, mode=mode, n_candidates=5).toarray()
    assert A.shape == (12, 12)
    assert not A[[2, 7]].any() and not A[:, [2, 7]].any()
    keep = np.setdiff1d(np.arange(12), [2, 7])
    np.testing.assert_allclose(
        A[np.ix_(keep, keep)], l1_graph(X[keep], mode=mode, n_candidates=5).toarray()
    )
    assert l1_graph(np.zeros((3, 2))).nnz == 0
