"""Structured large margin machine (structreg.models.slmm): eq. (1) of the SRSVM paper."""

import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from structreg.clustering import class_clusters
from structreg.datasets import make_xor_gaussians
from structreg.models import slmm
from structreg.models.slmm import SLMM, FixedRhoSOCP, cluster_cone_terms, search_rho

cp = pytest.importorskip("cvxpy")


def two_class_clusters(seed=0, n=16):
    """Two classes of two Gaussian clusters each, overlapping a little."""
    rng = np.random.default_rng(seed)
    centers = [(0.0, 0.0), (0.0, 6.0), (3.0, 1.0), (3.5, 7.0)]
    scales = [(1.0, 0.3), (0.4, 1.2), (1.0, 0.3), (0.4, 1.2)]
    X = np.vstack([rng.normal(c, s, size=(n, 2)) for c, s in zip(centers, scales, strict=True)])
    y = np.repeat([0, 0, 1, 1], n)
    return X, y


def reference_terms(X, y_pm, cluster_ids, ridge):
    """Cluster covariances (eq. 10, 1/|C|), their ridge Cholesky factors and the weights."""
    chol, kappa = {}, np.empty(len(y_pm))
    for c in np.unique(cluster_ids):
        members = cluster_ids == c
        cov = np.cov(X[members], rowvar=False, bias=True).reshape(X.shape[1], -1)
        chol[c] = np.linalg.cholesky(cov + ridge * np.eye(X.shape[1]))
    for side in (-1.0, 1.0):
        on_side = y_pm == side
        sizes = {c: np.sum(cluster_ids == c) for c in np.unique(cluster_ids[on_side])}
        largest = max(sizes.values())
        for i in np.flatnonzero(on_side):
            kappa[i] = sizes[cluster_ids[i]] / largest
    return chol, kappa


def independent_min_slack(X, y_pm, cluster_ids, ridge, normal, rho):
    """S(rho) written point by point with Cholesky factors, solved by SCS."""
    chol, kappa = reference_terms(X, y_pm, cluster_ids, ridge)
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    xi = cp.Variable(len(y_pm), nonneg=True)
    cons = [normal @ w == 1]
    for i in range(len(y_pm)):
        spread = cp.norm(chol[cluster_ids[i]].T @ w)
        cons.append(y_pm[i] * (X[i] @ w + b) + xi[i] >= rho * kappa[i] * spread)
    prob = cp.Problem(cp.Minimize(cp.sum(xi)), cons)
    prob.solve(solver="SCS", eps_abs=1e-9, eps_rel=1e-9, max_iters=200000)
    assert prob.status in ("optimal", "optimal_inaccurate")
    return prob.value


