"""Primal squared-hinge LapSVM solver (:mod:`structreg.solvers.primal_hinge`)."""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar
from scipy.sparse.linalg import aslinearoperator
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from structreg.kernels import KernelFeatureMap, LandmarkFeatureMap
from structreg.solvers.design import design_penalty_diagonal, design_penalty_gram
from structreg.solvers.primal_hinge import exact_line_search, solve_squared_hinge
from structreg.structure import knn_graph, laplacian

RIDGE = 1e-3
N = 80


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """The problems here are small: threaded BLAS only adds overhead (a lot on a busy host)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@lru_cache(maxsize=1)
def _moons():
    """80 two-moons points, 10 labeled (5 per class), RBF feature map, kNN heat Laplacian,
    three independent +-1 target columns (the moons, -moons and a vertical cut)."""
    X, y = make_moons(N, noise=0.1, random_state=0)
    y = 2.0 * y - 1.0
    Z = KernelFeatureMap(kernel="rbf", gamma=2.0).fit_transform(X)
    rng = np.random.default_rng(0)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(y == s), 5, replace=False) for s in (1.0, -1.0)]
    )
    c = np.zeros(N)
    c[lab] = 1.0 / lab.size
    Y = np.zeros((N, 3))
    Y[lab, 0] = y[lab]
    Y[lab, 1] = np.where(X[lab, 0] > 0.5, 1.0, -1.0)
    Y[lab, 2] = -y[lab]
    L = laplacian(knn_graph(X, 6, weights="heat"))
    return X, y, Z, c, Y, L, lab


def _penalty(gamma_I: float):
    return gamma_I / N**2 * _moons()[5]


def _objective(w, Z, y, c, M, ridge, fit_intercept):
    """J(theta, b) and its gradient (J is convex and C^1)."""
    p = Z.shape[1]
    theta = w[:p]
    f = Z @ theta + (w[p] if fit_intercept else 0.0)
    h = np.maximum(0.0, 1.0 - y * f)
    Mf = M @ f if M is not None else np.zeros_like(f)
    value = c @ h**2 + ridge * theta @ theta + f @ Mf
    gf = -2.0 * c * y * h + 2.0 * Mf
    grad = Z.T @ gf + 2.0 * ridge * theta
    return value, np.append(grad, gf.sum()) if fit_intercept else grad


def _weights(sol, j, fit_intercept):
    return np.append(sol.coef[:, j], sol.intercept[j]) if fit_intercept else sol.coef[:, j]


def _fitted(sol, Z, j):
    return Z @ sol.coef[:, j] + sol.intercept[j]


@cache
def _reference(gamma_I: float, fit_intercept: bool, j: int):
    """Direct minimisation of J by L-BFGS-B: (objective, fitted values on all points)."""
    _, _, Z, c, Y, _, _ = _moons()
    args = (Z, Y[:, j], c, _penalty(gamma_I), RIDGE, fit_intercept)
    res = minimize(
        _objective,
        np.zeros(Z.shape[1] + int(fit_intercept)),
        args=args,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "maxcor": 50, "ftol": 1e-16, "gtol": 1e-12},
    )
    p = Z.shape[1]
    return res.fun, Z @ res.x[:p] + (res.x[p] if fit_intercept else 0.0)


CASES = [(g, fi, k) for g in (1e-2, 10.0) for fi in (True, False) for k in (1, 3)]


@pytest.mark.parametrize("factorization", ["woodbury", "cholesky"])
@pytest.mark.parametrize("gamma_I,fit_intercept,k", CASES)
def test_direct_equals_lbfgs_minimiser(gamma_I, fit_intercept, k, factorization):
    _, _, Z, c, Y, _, _ = _moons()
    M = _penalty(gamma_I)
    sol = solve_squared_hinge(
        Z, Y[:, :k], c, M, ridge=RIDGE, fit_intercept=fit_intercept, factorization=factorization
    )
    assert sol.coef.shape == (Z.shape[1], k) and sol.intercept.shape == (k,)
    assert sol.converged and sol.factorization == factorization and not sol.singular
    if not fit_intercept:
        assert np.all(sol.intercept == 0)
    for j in range(k):
        J_ref, f_ref = _reference(gamma_I, fit_intercept, j)
        J = _objective(_weights(sol, j, fit_intercept), Z, Y[:, j], c, M, RIDGE, fit_intercept)[0]
        assert sol.objective[j] == pytest.approx(J, rel=1e-10, abs=1e-14)
        assert abs(J - J_ref) <= 1e-5 * max(1.0, J_ref)
        assert J <= J_ref + 1e-12  # the exact minimiser is never worse than L-BFGS
        np.testing.assert_allclose(_fitted(sol, Z, j), f_ref, atol=1e-4)


def test_structure_penalty_changes_the_solution():
    """The strong Laplacian case is a real LapSVM: it differs from the plain L2-SVM."""
    _, _, Z, c, Y, _, _ = _moons()
    with_M = solve_squared_hinge(Z, Y[:, :1], c, _penalty(10.0), ridge=RIDGE)
    without = solve_squared_hinge(Z, Y[:, :1], c, None, ridge=RIDGE)
    assert np.abs(_fitted(with_M, Z, 0) - _fitted(without, Z, 0)).max() > 0.1


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gradient_vanishes_at_the_solution(fit_intercept):
    """KKT: J is C^1 and convex, so the solution is where its gradient is zero."""
    _, _, Z, c, Y, _, lab = _moons()
    M = _penalty(10.0)
    sol = solve_squared_hinge(Z, Y, c, M, ridge=RIDGE, fit_intercept=fit_intercept)
    for j in range(Y.shape[1]):
        # a non-trivial active set: some labeled points are support vectors, some are not
        assert 0 < sol.active[lab, j].sum() < lab.size
        g0 = _objective(
            np.zeros(Z.shape[1] + fit_intercept), Z, Y[:, j], c, M, RIDGE, fit_intercept
        )
        g = _objective(_weights(sol, j, fit_intercept), Z, Y[:, j], c, M, RIDGE, fit_intercept)
        assert np.linalg.norm(g[1]) <= 1e-7 * np.linalg.norm(g0[1])


def test_finite_termination_on_the_active_set():
    _, _, Z, c, Y, _, lab = _moons()
    sol = solve_squared_hinge(Z, Y, c, _penalty(10.0), ridge=RIDGE)
    assert sol.converged and sol.stop_reason == ["active_set"] * 3
    assert 2 <= sol.n_iter < 20  # the first (LapRLSC) step is not the answer; few more are
    assert sol.n_iter == sol.n_iter_columns.max()
    unlabeled = np.setdiff1d(np.arange(N), lab)
    for j in range(3):
        f = _fitted(sol, Z, j)
        expected = np.zeros(N, dtype=bool)
        expected[lab] = Y[lab, j] * f[lab] < 1
        np.testing.assert_array_equal(sol.active[:, j], expected)
        assert not sol.active[unlabeled, j].any()
        # the same support vectors as the independent L-BFGS minimiser (away from the margin)
        f_ref = _reference(10.0, True, j)[1]
        clear = np.abs(1 - Y[lab, j] * f_ref[lab]) > 1e-3
        np.testing.assert_array_equal(
            (Y[lab, j] * f_ref[lab] < 1)[clear], sol.active[lab, j][clear]
        )


def test_max_iter_reached():
    _, _, Z, c, Y, _, _ = _moons()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        sol = solve_squared_hinge(Z, Y, c, _penalty(10.0), ridge=RIDGE, max_iter=1)
    assert not sol.converged and sol.n_iter == 1 and "max_iter" in sol.stop_reason


@pytest.mark.parametrize("factorization", ["woodbury", "cholesky"])
def test_no_penalty_is_the_primal_l2_svm(factorization):
    """J / (2 ridge) = 1/2 ||w||^2 + C sum max(0, 1 - y w.x)^2 with C = 1 / (2 ridge l)."""
    rng = np.random.default_rng(1)
    n, d, ridge = 120, 4, 1e-2
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None] * np.array([1.0, -0.5, 0.0, 0.3])
    c = np.full(n, 1.0 / n)
    sol = solve_squared_hinge(
        X, y, c, None, ridge=ridge, fit_intercept=False, factorization=factorization
    )
    svc = LinearSVC(
        loss="squared_hinge",
        penalty="l2",
        dual=False,
        C=1.0 / (2.0 * ridge * n),
        fit_intercept=False,
        tol=1e-12,
        max_iter=100000,
    ).fit(X, y)
    w = svc.coef_.ravel()
    np.testing.assert_allclose(sol.coef[:, 0], w, atol=1e-4 * np.abs(w).max())
    np.testing.assert_array_equal(np.sign(X @ sol.coef[:, 0]), np.sign(X @ w))
    J_svc = _objective(w, X, y, c, None, ridge, False)[0]
    assert sol.objective[0] == pytest.approx(J_svc, rel=1e-7)
    assert 0 < sol.active.sum() < n  # margin violators exist, and not everyone is one


def test_scaling_smoke_20000_points():
    n = 20000
    X, y = make_moons(n, noise=0.1, random_state=0)
    y = 2.0 * y - 1.0
    Z = LandmarkFeatureMap(landmarks=X[:200], gamma=2.0).fit_transform(X)
    M = 1.0 / n**2 * laplacian(knn_graph(X, 10, weights="heat"))
    rng = np.random.default_rng(0)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(y == s), 10, replace=False) for s in (1.0, -1.0)]
    )
    c = np.zeros(n)
    c[lab] = 1.0 / lab.size
    Y = np.where(c > 0, y, 0.0)[:, None]
    direct = solve_squared_hinge(Z, Y, c, M, ridge=1e-4)
    assert direct.converged
    signs_d = np.sign(_fitted(direct, Z, 0))
    assert np.mean(signs_d == y) >= 0.95  # 20 labels + the graph recover the moons


# ----------------------------------------------------------------------------------------
# building blocks, fallbacks and validation


def test_penalty_gram_and_diagonal_in_blocks():
    rng = np.random.default_rng(2)
    n, p = 50, 7
    Z = rng.normal(size=(n, p))
    W = sp.random(n, n, density=0.1, random_state=3)
    M = (laplacian(W + W.T) + sp.diags(rng.random(n))).tocsr()  # PSD with M 1 != 0
    for fit_intercept in (True, False):
        A = np.hstack([Z, np.ones((n, 1))]) if fit_intercept else Z
        expected = A.T @ (M @ A)
        for pen in (M, M.toarray(), aslinearoperator(M)):
            for block in (1, 24, 10**6):  # one row / column at a time, several blocks, one
                G = design_penalty_gram(Z, pen, fit_intercept=fit_intercept, block_elements=block)
                np.testing.assert_allclose(G, expected, rtol=1e-12, atol=1e-12)
                dg = design_penalty_diagonal(
                    Z, pen, fit_intercept=fit_intercept, block_elements=block
                )
                np.testing.assert_allclose(dg, np.diag(expected), rtol=1e-12, atol=1e-12)


def test_sparse_design_and_operator_penalty_agree():
    _, _, Z, c, Y, _, _ = _moons()
    M = _penalty(10.0)
    ref = solve_squared_hinge(Z, Y, c, M, ridge=RIDGE)
    for Zv, Mv in ((sp.csr_matrix(Z), M), (Z, aslinearoperator(M)), (Z, M.toarray())):
        sol = solve_squared_hinge(Zv, Y, c, Mv, ridge=RIDGE)
        np.testing.assert_allclose(sol.coef, ref.coef, atol=1e-7)
        np.testing.assert_allclose(sol.intercept, ref.intercept, atol=1e-7)


def test_exact_line_search_matches_scalar_minimisation():
    rng = np.random.default_rng(4)
    for trial in range(30):
        size = 25
        m = rng.normal(1.0, 1.0, size)
        mu = rng.normal(size=size)
        mu[:3] = 0.0  # points that do not move
        m[3] = 1.0  # a point exactly at the margin
        w = rng.random(size)
        q2 = rng.random() + 0.1
        q1 = rng.normal()

        def phi(t, m=m, mu=mu, w=w, q1=q1, q2=q2):
            return np.sum(w * np.maximum(0.0, 1.0 - m - t * mu) ** 2) + 2 * q1 * t + q2 * t**2

        t = exact_line_search(m, mu, w, q1, q2)
        best = minimize_scalar(phi, bounds=(0.0, 50.0), method="bounded", options={"xatol": 1e-12})
        assert t >= 0
        assert phi(t) <= min(phi(best.x), phi(0.0)) + 1e-10, trial
        if t > 0:  # phi is C^1: stationary at an interior minimiser
            assert abs(phi(t + 1e-6) - phi(t - 1e-6)) / 2e-6 < 1e-5, trial
        else:
            assert phi(1e-6) >= phi(0.0), trial


def test_singular_newton_system_falls_back_to_the_pseudo_inverse():
    """ridge = 0, no penalty, more features than labels: H_S is singular (min-norm step)."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(10, 20))
    y = np.where(rng.random(10) < 0.5, -1.0, 1.0)
    sol = solve_squared_hinge(Z, y, np.full(10, 0.1), None, ridge=0.0)
    assert sol.singular and sol.factorization == "eigh" and sol.converged
    assert sol.objective[0] < 1e-20  # the data are interpolated: zero loss
    np.testing.assert_allclose(Z @ sol.coef[:, 0] + sol.intercept[0], y, atol=1e-8)


