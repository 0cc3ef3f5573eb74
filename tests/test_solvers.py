"""Square-loss closed forms against direct minimisation of the stated objective."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from structreg import StructuralClassifier
from structreg.kernels import kernel_matrix
from structreg.solvers import (
    NonConvexObjectiveWarning,
    solve_penalized_least_squares,
    solve_symmetric,
)
from structreg.structure import PrecomputedPenalty, knn_graph, laplacian


def _problem(rng, n=14, d=3, n_classes=2, duplicate=False):
    X = rng.normal(size=(n, d))
    if duplicate:  # two repeated rows make K exactly singular
        X[1] = X[0]
        X[5] = X[4]
    y = np.arange(n) % n_classes
    y_semi = y.copy()
    y_semi[n_classes * 2 :: 3] = -1  # some unlabeled points
    M = laplacian(knn_graph(X, 3, weights="heat", t=2.0)).toarray() * 0.05
    return X, y, y_semi, M


def _targets(y_semi, n_classes):
    lab = y_semi != -1
    cols = 1 if n_classes == 2 else n_classes
    Y = np.zeros((len(y_semi), cols))
    if n_classes == 2:
        Y[lab, 0] = np.where(y_semi[lab] == 1, 1.0, -1.0)
    else:
        Y[lab] = -1.0
        Y[lab, y_semi[lab]] = 1.0
    return Y, lab


def _objective(K, Y, lab, M, gamma_A, fit_intercept):
    """The stated objective (1/l)||J(K a + b) - Y||^2 + gamma_A a'Ka + f'Mf, f = K a + b."""
    n, c = Y.shape
    l_count = lab.sum()

    def fun(params):
        A = params[: n * c].reshape(n, c)
        b = params[n * c :] if fit_intercept else np.zeros(c)
        F = K @ A + b
        R = (F - Y)[lab]
        val = (R**2).sum() / l_count + gamma_A * np.trace(A.T @ K @ A) + np.trace(F.T @ M @ F)
        gA = 2 * K @ np.where(lab[:, None], F - Y, 0) / l_count + 2 * gamma_A * K @ A
        gA += 2 * K @ M @ F
        gb = 2 * (np.where(lab[:, None], F - Y, 0).sum(0) / l_count + (M @ F).sum(0))
        grad = np.concatenate([gA.ravel(), gb]) if fit_intercept else gA.ravel()
        return val, grad

    return fun


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("duplicate", [False, True])
def test_square_loss_equals_direct_minimisation(rng, n_classes, fit_intercept, duplicate):
    X, y, y_semi, M = _problem(rng, n_classes=n_classes, duplicate=duplicate)
    gamma_A, gamma = 0.05, 0.3
    clf = StructuralClassifier(
        penalties=[(1.0, PrecomputedPenalty(M, psd=True))],
        gamma=gamma,
        gamma_A=gamma_A,
        fit_intercept=fit_intercept,
    ).fit(X, y_semi)
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    if duplicate:
        assert np.linalg.matrix_rank(K) < len(X)
    Y, lab = _targets(y_semi, n_classes)
    fun = _objective(K, Y, lab, M, gamma_A, fit_intercept)
    c = Y.shape[1]
    x0 = np.zeros(len(X) * c + (c if fit_intercept else 0))
    res = minimize(
        fun, x0, jac=True, method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000)
    )
    A_opt = res.x[: len(X) * c].reshape(len(X), c)
    b_opt = res.x[len(X) * c :] if fit_intercept else 0.0
    F_opt = K @ A_opt + b_opt
    # ours, expressed as alpha over the training points
    alpha = np.zeros((len(X), c))
    alpha[clf.feature_map_.basis_indices_] = clf.dual_coef_
    ours = np.concatenate([alpha.ravel(), clf.intercept_]) if fit_intercept else alpha.ravel()
    assert fun(ours)[0] <= res.fun + 1e-8
    F = clf.decision_function(X).reshape(len(X), -1)
    np.testing.assert_allclose(F, F_opt, atol=2e-4)
    np.testing.assert_allclose(K @ alpha + clf.intercept_, F, atol=1e-8)
    # stationarity: gradient of the stated objective vanishes at our solution
    assert np.abs(fun(ours)[1]).max() < 1e-8


def test_closed_form_of_the_papers(rng):
    """(J K + l gamma_A I + l M K) alpha = J Y (no bias): the LapRLSC system."""
    X, y, y_semi, M = _problem(rng, n=20, n_classes=3)
    gamma_A = 0.01
    clf = StructuralClassifier(
        penalties=[(1.0, PrecomputedPenalty(M, psd=True))], gamma=0.5, gamma_A=gamma_A
    ).fit(X, y_semi)
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    Y, lab = _targets(y_semi, 3)
    J, l_count = np.diag(lab.astype(float)), lab.sum()
    alpha = np.zeros((len(X), 3))
    alpha[clf.feature_map_.basis_indices_] = clf.dual_coef_
    A = J @ K + l_count * gamma_A * np.eye(len(X)) + l_count * M @ K
    direct = np.linalg.solve(A, J @ Y)
    np.testing.assert_allclose(K @ alpha, K @ direct, atol=1e-8)
    np.testing.assert_allclose(A @ alpha, J @ Y, atol=1e-6)


def test_primal_path_equals_kernel_path_for_linear_kernel(rng):
    X, y, y_semi, M = _problem(rng, n=25, d=3)
    common = dict(penalties=[(1.0, PrecomputedPenalty(M, psd=True))], kernel="linear", gamma_A=0.1)
    primal = StructuralClassifier(**common).fit(X, y_semi)  # d < n: explicit features
    assert not hasattr(primal, "dual_coef_")
    Xt = rng.normal(size=(7, 3))
    # same problem with more features than samples forces the kernel path
    Xpad = np.hstack([X, np.zeros((25, 30))])
    kern = StructuralClassifier(**common).fit(Xpad, y_semi)
    assert hasattr(kern, "dual_coef_")
    np.testing.assert_allclose(
        primal.decision_function(Xt),
        kern.decision_function(np.hstack([Xt, np.zeros((7, 30))])),
        atol=1e-8,
    )


def test_indefinite_penalty_gives_stationary_point_with_warning(rng):
    X, y, y_semi, M = _problem(rng, n=16)
    Z, Y = rng.normal(size=(16, 4)), rng.normal(size=(16, 1))
    c = np.ones(16) / 16
    M_indef = -5.0 * M  # negative curvature along the graph directions
    with pytest.warns(NonConvexObjectiveWarning):
        sol = solve_penalized_least_squares(Z, Y, c, M_indef, ridge=1e-3)
    assert sol.factorization == "ldl" and not sol.convex  # nonsingular: Bunch-Kaufman
    # gradient of sum c (Z th - Y)^2 + ridge |th|^2 + th' Z' M Z th is zero
    th = sol.coef
    grad = Z.T @ (c[:, None] * (Z @ th - Y)) + 1e-3 * th + Z.T @ M_indef @ Z @ th
    assert np.abs(grad).max() < 1e-10


def test_singular_system_gives_minimum_norm_solution(rng):
    H = np.diag([2.0, 1.0, 0.0])
    rhs = np.array([[2.0], [3.0], [0.0]])
    x, how, convex, singular = solve_symmetric(H, rhs)
    assert how == "eigh" and singular and convex
    np.testing.assert_allclose(x.ravel(), [1.0, 3.0, 0.0])


def test_sparse_and_dense_penalties_agree(rng):
    X, y, y_semi, M = _problem(rng)
    fits = [
        StructuralClassifier(penalties=[(1.0, PrecomputedPenalty(m, psd=True))]).fit(X, y_semi)
        for m in (M, sp.csr_matrix(M))
    ]
    np.testing.assert_allclose(fits[0].decision_function(X), fits[1].decision_function(X))


@pytest.mark.parametrize("loss", ["square", "hinge"])
def test_low_rank_operator_penalty_equals_dense(rng, loss):
    """A penalty given as a low-rank LinearOperator U U^T acts like the dense matrix."""
    from scipy.sparse.linalg import LinearOperator

    from structreg.structure import Penalty

    X, y, y_semi, _ = _problem(rng, n=20)
    U = rng.normal(size=(20, 3)) * 0.1

    class LowRank(Penalty):
        psd = True

        def __init__(self, dense=False):
            self.dense = dense

        def build(self, X, y, labeled):
            if self.dense:
                return U @ U.T
            return LinearOperator(
                (20, 20),
                matvec=lambda v: U @ (U.T @ v),
                matmat=lambda V: U @ (U.T @ V),
                dtype=float,
            )

    fits = [
        StructuralClassifier(loss=loss, penalties=[(1.0, LowRank(d)), (0.5, LowRank(d))]).fit(
            X, y_semi
        )
        for d in (False, True)
    ]
    np.testing.assert_allclose(
        fits[0].decision_function(X), fits[1].decision_function(X), atol=1e-6
    )


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 12),
    p=st.integers(1, 8),
    ridge=st.floats(1e-4, 10.0),
    weight=st.floats(0.0, 5.0),
    fit_intercept=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_solution_is_stationary_property(n, p, ridge, weight, fit_intercept, seed):
    """For any design, weights and PSD penalty the returned point zeroes the gradient."""
    rng = np.random.default_rng(seed)
    Z, Y = rng.normal(size=(n, p)), rng.normal(size=(n, 2))
    c = rng.uniform(0, 1, n) * (rng.uniform(size=n) < 0.7)
    c[0] = 1.0
    B = rng.normal(size=(n, n))
    M = weight * B @ B.T / n
    sol = solve_penalized_least_squares(Z, Y, c, M, ridge=ridge, fit_intercept=fit_intercept)
    assert sol.convex
    F = Z @ sol.coef + sol.intercept
    G = c[:, None] * (F - Y) + M @ F
    grad_theta = Z.T @ G + ridge * sol.coef
    scale = 1 + np.abs(Z).max() * (np.abs(Y).max() + np.abs(F).max()) * (1 + np.abs(M).max())
    assert np.abs(grad_theta).max() < 1e-7 * scale * n
    if fit_intercept:
        assert np.abs(G.sum(axis=0)).max() < 1e-7 * scale * n


def test_bunch_kaufman_solves_indefinite_systems_and_counts_negative_eigenvalues(rng):
    from scipy.linalg import eigh

    from structreg.solvers.factor import ldl_solve

    for q in (2, 3, 7, 30):
        A = rng.normal(size=(q, q))
        H = A + A.T  # indefinite, nonsingular with probability one
        rhs = rng.normal(size=(q, 2))
        x, negative = ldl_solve(H, rhs)
        np.testing.assert_allclose(H @ x, rhs, atol=1e-9 * np.abs(H).max() * np.abs(x).max())
        assert negative == int((eigh(H, eigvals_only=True) < 0).sum())
        x2, how, convex, singular = solve_symmetric(H, rhs)
        assert how == "ldl" and convex == (negative == 0) and not singular
    near = np.diag([1.0, -1.0, 1e-18])  # numerically singular: left to the pseudo-inverse
    assert ldl_solve(near, np.ones((3, 1))) is None
    assert solve_symmetric(near, np.ones((3, 1)))[1] == "eigh"


def test_moved_names_stay_importable_from_their_old_module():
    """The factorisations, the assembly and the solution left solvers/square.py for
    solvers/factor.py, solvers/design.py and solvers/solution.py: the old imports still work
    and give the same objects."""
    from structreg.solvers import design, factor, solution, square

    moved = {
        factor: [
            "cholesky_attempt",
            "cholesky_factor",
            "cholesky_solve",
            "eigh_factor",
            "eigh_solve",
            "inverse_quadratic_forms",
            "ldl_factor",
            "ldl_solve",
            "solve_symmetric",
        ],
        design: [
            "dense_array",
            "design_penalty_diagonal",
            "design_penalty_gram",
            "penalty_products",
        ],
        solution: ["LeastSquaresSolution", "leave_one_out_outputs", "warn_nonconvex"],
    }
    for module, names in moved.items():
        for name in names:
            assert getattr(square, name) is getattr(module, name), name
    assert square.NonConvexObjectiveWarning is NonConvexObjectiveWarning