# -- building blocks -----------------------------------------------------------------------------
def test_cluster_cone_terms_match_eq10():
    X, y = two_class_clusters(1)
    ids, _ = class_clusters(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    groups, factors, kappa = cluster_cone_terms(X, y_pm, ids)
    _, ref_kappa = reference_terms(X, y_pm, ids, 0.0)
    np.testing.assert_allclose(kappa, ref_kappa)
    for g, A in enumerate(factors):
        members = groups == g
        cov = np.cov(X[members], rowvar=False, bias=True)
        np.testing.assert_allclose(A.T @ A, cov, atol=1e-12)
    # high-dimensional clusters (fewer points than features): the stacked data factor
    Z = np.random.default_rng(0).normal(size=(8, 20))
    _, factors, _ = cluster_cone_terms(Z, np.r_[np.ones(4), -np.ones(4)], np.repeat([0, 1], 4))
    np.testing.assert_allclose(factors[0].T @ factors[0], np.cov(Z[:4].T, bias=True), atol=1e-12)
    with pytest.raises(ValueError, match="both classes"):
        cluster_cone_terms(Z, np.r_[np.ones(4), -np.ones(4)], np.zeros(8, dtype=int))


# -- fixed rho: feasibility and optimality -------------------------------------------------------
@pytest.mark.parametrize("rho", [0.0, 0.7, 2.5])
def test_fixed_rho_solution_is_feasible_and_optimal(rho):
    X, y = two_class_clusters(2)
    C = 2.0
    clf = SLMM(C=C, rho=rho).fit(X, y)
    w, b = clf.coef_[0], clf.intercept_[0]
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    normal = X[y_pm > 0].mean(axis=0) - X[y_pm < 0].mean(axis=0)
    assert clf.rho_[0] == rho
    # the normalisation w^T r = 1
    assert abs(w @ normal - 1.0) <= 1e-6
    # slacks implied by the hyperplane, with independently computed covariances
    chol, kappa = reference_terms(X, y_pm, clf.cluster_ids_, clf.cov_reg_)
    spreads = np.array([np.linalg.norm(chol[c].T @ w) for c in clf.cluster_ids_])
    slack = np.maximum(0.0, rho * kappa * spreads - y_pm * (X @ w + b))
    np.testing.assert_allclose(clf.objective_[0], rho - C * slack.sum(), rtol=1e-6, atol=1e-9)
    # optimal: no lower slack than an independent solver's optimum (beyond its accuracy)
    best = independent_min_slack(X, y_pm, clf.cluster_ids_, clf.cov_reg_, normal, rho)
    assert slack.sum() <= best + 1e-5 * (1.0 + best)
    assert slack.sum() >= best - 1e-5 * (1.0 + best)


def test_fixed_rho_solver_reports_consistent_slacks():
    """The SOCP's own variables satisfy the cone constraints (within 1e-6, slacks >= 0)."""
    X, y = two_class_clusters(3)
    y_pm = np.where(y == 1, 1.0, -1.0)
    ids, _ = class_clusters(X, y)
    groups, factors, kappa = cluster_cone_terms(X, y_pm, ids)
    normal = X[y_pm > 0].mean(0) - X[y_pm < 0].mean(0)
    problem = FixedRhoSOCP(X, y_pm, groups, factors, kappa, normal, C=1.0, ridge=1e-3)
    sol = problem(1.5)
    xi = next(v for v in problem.problem.variables() if v.shape == (len(y),)).value
    assert np.all(xi >= -1e-8)
    need = 1.5 * kappa * problem.spreads(sol.w)[groups]
    lhs = y_pm * (X @ sol.w + sol.b) + xi
    assert np.all(lhs >= need - 1e-6 * (1.0 + np.abs(need)))
    np.testing.assert_allclose(sol.slack.sum(), xi.sum(), rtol=1e-5, atol=1e-7)


def test_min_slack_is_monotone_in_rho():
    X, y = two_class_clusters(4)
    slacks = [SLMM(rho=r).fit(X, y).objective_[0] - r for r in (0.0, 0.5, 1.0, 2.0, 4.0)]
    # objective = rho - C S(rho) with C = 1, so -S(rho) must be non-increasing
    assert np.all(np.diff(slacks) <= 1e-7)


# -- the rho search ------------------------------------------------------------------------------
def test_rho_search_finds_the_best_rho_on_a_grid():
    X, y = two_class_clusters(5)
    clf = SLMM(C=1.0).fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    ids = clf.cluster_ids_
    groups, factors, kappa = cluster_cone_terms(X, y_pm, ids)
    normal = X[y_pm > 0].mean(0) - X[y_pm < 0].mean(0)
    problem = FixedRhoSOCP(X, y_pm, groups, factors, kappa, normal, 1.0, clf.cov_reg_)
    grid = np.linspace(0.0, 3.0 * max(clf.rho_[0], 1.0), 25)
    values = [problem(r).objective for r in grid]
    assert clf.objective_[0] >= max(values) - 1e-4 * (1.0 + abs(max(values)))
    assert clf.rho_[0] > 0


def test_svm_is_the_unit_ball_special_case():
    """Sigma = I, equal weights, separable data, large C: the hard-margin SVM (paper eq. 25)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal([0, 0], 1.0, (20, 2)), rng.normal([5, 3], 1.0, (20, 2))])
    y = np.r_[-np.ones(20), np.ones(20)]
    svc = SVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    w_svm, b_svm = svc.coef_.ravel(), svc.intercept_[0]
    normal = X[y > 0].mean(0) - X[y < 0].mean(0)
    problem = FixedRhoSOCP(
        X, y, (y > 0).astype(int), [np.eye(2), np.eye(2)], np.ones(40), normal, C=1e3
    )
    best, _ = search_rho(problem, n_rho=40)
    # the optimal rho is the SVM's geometric margin 1 / ||w_svm|| ...
    np.testing.assert_allclose(best.rho, 1.0 / np.linalg.norm(w_svm), rtol=1e-4)
    assert best.slack.sum() <= 1e-7
    # ... and the hyperplane is the SVM's
    f_slmm = (X @ best.w + best.b) / np.linalg.norm(best.w)
    f_svm = (X @ w_svm + b_svm) / np.linalg.norm(w_svm)
    assert np.max(np.abs(f_slmm - f_svm)) <= 1e-3 * np.max(np.abs(f_svm))


def test_unbounded_problem_warns():
    """Too small a C makes rho - C sum(xi) grow without bound (see the module docstring)."""
    X, y = make_blobs(60, centers=[[0, 0], [12, 0]], random_state=1)
    with pytest.warns(Warning, match="still rises"):
        clf = SLMM(C=0.01, n_rho=2).fit(X, y)
    assert clf.rho_[0] >= 1000


# -- the estimator -------------------------------------------------------------------------------
def test_xor_with_rbf_kernel():
    X, y = make_xor_gaussians(20, random_state=0)
    X_test, y_test = make_xor_gaussians(100, random_state=1)
    clf = SLMM(kernel="rbf", gamma=0.1).fit(X, y)
    assert clf.score(X_test, y_test) > 0.9
    assert clf.feature_map_ is not None and clf.coef_.shape == (1, clf.feature_map_.n_components_)
    assert clf.n_clusters_.shape == (2,) and np.all(clf.n_clusters_ >= 1)
    assert clf.cluster_ids_.max() + 1 == clf.n_clusters_.sum()


def test_kernel_path_equals_linear_path_for_the_linear_kernel():
    """Ward, covariances, r and the ridge are rotation invariant: V V^T = X X^T gives the
    same classifier as X itself."""
    X, y = two_class_clusters(6, n=10)
    lin = SLMM(rho=1.0).fit(X, y)
    ker = SLMM(rho=1.0, kernel=lambda A, B: A @ B.T).fit(X, y)
    np.testing.assert_array_equal(lin.cluster_ids_, ker.cluster_ids_)
    f_lin, f_ker = lin.decision_function(X), ker.decision_function(X)
    np.testing.assert_allclose(f_ker, f_lin, atol=1e-5 * np.max(np.abs(f_lin)))


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_multiclass(multi_class):
    X, y = make_blobs(45, centers=[[0, 0], [6, 0], [3, 5]], random_state=0)
    clf = SLMM(C=10.0, multi_class=multi_class).fit(X, y)
    n_problems = 3
    assert clf.coef_.shape == (n_problems, 2) and clf.rho_.shape == (n_problems,)
    assert clf.decision_function(X).shape == (45, 3)
    assert clf.score(X, y) > 0.9
    assert clf.n_clusters_.shape == (3,)


def test_string_labels_and_binary_decision_sign():
    X, y = two_class_clusters(7)
    labels = np.where(y == 1, "yes", "no")
    clf = SLMM(C=5.0).fit(X, labels)
    f = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(f > 0, "yes", "no"))
    assert clf.score(X, labels) > 0.9


def test_errors():
    X, y = two_class_clusters(8, n=5)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SLMM().fit(X, np.zeros(len(X)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SLMM().fit(X_nan, y)
    with pytest.raises(ValueError, match="rho"):
        SLMM(rho=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="class means coincide"):
        SLMM().fit(np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]]), [0, 0, 1, 1])
    # means 1e-9 apart next to features of magnitude 3 (a fuzz case): the solvers reported
    # the always-feasible program infeasible; now refused up front
    tiny = np.array([5.8e-09, -1.3e-08, 5.8e-09, 5.8e-09, 4.5e-09, 8.2e-09, 5.8e-09, 4.5e-09])
    X_tiny = np.column_stack([np.full(8, -3.0), tiny])
    with pytest.raises(ValueError, match="class means coincide"):
        SLMM().fit(X_tiny, [0, 1, 2, 2, 2, 1, 2, 0])


def test_an_unsolved_cone_program_is_a_clear_error(monkeypatch):
    X, y = two_class_clusters(8, n=5)
    monkeypatch.setattr(slmm, "_ACCEPTED", ())  # no solver status is taken
    with pytest.raises(ValueError, match="cone program at rho=.* was not solved"):
        SLMM(rho=1.0).fit(X, y)


def test_missing_cvxpy_gives_an_install_hint(monkeypatch):
    X, y = two_class_clusters(9, n=5)
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError, match=r"pip install cvxpy"):
        SLMM().fit(X, y)


def test_package_imports_without_cvxpy():
    import subprocess

    code = (
        "import sys; sys.modules['cvxpy'] = None; import structreg.models.slmm as m; "
        "print(m.SLMM().get_params()['C'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"


# The RBF variant is left out of the generic checks for time (its check_classifiers_train
# alone takes a minute: the kernel features have as many dimensions as samples); the kernel
# path is tested above.
@parametrize_with_checks([SLMM(), SLMM(multi_class="ovo", C=10.0)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        check(estimator)