def test_indefinite_penalty_is_refused():
    _, _, Z, c, Y, L, _ = _moons()
    with pytest.raises(ValueError, match="not positive semi-definite"):
        solve_squared_hinge(Z, Y, c, -1.0 * L, ridge=RIDGE)


def test_no_labeled_points_gives_the_zero_function():
    _, _, Z, _, _, _, _ = _moons()
    sol = solve_squared_hinge(Z, np.zeros(N), np.zeros(N), _penalty(1.0), ridge=RIDGE)
    assert sol.converged and not sol.active.any()
    np.testing.assert_allclose(sol.coef, 0.0, atol=1e-12)
    np.testing.assert_allclose(sol.intercept, 0.0, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"Y": np.full(N, 0.5)}, "-1 or \\+1"),
        ({"loss_weights": -np.ones(N)}, "non-negative"),
        ({"Y": np.ones((N + 1, 1))}, "shape"),
        ({"ridge": -1.0}, "ridge"),
        ({"factorization": "lu"}, "factorization"),
        ({"penalty": sp.eye(N + 1)}, "penalty"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_invalid_input(kwargs, match):
    _, _, Z, c, Y, _, _ = _moons()
    args = {"Y": Y, "loss_weights": c, "penalty": None, "ridge": RIDGE, **kwargs}
    Yv, cv, pen = args.pop("Y"), args.pop("loss_weights"), args.pop("penalty")
    with pytest.raises(ValueError, match=match):
        solve_squared_hinge(Z, Yv, cv, pen, **args)
