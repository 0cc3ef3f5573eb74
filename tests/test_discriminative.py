"""DRLSC, DRGV, DiscriminativeRLS (GDR/LDR), LSSVM and GRBFN against their definitions."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris, make_blobs

from structreg import DRGV, DRLSC, GRBFN, LSSVM, RLSC, DiscriminativeRLS
from structreg.kernels import kernel_matrix
from structreg.solvers import NonConvexObjectiveWarning, solve_penalized_least_squares
from structreg.structure import LaplacianPenalty, build_penalties

# indefinite DRLSC objectives on purpose where a test is not about the warning
pytestmark = [
    pytest.mark.filterwarnings("ignore::structreg.exceptions.NonConvexObjectiveWarning"),
]


def _blobs(n=60, centers=3, d=2, seed=0):
    return make_blobs(n, n_features=d, centers=centers, cluster_std=2.0, random_state=seed)


def _drlsc_matrix(X, y, eta, k):
    labeled = np.ones(len(y), bool)
    Lw = LaplacianPenalty("within-class", k, "connectivity").build(X, y, labeled).toarray()
    Lb = LaplacianPenalty("between-class", k, "connectivity").build(X, y, labeled).toarray()
    return eta * Lw - (1 - eta) * Lb


def _pm(y, n_classes):
    return np.where(np.arange(n_classes)[None, :] == y[:, None], 1.0, -1.0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_drlsc_eta_one_dual_equals_primal_normal_equations(n_classes):
    X, y = _blobs(centers=n_classes)
    dual = DRLSC(eta=1.0, n_neighbors=4, formulation="bordered").fit(X, y)
    assert dual.solver_info_["convex"] and not dual.solver_info_["singular"]
    # primal normal equations of 1/2 sum e^2 + 1/2 f^T L_w f, written out by hand
    M = _drlsc_matrix(X, y, 1.0, 4)
    A = np.hstack([X, np.ones((len(X), 1))])
    Y = _pm(y, n_classes)[:, -1:] if n_classes == 2 else _pm(y, n_classes)
    wb = np.linalg.solve(A.T @ (np.eye(len(X)) + M) @ A, A.T @ Y)
    F = (A @ wb).ravel() if n_classes == 2 else A @ wb
    np.testing.assert_allclose(dual.decision_function(X), F, atol=1e-8)
    primal = DRLSC(eta=1.0, n_neighbors=4, formulation="primal").fit(X, y)
    np.testing.assert_allclose(primal.decision_function(X), F, atol=1e-8)


def test_drlsc_bordered_system_of_theorem_2():
    """The fitted (b, Gamma) solve [[0, 1^T], [1, Omega + I]] [b; Gamma] = [0; Y]."""
    X, y = _blobs(centers=3)
    clf = DRLSC(eta=0.7, n_neighbors=4, formulation="bordered").fit(X, y)
    S = X.T @ _drlsc_matrix(X, y, 0.7, 4) @ X
    S_pinv = np.linalg.pinv(S)
    Omega = X @ S_pinv @ X.T
    n = len(X)
    B = np.block([[np.zeros((1, 1)), np.ones((1, n))], [np.ones((n, 1)), Omega + np.eye(n)]])
    sol = np.linalg.solve(B, np.vstack([np.zeros((1, 3)), _pm(y, 3)]))
    b, Gamma = sol[0], sol[1:]
    np.testing.assert_allclose(clf.intercept_, b, atol=1e-8)
    np.testing.assert_allclose(clf.coef_, S_pinv @ X.T @ Gamma, atol=1e-8)


def test_drlsc_indefinite_s_eta_but_convex_objective():
    """S_eta indefinite (eta < 1) while the loss keeps the objective convex: the bordered
    pseudo-inverse solution is the unique minimiser (= primal normal equations)."""
    X, y = make_blobs(60, centers=[[0, 0], [1, 1]], cluster_std=1.0, random_state=3)
    clf = DRLSC(eta=0.2, n_neighbors=6, formulation="bordered").fit(X, y)
    assert clf.solver_info_["S_eta_psd"] is False and clf.solver_info_["convex"] is True
    primal = DRLSC(eta=0.2, n_neighbors=6, formulation="primal").fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), primal.decision_function(X), atol=1e-8)


def test_drlsc_non_convex_case_is_a_saddle_stationary_point():
    """Classes that overlap completely with eta = 0: the objective is unbounded below; the
    returned solution is its stationary point (gradient zero), not a minimiser."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), np.arange(60) % 2
    clf = DRLSC(eta=0.0, n_neighbors=10, formulation="bordered").fit(X, y)
    assert clf.solver_info_["convex"] is False
    M = _drlsc_matrix(X, y, 0.0, 10)
    A = np.hstack([X, np.ones((len(X), 1))])
    Y = _pm(y, 2)[:, -1:]
    wb = np.vstack([clf.coef_, clf.intercept_])
    grad = A.T @ ((A @ wb - Y) + M @ (A @ wb))
    assert np.abs(grad).max() < 1e-8
    w, V = np.linalg.eigh(A.T @ (np.eye(len(X)) + M) @ A)

    def J(v):
        F = A @ v
        return 0.5 * np.sum((F - Y) ** 2) + 0.5 * np.sum(F * (M @ F))

    assert w[0] < 0 and J(wb + 10 * V[:, :1]) < J(wb) - 1.0
    with pytest.warns(NonConvexObjectiveWarning):
        primal = DRLSC(eta=0.0, n_neighbors=10, formulation="primal").fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), primal.decision_function(X), atol=1e-8)


