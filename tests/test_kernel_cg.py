"""Preconditioned-CG exact-kernel solver against direct solutions of the stated objective."""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

from structreg.kernels import KernelFeatureMap, kernel_matrix
from structreg.solvers import NonConvexObjectiveWarning, solve_penalized_least_squares
from structreg.solvers.kernel_cg import GramOperator, solve_kernel_least_squares
from structreg.structure import knn_graph, laplacian


def _problem(n=120, k=1, seed=0, gamma=1.0, n_labeled=20, kernel="rbf", duplicate=False):
    """Two moons, ``n_labeled`` labeled rows (c = 1/l), the rest unlabeled (c = 0)."""
    X, y = make_moons(n, noise=0.1, random_state=seed)
    if duplicate:  # repeated rows make K exactly singular
        X[1], X[7], X[12] = X[0], X[6], X[6]
    rng = np.random.default_rng(seed)
    lab = np.zeros(n, bool)
    lab[rng.choice(n, n_labeled, replace=False)] = True
    c = lab / lab.sum()
    Y = np.zeros((n, k))
    if k == 1:
        Y[lab, 0] = 2.0 * y[lab] - 1.0
    else:
        codes = (y + (X[:, 0] > 0.5)) % k  # k classes
        Y[lab] = -1.0
        Y[lab, codes[lab]] = 1.0
    K = kernel_matrix(X, kernel=kernel, gamma=None if kernel == "linear" else gamma)
    L = laplacian(knn_graph(X, 6))
    return X, K, Y, c, L


def _dense(M):
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def _direct(K, Y, c, M, ridge, fit_intercept):
    """The papers' nonsymmetric closed form ((C + M) K + ridge I) alpha (+ (C + M) 1 b) = C Y,
    bordered for the bias by its stationarity row 1^T (C + M)(K alpha + 1 b) = 1^T C Y."""
    n = len(c)
    A = np.diag(c) + _dense(M)
    CY = c[:, None] * Y
    if not fit_intercept:
        alpha = np.linalg.solve(A @ K + ridge * np.eye(n), CY)
        return alpha, np.zeros(Y.shape[1]), K @ alpha
    one = np.ones((n, 1))
    top = np.hstack([A @ K + ridge * np.eye(n), A @ one])
    bottom = np.hstack([one.T @ A @ K, one.T @ A @ one])
    x = np.linalg.solve(np.vstack([top, bottom]), np.vstack([CY, CY.sum(0, keepdims=True)]))
    return x[:n], x[n], K @ x[:n] + x[n]


def _feature_fitted(X, Y, c, M, ridge, fit_intercept, **kernel):
    """Fitted values of the existing direct solver on the kernel feature map V (K = V V^T)."""
    Z = KernelFeatureMap(**kernel).fit_transform(X)
    sol = solve_penalized_least_squares(Z, Y, c, M, ridge=ridge, fit_intercept=fit_intercept)
    return Z @ sol.coef + sol.intercept


def _objective(K, Y, c, M, ridge, alpha, b):
    F = K @ alpha + b
    return float(
        (c[:, None] * (F - Y) ** 2).sum()
        + ridge * np.sum(alpha * (K @ alpha))
        + np.sum(F * (_dense(M) @ F))
    )


def _close(a, b, rtol):
    """Max-norm closeness relative to the larger array's scale."""
    scale = max(np.abs(a).max(), np.abs(b).max(), 1e-300)
    return np.abs(a - b).max() <= rtol * scale


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_pcg_equals_direct_solutions(k, fit_intercept):
    X, K, Y, c, L = _problem(n=120, k=k, gamma=1.0)
    M = (1.0 / 120**2) * L  # gamma_I / n^2 L
    ridge = 1e-3
    sol = solve_kernel_least_squares(
        K, Y, c, M, ridge=ridge, fit_intercept=fit_intercept, tol=1e-10
    )
    alpha, b, F = _direct(K, Y, c, M, ridge, fit_intercept)
    assert sol.method == "pcg" and sol.converged and sol.convex is None
    assert sol.dual_coef.shape == (120, k) and sol.intercept.shape == (k,)
    assert _close(sol.fitted, F, 1e-7)
    assert _close(sol.dual_coef, alpha, 1e-5)
    assert np.allclose(sol.intercept, b, atol=1e-7)
    # fitted is K alpha + b for the returned coefficients
    assert _close(sol.fitted, K @ sol.dual_coef + sol.intercept, 1e-10)
    # and agrees with the factorised feature-map solver of structreg.solvers.square
    F_feat = _feature_fitted(X, Y, c, M, ridge, fit_intercept, kernel="rbf", gamma=1.0)
    assert _close(sol.fitted, F_feat, 1e-7)


