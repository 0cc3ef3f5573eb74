"""StructuralRegressor and LapRLSRegressor (issue 19, point 5)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import is_regressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.metrics.pairwise import rbf_kernel

from structreg import LapRLSC, LapRLSRegressor, StructuralRegressor
from structreg.datasets import make_spiral_regression
from structreg.structure import ClassScatterPenalty, LaplacianPenalty


def spiral(n=600, n_labeled=15, seed=0):
    """The noisy spiral of :func:`~structreg.datasets.make_spiral_regression` (4 turns, target
    ``sin(2 pi 2 u)`` along the normalised arc length u) and ``n_labeled`` random labeled
    indices: ``(X, target, labeled)``."""
    X, target = make_spiral_regression(n, random_state=seed)
    labeled = np.random.default_rng(seed).choice(n, n_labeled, replace=False)
    return X, target, labeled


def _semi(target, labeled):
    y = np.full(target.shape, np.nan)
    y[labeled] = target[labeled]
    return y


# -- (1) the closed form against a direct minimisation of the stated objective ----------------
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_closed_form_minimises_the_objective(rng, kernel, fit_intercept):
    n, n_lab, gamma_A, gamma_I = 14, 6, 1e-2, 3.0
    X = rng.normal(size=(n, 2))
    Y = np.c_[np.sin(2 * X[:, 0]) + X[:, 1], X[:, 0] ** 2]  # two outputs
    labeled = np.zeros(n, bool)
    labeled[:n_lab] = True
    y = np.where(labeled[:, None], Y, np.nan)
    reg = LapRLSRegressor(
        kernel=kernel,
        gamma=0.7,
        gamma_A=gamma_A,
        gamma_I=gamma_I,
        n_neighbors=4,
        fit_intercept=fit_intercept,
        solver="dense",
    ).fit(X, y)

    # the stated objective, over f = G theta + b with ||f||_K^2 = theta^T R theta
    L = LaplacianPenalty(n_neighbors=4).build(X, np.zeros(n, int), np.ones(n, bool)).toarray()
    M = gamma_I / n**2 * L
    np.testing.assert_allclose(reg.penalty_matrix(X, y).toarray(), M, atol=1e-14)
    if kernel == "rbf":
        G = R = rbf_kernel(X, gamma=0.7)
    else:
        G, R = X, np.eye(2)
    p, k = G.shape[1], Y.shape[1]

    def objective(v):
        theta = v[: p * k].reshape(p, k)
        b = v[p * k :] if fit_intercept else np.zeros(k)
        F = G @ theta + b
        E = (F - Y)[labeled]
        value = (E**2).sum() / n_lab + gamma_A * np.sum(theta * (R @ theta))
        value += np.sum(F * (M @ F))
        dF = np.zeros_like(F)
        dF[labeled] = 2 * E / n_lab
        dF += 2 * M @ F
        grad = [(G.T @ dF + 2 * gamma_A * R @ theta).ravel()]
        if fit_intercept:
            grad.append(dF.sum(axis=0))
        return value, np.concatenate(grad)

    size = p * k + (k if fit_intercept else 0)
    res = minimize(
        objective,
        np.zeros(size),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11, "maxiter": 10**4},
    )
    theta = res.x[: p * k].reshape(p, k)
    b = res.x[p * k :] if fit_intercept else 0.0
    F_direct = G @ theta + b

    # the model's objective value, from its own representation of f
    if kernel == "rbf":
        basis = reg.feature_map_.basis_
        norm = np.sum(reg.dual_coef_ * (rbf_kernel(basis, gamma=0.7) @ reg.dual_coef_))
    else:
        norm = np.sum(reg.coef_**2)
    F = reg.predict(X)
    E = (F - Y)[labeled]
    value = (E**2).sum() / n_lab + gamma_A * norm + np.sum(F * (M @ F))
    assert value <= res.fun * (1 + 1e-8)
    np.testing.assert_allclose(value, res.fun, rtol=1e-6)
    np.testing.assert_allclose(F, F_direct, atol=1e-5)
    np.testing.assert_allclose(reg.transduction_, F, atol=1e-10)
    if not fit_intercept:
        np.testing.assert_array_equal(reg.intercept_, 0.0)


# -- (2) gamma_I = 0: KernelRidge and Ridge with alpha = l gamma_A ----------------------------
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_no_graph_term_equals_kernel_ridge(rng, n_outputs):
    n, gamma_A = 40, 3e-3
    X = rng.normal(size=(n, 3))
    y = rng.normal(size=(n, n_outputs)) if n_outputs > 1 else np.sin(X[:, 0]) + X[:, 1]
    reg = LapRLSRegressor(gamma=0.5, gamma_A=gamma_A, gamma_I=0.0, fit_intercept=False)
    reg.fit(X, y)
    # (1/l) sum (y - f)^2 + gamma_A ||f||^2  =  (1/l) [sum (y - f)^2 + l gamma_A ||f||^2]
    krr = KernelRidge(kernel="rbf", gamma=0.5, alpha=n * gamma_A).fit(X, y)
    X_new = rng.normal(size=(25, 3))
    np.testing.assert_allclose(reg.predict(X_new), krr.predict(X_new), rtol=1e-7, atol=1e-9)
    assert reg.predict(X_new).shape == krr.predict(X_new).shape


def test_no_graph_term_with_unlabeled_rows_is_kernel_ridge_on_the_labeled(rng):
    """Unlabeled rows only enter the graph term: with gamma_I=0 they change nothing, and
    the ridge scales with the l labeled rows, not n."""
    n, gamma_A = 50, 1e-2
    X = rng.normal(size=(n, 2))
    target = np.cos(X[:, 0]) * X[:, 1]
    labeled = rng.choice(n, 12, replace=False)
    reg = StructuralRegressor(gamma=1.0, gamma_A=gamma_A, fit_intercept=False)
    reg.fit(X, _semi(target, labeled))
    krr = KernelRidge(kernel="rbf", gamma=1.0, alpha=12 * gamma_A)
    krr.fit(X[labeled], target[labeled])
    np.testing.assert_allclose(reg.predict(X), krr.predict(X), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_linear_kernel_equals_ridge(rng, fit_intercept):
    n, gamma_A = 60, 1e-2
    X = rng.normal(size=(n, 4))
    y = X @ rng.normal(size=4) + 3.0 + 0.1 * rng.normal(size=n)
    reg = LapRLSRegressor(
        kernel="linear", gamma_A=gamma_A, gamma_I=0.0, fit_intercept=fit_intercept
    )
    ridge = Ridge(alpha=n * gamma_A, fit_intercept=fit_intercept).fit(X, y)
    reg.fit(X, y)
    np.testing.assert_allclose(reg.coef_.ravel(), ridge.coef_, rtol=1e-8)
    np.testing.assert_allclose(reg.intercept_[0], ridge.intercept_, atol=1e-10)
    np.testing.assert_allclose(reg.predict(X), ridge.predict(X), rtol=1e-8)


# -- (3) semi-supervised on a noisy manifold ----------------------------------------------------
MANIFOLD_MARGIN = 0.2
"""LapRLSRegressor's R^2 on the unlabeled points of the spiral must beat the best KernelRidge
(chosen with the test targets, over a grid of widths and ridges) and LapRLSRegressor without
the graph term by this much.  Measured over seeds 0-9 (15 of 600 points labeled): LapRLS
0.52-0.89, best KernelRidge 0.22-0.33, gamma_I=0 0.02-0.33; the smallest gap was 0.29."""

KRR_GRID = [
    (g, a) for g in (1, 3, 10, 30, 100, 300, 1000) for a in (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10)
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_laplacian_beats_kernel_ridge_on_a_noisy_spiral(seed):
    X, target, labeled = spiral(seed=seed)
    unl = np.setdiff1d(np.arange(len(X)), labeled)
    y = _semi(target, labeled)
    params = dict(gamma=30.0, gamma_A=1e-4, n_neighbors=6)
    lap = LapRLSRegressor(gamma_I=1e4, **params).fit(X, y)
    r2_lap = r2_score(target[unl], lap.predict(X[unl]))
    assert lap.score(X[unl], target[unl]) == pytest.approx(r2_lap)
    r2_no_graph = LapRLSRegressor(gamma_I=0.0, **params).fit(X, y).score(X[unl], target[unl])
    r2_krr = max(
        KernelRidge(kernel="rbf", gamma=g, alpha=a)
        .fit(X[labeled], target[labeled])
        .score(X[unl], target[unl])
        for g, a in KRR_GRID
    )
    assert r2_lap > 0.5
    assert r2_lap > r2_krr + MANIFOLD_MARGIN, (r2_lap, r2_krr)
    assert r2_lap > r2_no_graph + MANIFOLD_MARGIN, (r2_lap, r2_no_graph)


# -- (4) multi-output -------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["dense", "cg", "nystroem"])
def test_multi_output_equals_column_by_column(rng, solver):
    X = rng.normal(size=(80, 3))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2], 5 + X[:, 0]]
    Y[rng.choice(80, 50, replace=False)] = np.nan  # unlabeled rows
    params = dict(gamma=0.5, gamma_A=1e-3, gamma_I=10.0, solver=solver, random_state=0)
    if solver == "cg":
        params["tol"] = 1e-10
    reg = LapRLSRegressor(**params).fit(X, Y)
    X_new = rng.normal(size=(10, 3))
    P = reg.predict(X_new)
    assert P.shape == (10, 3)
    assert reg.transduction_.shape == (80, 3)
    for j in range(3):
        col = LapRLSRegressor(**params).fit(X, Y[:, j])
        assert col.predict(X_new).shape == (10,)
        np.testing.assert_allclose(P[:, j], col.predict(X_new), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reg.intercept_.shape, (3,))


def test_column_y_predicts_a_column(rng):
    X = rng.normal(size=(30, 2))
    y = np.sin(X[:, :1])
    reg = LapRLSRegressor().fit(X, y)
    assert reg.predict(X).shape == (30, 1)
    assert reg.transduction_.shape == (30, 1)
    np.testing.assert_allclose(reg.predict(X).ravel(), LapRLSRegressor().fit(X, y[:, 0]).predict(X))


# -- (5) NaN handling, the unlabeled mask, the intercept, errors --------------------------------
def test_nan_rows_and_the_unlabeled_mask_agree(rng):
    X = rng.normal(size=(40, 2))
    target = X[:, 0] - X[:, 1] ** 2
    labeled = rng.choice(40, 10, replace=False)
    mask = np.ones(40, bool)
    mask[labeled] = False
    by_nan = LapRLSRegressor().fit(X, _semi(target, labeled))
    # the mask's rows are ignored, whatever they hold
    garbage = np.where(mask, 1e6, target)
    by_mask = LapRLSRegressor().fit(X, garbage, unlabeled=mask)
    np.testing.assert_allclose(by_nan.predict(X), by_mask.predict(X), rtol=1e-10)
    # NaN rows and the mask combine
    partly = np.where(np.arange(40) % 2 == 0, np.nan, garbage)
    both = LapRLSRegressor().fit(X, partly, unlabeled=mask | (np.arange(40) % 2 == 0))
    also = LapRLSRegressor().fit(X, partly, unlabeled=mask)
    np.testing.assert_allclose(both.predict(X), also.predict(X), rtol=1e-10)


def test_labeled_values_matter_and_unlabeled_points_shape_the_fit(rng):
    X, target, labeled = spiral(n=300, n_labeled=10, seed=3)
    y = _semi(target, labeled)
    full = LapRLSRegressor(gamma=30.0, gamma_A=1e-4, gamma_I=1e4).fit(X, y)
    only_labeled = LapRLSRegressor(gamma=30.0, gamma_A=1e-4, gamma_I=1e4)
    only_labeled.fit(X[labeled], target[labeled])
    assert not np.allclose(full.predict(X), only_labeled.predict(X), atol=1e-3)


def test_score_is_r2_on_labeled_rows(rng):
    X = rng.normal(size=(40, 2))
    target = np.sin(X[:, 0])
    reg = LapRLSRegressor().fit(X, target)
    y = target.copy()
    y[::3] = np.nan
    keep = ~np.isnan(y)
    assert reg.score(X, y) == pytest.approx(r2_score(target[keep], reg.predict(X)[keep]))
    w = rng.uniform(size=40)
    assert reg.score(X, y, sample_weight=w) == pytest.approx(
        r2_score(target[keep], reg.predict(X)[keep], sample_weight=w[keep])
    )


def test_intercept_follows_a_shift_of_the_targets(rng):
    X, target, labeled = spiral(n=200, n_labeled=20, seed=1)
    y = _semi(target, labeled)
    reg = LapRLSRegressor(gamma=30.0, gamma_A=1e-3, gamma_I=100.0)
    base = reg.fit(X, y).predict(X)
    shifted = reg.fit(X, y + 100.0).predict(X)
    np.testing.assert_allclose(shifted, base + 100.0, rtol=1e-9)
    # without the intercept the RKHS norm pulls the fit towards zero
    no_b = LapRLSRegressor(gamma=30.0, gamma_A=1e-3, gamma_I=100.0, fit_intercept=False)
    assert not np.allclose(no_b.fit(X, y + 100.0).predict(X), base + 100.0, atol=1.0)


def test_regressor_api():
    assert is_regressor(LapRLSRegressor()) and is_regressor(StructuralRegressor())
    assert not hasattr(LapRLSRegressor(), "decision_function")
    assert not is_regressor(LapRLSC())


@pytest.mark.parametrize(
    "y, match",
    [
        (np.full(20, np.nan), "at least one labeled sample"),
        (np.r_[np.inf, np.zeros(19)], "infinite"),
        (np.zeros(19), "inconsistent numbers of samples"),
        (np.zeros((20, 2, 2)), "dim 3"),
        (np.zeros((20, 0)), "0 feature"),
        (np.array(["a"] * 20), "could not convert"),
        (None, "requires y to be passed"),
    ],
)
def test_bad_targets_are_refused(rng, y, match):
    X = rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match=match):
        LapRLSRegressor().fit(X, y)


def test_partly_nan_rows_are_refused(rng):
    X = rng.normal(size=(20, 2))
    Y = rng.normal(size=(20, 2))
    Y[:5] = np.nan  # unlabeled rows: fine
    LapRLSRegressor().fit(X, Y)
    Y[7, 1] = np.nan
    with pytest.raises(ValueError, match="some outputs NaN and others not"):
        LapRLSRegressor().fit(X, Y)
    with pytest.raises(ValueError, match="some outputs NaN and others not"):
        LapRLSRegressor().fit(X, np.nan_to_num(Y)).score(X, Y)


def test_bad_unlabeled_mask_is_refused(rng):
    X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    with pytest.raises(ValueError, match="boolean mask of shape"):
        LapRLSRegressor().fit(X, y, unlabeled=np.zeros(20, int))
    with pytest.raises(ValueError, match="boolean mask of shape"):
        LapRLSRegressor().fit(X, y, unlabeled=np.zeros(19, bool))
    with pytest.raises(ValueError, match="at least one labeled sample"):
        LapRLSRegressor().fit(X, y, unlabeled=np.ones(20, bool))


@pytest.mark.parametrize(
    "estimator, match",
    [
        (StructuralRegressor(loss="hinge"), "square loss only"),
        (LapRLSRegressor(solver="primal"), "accepts solver in"),
        (LapRLSRegressor(graph="class-wise"), "built from class labels"),
        (StructuralRegressor(penalties=[(1.0, ClassScatterPenalty())]), "built from class labels"),
    ],
)
def test_classification_settings_are_refused(rng, estimator, match):
    X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y)


# -- (6) the scale solvers --------------------------------------------------------------------
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_nystroem_with_every_point_as_centre_and_cg_match_dense(fit_intercept):
    X, target, labeled = spiral(n=150, n_labeled=20, seed=2)
    y = _semi(target, labeled)
    params = dict(gamma=30.0, gamma_A=1e-3, gamma_I=100.0, fit_intercept=fit_intercept)
    dense = LapRLSRegressor(solver="dense", **params).fit(X, y)
    X_new = spiral(n=50, seed=9)[0]
    for solver, extra in [("nystroem", dict(n_components=150)), ("cg", dict(tol=1e-10))]:
        other = LapRLSRegressor(solver=solver, random_state=0, **extra, **params).fit(X, y)
        assert other.solver_ == solver
        np.testing.assert_allclose(other.predict(X_new), dense.predict(X_new), atol=1e-5)
        np.testing.assert_allclose(other.transduction_, dense.transduction_, atol=1e-5)
        assert other.transduction_.shape == (150,)


def test_example_runs(tmp_path):
    """examples/plot_laprls_regression.py: the figure is written and LapRLSRegressor beats
    KernelRidge (leave-one-out CV and the best on the test points) on the unlabeled points."""
    import runpy
    from pathlib import Path

    pytest.importorskip("matplotlib")
    example = Path(__file__).parents[1] / "examples" / "plot_laprls_regression.py"
    figure = tmp_path / "figure.png"
    scores = runpy.run_path(str(example))["main"](str(figure))
    assert figure.stat().st_size > 0
    lap = scores["LapRLSRegressor"][0]
    assert lap > scores["KernelRidge (LOO CV)"][0] + MANIFOLD_MARGIN
    assert lap > scores["KernelRidge (best on test)"][0] + MANIFOLD_MARGIN


def test_decision_path_of_a_regressor_gives_its_predictions():
    from structreg.models import decision_path

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    y[10:] = np.nan
    F = decision_path(LapRLSRegressor(), X, y, {"gamma_A": [1e-3, 1e-1]})
    for row, gamma_A in zip(F, [1e-3, 1e-1], strict=True):
        np.testing.assert_allclose(row, LapRLSRegressor(gamma_A=gamma_A).fit(X, y).predict(X))
    assert not np.allclose(F[0], F[1])