def test_drlsc_kernel_version_uses_the_feature_map():
    X, y = load_iris(return_X_y=True)
    clf = DRLSC(eta=0.9, n_neighbors=5, kernel="rbf", gamma=0.5).fit(X, y)
    assert clf.feature_map_.n_components_ > X.shape[1]
    assert clf.score(X, y) > 0.95


def test_drgv_penalty_is_generalized_variance():
    X, y = _blobs(centers=3)
    f = np.random.default_rng(0).normal(size=(len(X), 3))
    M, _ = build_penalties(DRGV(eta=0.3)._penalty_terms(len(X), len(X)), X, y, np.ones(60, bool))
    means = np.array([f[y == c].mean(0) for c in range(3)])
    Sw = sum(((f[y == c] - means[c]) ** 2).sum() / (y == c).sum() for c in range(3))
    Sb = sum(((means[c] - means[k]) ** 2).sum() for c in range(3) for k in range(3) if k != c)
    np.testing.assert_allclose(np.trace(f.T @ (M @ f)), 0.3 * Sw - 0.7 * Sb)
    clf = DRGV(eta=1.0, formulation="bordered").fit(X, y)
    primal = DRGV(eta=1.0, formulation="primal").fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), primal.decision_function(X), atol=1e-8)


def test_discriminative_rls_without_discriminality_is_kernel_rls():
    X, y = _blobs(centers=3)
    for margin in ("global", "local"):
        dr = DiscriminativeRLS(margin=margin, gamma=0.3, gamma_A=0.01, gamma_D=0.0).fit(X, y)
        rls = RLSC(gamma=0.3, gamma_A=0.01).fit(X, y)
        np.testing.assert_allclose(dr.decision_function(X), rls.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("margin", ["global", "local"])
def test_discriminative_rls_kernel_closed_form(margin):
    """alpha = (K + n lam I + n gamma L_D K)^{-1} Y (the paper's eq. 21), where the paper's
    sum-form gamma is gamma_D / n."""
    X, y = _blobs(n=40, centers=2)
    lam, gam = 0.05, 0.002
    clf = DiscriminativeRLS(margin=margin, gamma=0.2, gamma_A=lam, gamma_D=40 * gam).fit(X, y)
    M, _ = build_penalties(clf._penalty_terms(40, 40), X, y, np.ones(40, bool))
    L_D = M @ np.eye(40) / gam
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    Y = _pm(y, 2)[:, -1:]
    alpha = np.linalg.solve(K + 40 * lam * np.eye(40) + 40 * gam * L_D @ K, Y)
    np.testing.assert_allclose(clf.decision_function(X), (K @ alpha).ravel(), atol=1e-7)


def test_global_discriminality_spectrum():
    X, y = _blobs(centers=3)
    M, psd = build_penalties(
        DiscriminativeRLS(gamma_D=1.0)._penalty_terms(60, 60), X, y, np.ones(60, bool)
    )
    w = np.linalg.eigvalsh(M @ np.eye(60)) * 60  # the term is (gamma_D / n) f^T L_D f
    np.testing.assert_allclose(np.sort(np.round(w, 8))[[0, 1, 2]], [-1, -1, 0], atol=1e-8)
    assert np.allclose(w[3:], 1.0) and not psd


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_linear_and_kernel_forms_agree(fit_intercept):
    X, y = _blobs(n=50, centers=3, d=3)
    common = dict(margin="local", gamma_A=0.05, gamma_D=1e-3, fit_intercept=fit_intercept)
    lin = DiscriminativeRLS(kernel="linear", **common).fit(X, y)  # primal (d+1)-system
    ker = DiscriminativeRLS(kernel=lambda A, B: A @ B.T, **common).fit(X, y)  # kernel form
    assert lin.coef_.shape[0] == 3 and ker.feature_map_.n_components_ == 3
    Xt = np.random.default_rng(1).normal(size=(10, 3)) * 5
    np.testing.assert_allclose(lin.decision_function(Xt), ker.decision_function(Xt), atol=1e-8)


@pytest.mark.parametrize("margin", ["global", "local"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_cg_path_equals_dense(margin, kernel):
    X, y = _blobs(n=60, centers=3, d=4)
    common = dict(margin=margin, kernel=kernel, gamma=0.2, gamma_A=0.05, gamma_D=1e-3)
    dense = DiscriminativeRLS(**common).fit(X, y)
    cg = DiscriminativeRLS(solver="cg", tol=1e-12, **common).fit(X, y)
    assert cg.solver_ == "cg" and dense.solver_ == "dense"
    assert cg.solver_info_["factorization"] in (
        ("cg", "minres") if kernel == "linear" else ("pcg", "minres")
    )
    np.testing.assert_allclose(cg.decision_function(X), dense.decision_function(X), atol=1e-6)


def test_cg_handles_sparse_design_and_indefinite_system():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    Z = sp.random(80, 30, density=0.1, random_state=0, format="csr")
    Y = rng.normal(size=(80, 2))
    c = np.full(80, 1 / 80)
    M = -0.5 * np.eye(80) / 80  # negative penalty: indefinite normal equations
    dense = solve_penalized_least_squares(Z.toarray(), Y, c, None, ridge=0.1, fit_intercept=True)
    it = solve_penalized_least_squares(
        Z, Y, c, None, ridge=0.1, fit_intercept=True, method="cg", tol=1e-12
    )
    np.testing.assert_allclose(it.coef, dense.coef, atol=1e-7)
    np.testing.assert_allclose(it.intercept, dense.intercept, atol=1e-7)
    with pytest.warns(NonConvexObjectiveWarning):
        d2 = solve_penalized_least_squares(
            Z.toarray(), Y, c, 10 * M, ridge=1e-3, fit_intercept=True
        )
    with pytest.warns(NonConvexObjectiveWarning):
        it2 = solve_penalized_least_squares(
            Z, Y, c, 10 * M, ridge=1e-3, fit_intercept=True, method="cg", tol=1e-12
        )
    np.testing.assert_allclose(it2.coef, d2.coef, atol=1e-6)


def test_lssvm_bordered_system_and_direct_minimisation():
    X, y = _blobs(n=30, centers=2)
    C = 3.0
    clf = LSSVM(gamma=0.2, C=C).fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=0.2)
    t = np.where(y == 1, 1.0, -1.0)
    B = np.block([[np.zeros((1, 1)), np.ones((1, 30))], [np.ones((30, 1)), K + np.eye(30) / C]])
    sol = np.linalg.solve(B, np.r_[0.0, t])
    np.testing.assert_allclose(clf.intercept_, sol[:1], atol=1e-9)
    np.testing.assert_allclose(clf.dual_coef_.ravel(), sol[1:], atol=1e-9)

    def J(p):  # 1/2 ||w||^2 + C/2 sum e_i^2 with w = sum alpha_i phi(x_i)
        a, b = p[:30], p[30]
        e = K @ a + b - t
        return 0.5 * a @ K @ a + 0.5 * C * e @ e

    res = minimize(J, np.zeros(31), method="BFGS", options=dict(gtol=1e-10))
    F_opt = K @ res.x[:30] + res.x[30]
    np.testing.assert_allclose(clf.decision_function(X), F_opt, atol=1e-4)
    # the 1999 form [[0, y^T], [y, Omega + I/C]] [b; a] = [0; 1] with Omega = y y^T o K
    Bs = np.block([[np.zeros((1, 1)), t[None]], [t[:, None], np.outer(t, t) * K + np.eye(30) / C]])
    s = np.linalg.solve(Bs, np.r_[0.0, np.ones(30)])
    np.testing.assert_allclose(clf.decision_function(X), K @ (s[1:] * t) + s[0], atol=1e-8)


def test_lssvm_equals_rlsc_with_bias_and_ovo():
    X, y = load_iris(return_X_y=True)
    a = LSSVM(gamma=0.5, C=10.0).fit(X, y)
    b = RLSC(gamma=0.5, gamma_A=1 / (150 * 10.0), fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)
    ovo = LSSVM(gamma=0.5, C=10.0, multi_class="ovo").fit(X, y)
    assert ovo.score(X, y) > 0.95 and ovo.decision_function(X).shape == (150, 3)


def test_grbfn_regularised_output_weights():
    X, y = load_iris(return_X_y=True)
    clf = GRBFN(n_centers=8, gamma=0.5, gamma_A=1e-3, random_state=0).fit(X, y)
    C = clf.centers_
    G = kernel_matrix(X, C, kernel="rbf", gamma=0.5)
    G0 = kernel_matrix(C, kernel="rbf", gamma=0.5)
    A = np.hstack([G, np.ones((150, 1))])
    R = np.zeros((9, 9))
    R[:8, :8] = G0
    Y = _pm(y, 3)
    # Haykin: (G^T G + lambda G_0) w = G^T Y with lambda = n gamma_A, bias unpenalised
    wb = np.linalg.solve(A.T @ A + 150 * 1e-3 * R, A.T @ Y)
    np.testing.assert_allclose(clf.decision_function(X), A @ wb, atol=1e-7)
    assert clf.score(X, y) > 0.9


@pytest.mark.parametrize(
    "est, match",
    [
        (DRLSC(n_neighbors=20), "n_neighbors=20 must be smaller than the smallest class"),
        (DRLSC(eta=1.5), "eta"),
        (DRGV(eta=-0.1), "eta"),
        (DiscriminativeRLS(margin="local", n_neighbors=25), "class .* fewer than n_neighbors"),
        (GRBFN(n_centers=100), "n_centers=100 exceeds the number of samples"),
        (LSSVM(C=0.0), "C"),
    ],
)
def test_errors(est, match):
    X, y = _blobs(n=60, centers=3)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_drlsc_primal_is_stationary_when_s_eta_is_singular():
    """More feature-map components than the graph constrains: S_eta is singular.  The default
    primal solver still returns a stationary point of the stated objective."""
    X, y = make_blobs(40, centers=2, cluster_std=1.5, random_state=0)
    clf = DRLSC(eta=0.9, n_neighbors=5, kernel="rbf", gamma=0.05).fit(X, y)
    Z = clf.feature_map_.transform(X)
    M = _drlsc_matrix(X, y, 0.9, 5)
    S = Z.T @ M @ Z
    assert np.linalg.matrix_rank(S) < S.shape[0]
    A = np.hstack([Z, np.ones((40, 1))])
    wb = np.vstack([clf.coef_, clf.intercept_])
    Y = _pm(y, 2)[:, -1:]

    def rel_grad(v):  # gradient relative to the scale of the normal equations
        g = A.T @ ((A @ v - Y) + M @ (A @ v))
        return np.abs(g).max() / (np.linalg.norm(A, 2) * np.linalg.norm(Y))

    assert rel_grad(wb) < 1e-5


@pytest.mark.parametrize("margin", ["global", "local"])
def test_sparse_input_on_the_cg_path(margin):
    import scipy.sparse as sp

    X, y = make_blobs(80, n_features=20, centers=3, random_state=0)
    X[np.abs(X) < 3] = 0
    common = dict(margin=margin, kernel="linear", gamma_D=1e-4, gamma_A=0.1)
    a = DiscriminativeRLS(solver="cg", tol=1e-12, **common).fit(sp.csr_matrix(X), y)
    b = DiscriminativeRLS(**common).fit(X, y)
    np.testing.assert_allclose(
        a.decision_function(sp.csr_matrix(X)), b.decision_function(X), atol=1e-8
    )
    auto = DiscriminativeRLS(tol=1e-12, **common).fit(sp.csr_matrix(X), y)
    assert auto.solver_ == "cg"  # "auto" sends sparse input to the matrix-free path
    np.testing.assert_allclose(auto.decision_function(X), b.decision_function(X), atol=1e-8)
    with pytest.raises(TypeError, match="[Ss]parse"):
        DiscriminativeRLS(solver="dense", **common).fit(sp.csr_matrix(X), y)


# -- issue 19, point 0/1: gamma_D is size-consistent and its default is convex ---------------------
@pytest.mark.parametrize("margin", ["global", "local"])
def test_auto_gamma_d_is_half_the_convexity_bound(margin):
    """gamma_D="auto": lambda_min(I + gamma_D_ L_D) = 1 - 0.5 = 0.5 (or the objective is convex
    for every weight when L_D has no eigenvalue below -1), with L_D written out by hand."""
    X, y = _blobs(n=60, centers=3)
    clf = DiscriminativeRLS(margin=margin, n_neighbors=3, n_neighbors_other=3).fit(X, y)
    labeled = np.ones(60, bool)
    if margin == "global":
        onehot = np.eye(3)[y]
        sizes = onehot.sum(0)
        within = np.eye(60) - onehot @ np.diag(1 / sizes) @ onehot.T  # I - class averaging
        between = onehot @ np.diag(1 / sizes) @ onehot.T - np.full((60, 60), 1 / 60)
        L_D = within - between
    else:
        parts = [("class-wise", 1.0), ("other-class", -1.0)]
        L_D = sum(
            s * LaplacianPenalty(g, 3, "connectivity").build(X, y, labeled).toarray()
            for g, s in parts
        )
    lowest = np.linalg.eigvalsh(L_D)[0]
    assert clf.gamma_D_ == pytest.approx(0.5 / max(1.0, -lowest), rel=1e-8)
    if -lowest >= 1:
        assert np.linalg.eigvalsh(np.eye(60) + clf.gamma_D_ * L_D)[0] == pytest.approx(0.5)
    assert clf.solver_info_["convex"]


def test_gamma_d_convex_on_folds_stays_convex_at_refit():
    """A gamma_D whose objective is convex on every 3-fold training part is convex on the whole
    training set (the discriminality term is averaged like the loss).  With the paper's
    sum-form weight the convexity threshold moves with n, and values between the fold and the
    full-set thresholds would fail this."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = _blobs(n=90, centers=3, d=4, seed=3)
    grid = np.round(np.geomspace(0.3, 30.0, 25), 6)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    seen = {True: 0, False: 0}
    with pytest.warns(NonConvexObjectiveWarning):  # the large weights are non-convex
        for gamma_D in grid:
            clf = DiscriminativeRLS(kernel="linear", gamma_A=1e-6, gamma_D=gamma_D)
            on_folds = all(clf.fit(X[tr], y[tr]).solver_info_["convex"] for tr, _ in folds)
            on_all = clf.fit(X, y).solver_info_["convex"]
            seen[on_folds] += 1
            assert on_all or not on_folds, gamma_D
        search = GridSearchCV(
            DiscriminativeRLS(kernel="linear", gamma_A=1e-6), {"gamma_D": list(grid)}, cv=folds
        ).fit(X, y)
    assert seen[True] and seen[False]  # the grid crosses the threshold
    best = search.best_params_["gamma_D"]
    fold_convex = all(
        DiscriminativeRLS(kernel="linear", gamma_A=1e-6, gamma_D=best)
        .fit(X[tr], y[tr])
        .solver_info_["convex"]
        for tr, _ in folds
    )
    assert search.best_estimator_.solver_info_["convex"] or not fold_convex


def test_default_discriminative_rls_is_as_good_as_rlsc():
    """Issue 19's trap: the old default (sum-form gamma_D = 0.1) scored 4.7 % here."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import cross_val_score
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(300, n_features=10, random_state=0)
    X = StandardScaler().fit_transform(X)
    ours = cross_val_score(DiscriminativeRLS(), X, y, cv=5).mean()
    rlsc = cross_val_score(RLSC(), X, y, cv=5).mean()
    assert ours >= rlsc - 0.02
    blobs = make_blobs(30, random_state=0)
    assert DiscriminativeRLS().fit(*blobs).score(*blobs) >= RLSC().fit(*blobs).score(*blobs) - 0.02