@pytest.mark.parametrize("form", ["dense", "operator"])
def test_intercept_with_penalty_not_annihilating_constants(form):
    # M = L + mu I does not annihilate 1, so the bias block s = 1^T (C + M) 1 is not sum(c)
    X, K, Y, c, L = _problem(n=80, k=3, gamma=2.0, seed=1)
    Md = 1e-3 * (L.toarray() + 0.5 * np.eye(80))
    M = Md if form == "dense" else LinearOperator((80, 80), matvec=lambda v: Md @ v, dtype=float)
    sol = solve_kernel_least_squares(K, Y, c, M, ridge=1e-2, fit_intercept=True, tol=1e-10)
    alpha, b, F = _direct(K, Y, c, Md, 1e-2, True)
    assert sol.converged
    assert _close(sol.fitted, F, 1e-7)
    assert np.allclose(sol.intercept, b, atol=1e-7)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("case", ["duplicates", "linear"])
def test_singular_gram_matrix(case, fit_intercept):
    if case == "duplicates":
        X, K, Y, c, L = _problem(n=90, gamma=1.0, duplicate=True)
        kernel = {"kernel": "rbf", "gamma": 1.0}
    else:  # linear kernel, d = 2 < n: rank 2
        X, K, Y, c, L = _problem(n=90, kernel="linear")
        kernel = {"kernel": "linear"}
    assert np.linalg.matrix_rank(K) < 90
    M = 1e-3 * L
    ridge = 1e-2
    sol = solve_kernel_least_squares(
        K, Y, c, M, ridge=ridge, fit_intercept=fit_intercept, tol=1e-10
    )
    _, b, F = _direct(K, Y, c, M, ridge, fit_intercept)
    assert sol.converged
    assert _close(sol.fitted, F, 1e-7)
    assert np.allclose(sol.intercept, b, atol=1e-7)
    assert _close(sol.fitted, _feature_fitted(X, Y, c, M, ridge, fit_intercept, **kernel), 1e-7)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_indefinite_penalty_falls_back_to_minres(fit_intercept):
    X, K, Y, c, L = _problem(n=60, k=1, gamma=30.0, seed=2)  # narrow RBF: cond(K) ~ 3e3
    M = -0.05 * L  # indefinite structure penalty
    ridge = 0.1
    with pytest.warns(NonConvexObjectiveWarning):
        sol = solve_kernel_least_squares(
            K, Y, c, M, ridge=ridge, fit_intercept=fit_intercept, tol=1e-10
        )
    assert sol.method == "minres"
    assert sol.convex is False
    assert sol.converged
    # stationary point: the gradient -2 [K (g - ridge alpha); 1^T g] vanishes
    F = K @ sol.dual_coef + sol.intercept
    g = c[:, None] * Y - (c[:, None] * F + M @ F)
    grad_alpha = K @ (g - ridge * sol.dual_coef)
    scale = np.linalg.norm(K @ (c[:, None] * Y))
    assert np.linalg.norm(grad_alpha) <= 1e-9 * scale
    if fit_intercept:
        assert abs(g.sum()) <= 1e-9 * scale
    # ... the one the closed form defines (a saddle: H has a negative eigenvalue)
    _, _, F_direct = _direct(K, Y, c, M, ridge, fit_intercept)
    assert _close(sol.fitted, F_direct, 1e-6)
    A = np.diag(c) + M.toarray()
    assert np.linalg.eigvalsh(K @ A @ K + ridge * K).min() < 0


def test_objective_is_minimal_and_matches_lbfgs():
    X, K, Y, c, L = _problem(n=30, k=1, gamma=10.0, n_labeled=10, seed=3)
    M = 0.01 * L
    ridge = 1e-2
    sol = solve_kernel_least_squares(K, Y, c, M, ridge=ridge, fit_intercept=True, tol=1e-12)
    J0 = _objective(K, Y, c, M, ridge, sol.dual_coef, sol.intercept)
    rng = np.random.default_rng(0)
    for scale in (1e-4, 1e-2, 1.0):
        for _ in range(10):
            da = scale * rng.normal(size=sol.dual_coef.shape)
            db = scale * rng.normal(size=1)
            assert _objective(K, Y, c, M, ridge, sol.dual_coef + da, sol.intercept + db) >= J0

    Md = M.toarray()

    def fun(x):
        a, b = x[:30, None], x[30]
        F = K @ a + b
        R = c[:, None] * (F - Y)
        val = float(np.sum(R * (F - Y)) + ridge * np.sum(a * (K @ a)) + np.sum(F * (Md @ F)))
        G = R + Md @ F  # = -g
        return val, np.concatenate([2 * (K @ (G + ridge * a)).ravel(), [2 * G.sum()]])

    res = minimize(
        fun,
        np.zeros(31),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12},
    )
    F_lbfgs = K @ res.x[:30] + res.x[30]
    assert _close(sol.fitted[:, 0], F_lbfgs, 1e-4)
    assert J0 <= res.fun + 1e-12


def test_gram_operator_stored_and_blockwise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    kernel_fn = functools.partial(kernel_matrix, kernel="rbf", gamma=0.5)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    v, V = rng.normal(size=150), rng.normal(size=(150, 3))

    stored = GramOperator(X, kernel_fn)
    assert stored.stored and stored.block_size is None
    calls = []

    def recording(A, B):
        calls.append((A.shape[0], B.shape[0]))
        return kernel_fn(A, B)

    blockwise = GramOperator(X, recording, max_bytes=150 * 150 * 8 - 1)
    assert not blockwise.stored and calls == []  # nothing computed up front
    assert 1 <= blockwise.block_size < 150
    for op in (stored, blockwise):
        assert np.allclose(op @ v, K @ v, rtol=1e-12, atol=1e-12)
        assert np.allclose(op @ V, K @ V, rtol=1e-12, atol=1e-12)
        assert np.allclose(op.T @ v, K @ v, rtol=1e-12, atol=1e-12)
        assert (op @ v).shape == (150,) and (op @ V).shape == (150, 3)
    assert calls and all(rows <= blockwise.block_size < 150 for rows, _ in calls)
    assert (150, 150) not in calls
    # blocks for tiny memory bounds: one row at a time; explicit block_size is honoured
    assert GramOperator(X, kernel_fn, max_bytes=8).block_size == 1
    assert GramOperator(X, kernel_fn, max_bytes=8, block_size=40).block_size == 40
    # the solver accepts the operator in place of K
    _, Kp, Y, c, L = _problem(n=100, k=3)
    Xm, _ = make_moons(100, noise=0.1, random_state=0)
    gram = functools.partial(kernel_matrix, kernel="rbf", gamma=1.0)
    op = GramOperator(Xm, gram, max_bytes=25 * 100 * 8)  # blocks of 25 rows
    a = solve_kernel_least_squares(op, Y, c, 1e-3 * L, ridge=1e-3, tol=1e-10)
    d = solve_kernel_least_squares(Kp, Y, c, 1e-3 * L, ridge=1e-3, tol=1e-10)
    assert _close(a.fitted, d.fitted, 1e-9)


def test_non_convergence_warns():
    _, K, Y, c, L = _problem(n=100, k=3)
    with pytest.warns(ConvergenceWarning, match=r"tol=1e-14.*max_iter=2"):
        sol = solve_kernel_least_squares(K, Y, c, 1e-3 * L, ridge=1e-4, tol=1e-14, max_iter=2)
    assert sol.converged is False
    assert sol.n_iter == 2


def _counting(K):
    count = {"products": 0}

    def matvec(v):
        count["products"] += 1
        return K @ v

    def matmat(V):
        count["products"] += 1
        return K @ V

    op = LinearOperator(K.shape, matvec=matvec, matmat=matmat, rmatvec=matvec, dtype=float)
    return op, count


@pytest.mark.parametrize("k", [1, 3])
def test_few_iterations_and_one_kernel_product_each(k):
    n = 300
    _, K, Y, c, L = _problem(n=n, k=k, n_labeled=30)
    op, count = _counting(K)
    sol = solve_kernel_least_squares(op, Y, c, (1.0 / n**2) * L, ridge=1e-3, tol=1e-8)
    assert sol.converged and sol.method == "pcg"
    assert sol.n_iter < n / 2
    # one block product K @ (n, k) per iteration, plus the initial K @ (C Y)
    assert count["products"] <= sol.n_iter + 3
    ref = solve_kernel_least_squares(K, Y, c, (1.0 / n**2) * L, ridge=1e-3, tol=1e-8)
    assert np.array_equal(ref.fitted, sol.fitted)


def test_warm_start_and_edge_cases():
    _, K, Y, c, L = _problem(n=80, k=3)
    M = 1e-3 * L
    sol = solve_kernel_least_squares(K, Y, c, M, ridge=1e-3, fit_intercept=True, tol=1e-10)
    x0 = np.vstack([sol.dual_coef, sol.intercept])
    warm = solve_kernel_least_squares(K, Y, c, M, ridge=1e-3, fit_intercept=True, tol=1e-6, x0=x0)
    assert warm.n_iter == 0 and warm.converged
    assert np.allclose(warm.fitted, sol.fitted, atol=1e-10)
    # a column with C Y = 0 has the zero solution; no penalty means a convex objective
    Y0 = Y.copy()
    Y0[:, 1] = 0.0
    zero = solve_kernel_least_squares(K, Y0, c, None, ridge=1e-2)
    assert zero.convex is True and zero.converged
    assert np.all(zero.dual_coef[:, 1] == 0) and np.all(zero.fitted[:, 1] == 0)
    # 1-D targets come back as one column
    one = solve_kernel_least_squares(K, Y[:, 0], c, M, ridge=1e-2)
    assert one.dual_coef.shape == (80, 1)
    with pytest.raises(ValueError, match="non-negative"):
        solve_kernel_least_squares(K, Y, -c, M, ridge=1e-2)
    with pytest.raises(ValueError, match="ridge"):
        solve_kernel_least_squares(K, Y, c, M, ridge=-1.0)
