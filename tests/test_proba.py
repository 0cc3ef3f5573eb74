"""predict_proba of the square-loss and hinge models (issue 19, point 2).

The leave-one-out outputs the square losses calibrate on are checked against brute-force
refits; the probabilities against their defining properties and scikit-learn's consumers
(SelfTrainingClassifier, CalibratedClassifierCV, roc_auc scoring, soft voting).
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_iris, make_blobs, make_classification, make_moons
from sklearn.ensemble import VotingClassifier
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
from sklearn.semi_supervised import SelfTrainingClassifier

from structreg import (
    DRGV,
    DRLSC,
    GRBFN,
    LSSVM,
    RLSC,
    SRSVM,
    DALapRLSC,
    DiscriminativeRLS,
    LapRLSC,
    LapSVM,
    SparseRLSC,
    SSDRWang,
    SSDRWu,
    StructuralClassifier,
)
from structreg.kernels import kernel_matrix
from structreg.models import LapRLSCCV, StructuralClassifierCV, fit_path
from structreg.models._proba import LOO_MAX_SAMPLES, TemperatureScaling
from structreg.solvers import NonConvexObjectiveWarning, solve_penalized_least_squares


def _semi(y, per_class, seed=0):
    """``y`` with all but ``per_class`` random samples of each class marked -1."""
    order = np.random.default_rng(seed).permutation(len(y))
    keep = np.concatenate([order[y[order] == c][:per_class] for c in np.unique(y)])
    return np.where(np.isin(np.arange(len(y)), keep), y, -1)


def _pm(y, classes):
    """+-1 one-of-c targets (one column for two classes), as the square losses fit them."""
    codes = np.searchsorted(classes, y)
    if len(classes) == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(len(classes)), 1.0, -1.0)


def _loo(model):
    values = model.calibrator_.decision_values_
    return values[:, None] if values.ndim == 1 else values


# -- the leave-one-out outputs against brute-force refits -------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        dict(gamma=2.0),
        dict(gamma=2.0, fit_intercept=True),
        dict(gamma=2.0, solver="nystroem", n_components=25, random_state=0),
    ],
)
def test_semi_supervised_loo_equals_refits_with_the_sample_unlabeled(params):
    """Sample i turned unlabeled (it stays in the graph); the other l - 1 labels keep their
    loss weight 1/l, i.e. the refit's 1/(l-1)-weighted loss with both weights times
    l / (l - 1)."""
    X, y = make_moons(60, noise=0.1, random_state=0)
    y_semi = _semi(y, 5)
    gamma_A, gamma_I = 1e-2, 1.0
    model = LapRLSC(gamma_A=gamma_A, gamma_I=gamma_I, **params).fit(X, y_semi)
    labeled = np.flatnonzero(y_semi != -1)
    np.testing.assert_array_equal(model.calibrator_.sample_indices_, labeled)
    scale = len(labeled) / (len(labeled) - 1)
    for k, i in enumerate(labeled):
        y_i = y_semi.copy()
        y_i[i] = -1
        refit = LapRLSC(gamma_A=gamma_A * scale, gamma_I=gamma_I * scale, **params)
        f_i = refit.fit(X, y_i).decision_function(X[i : i + 1])
        np.testing.assert_allclose(model.calibrator_.decision_values_[k], f_i[0], atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_supervised_loo_equals_refits_without_the_sample(fit_intercept):
    X, y = make_classification(40, n_features=5, random_state=0)
    n, gamma_A = len(X), 1e-2
    model = RLSC(gamma=0.3, gamma_A=gamma_A, fit_intercept=fit_intercept).fit(X, y)
    assert model.feature_map_.n_components_ == n  # a full-rank factor: the same RKHS
    for i in range(n):
        refit = RLSC(gamma=0.3, gamma_A=gamma_A * n / (n - 1), fit_intercept=fit_intercept)
        refit.fit(np.delete(X, i, axis=0), np.delete(y, i))
        np.testing.assert_allclose(
            model.calibrator_.decision_values_[i],
            refit.decision_function(X[i : i + 1])[0],
            atol=1e-8,
        )


def test_multiclass_loo_equals_refits_without_the_sample():
    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    n = len(X)
    model = RLSC(gamma=0.5, gamma_A=1e-2).fit(X, y)
    for i in range(0, n, 4):
        refit = RLSC(gamma=0.5, gamma_A=1e-2 * n / (n - 1)).fit(np.delete(X, i, 0), np.delete(y, i))
        np.testing.assert_allclose(
            _loo(model)[i], refit.decision_function(X[i : i + 1])[0], atol=1e-8
        )


def test_lssvm_loo_equals_refits_without_the_sample():
    """The bordered system: LS-SVM's error weight C does not depend on n, so deleting the
    sample is the whole change."""
    X, y = make_classification(40, n_features=5, random_state=1)
    model = LSSVM(gamma=0.3, C=3.0).fit(X, y)
    for i in range(len(X)):
        refit = LSSVM(gamma=0.3, C=3.0).fit(np.delete(X, i, 0), np.delete(y, i))
        np.testing.assert_allclose(
            model.calibrator_.decision_values_[i],
            refit.decision_function(X[i : i + 1])[0],
            atol=1e-8,
        )


def _drop_one_solve(Z, Y, c, M, ridge, i):
    """The square-loss objective without sample i's loss term (penalty and design fixed),
    solved directly: ``(output at sample i, whether that system was singular)``."""
    c = c.copy()
    c[i] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        sol = solve_penalized_least_squares(Z, Y, c, M, ridge=ridge, fit_intercept=True)
    return Z[i] @ sol.coef + sol.intercept, sol.factorization == "eigh"


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: DRLSC(n_neighbors=3), "projected-cholesky"),  # a redundant feature, no ridge
        (lambda: DRLSC(n_neighbors=3, kernel="rbf", gamma=0.3), "projected-ldl"),
        (lambda: DRLSC(n_neighbors=3, eta=1.0, kernel="rbf", gamma=0.3), "projected-cholesky"),
        (lambda: DiscriminativeRLS(kernel="linear", gamma_A=1e-3, gamma_D=40.0), "ldl"),
    ],
)
def test_loo_of_label_reading_penalties_drops_the_loss_term_only(make, expected):
    """DRLSC's class graphs and GDR's class scatter read the labels: the leave-one-out output
    is that of the objective without the sample's loss term, the penalty kept (documented).
    Where that objective has no unique stationary point (its system singular: the fit
    interpolates the sample, h_i = 1), the output is NaN and left out of the calibration."""
    X, y = make_classification(40, n_features=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        model = make().fit(X, y)
    assert model.solver_info_["factorization"] == expected
    Z = X if model.kernel == "linear" else model.feature_map_.transform(X)
    Y = _pm(y, model.classes_)
    c, ridge = model._loss_weights(np.ones(len(X), bool)), model._ridge()
    M = model.penalty_matrix(X, y)
    undefined = 0
    for i in range(len(X)):
        f_i, singular = _drop_one_solve(Z, Y, c, M, ridge, i)
        if np.isnan(_loo(model)[i]).any():
            assert singular
            undefined += 1
        else:
            np.testing.assert_allclose(_loo(model)[i], f_i, atol=1e-8)
    assert undefined < len(X) // 4


@pytest.mark.parametrize("eta, branch", [(1.0, "cholesky"), (0.1, "eigh")])
def test_bordered_drlsc_loo_deletes_the_row_and_column(eta, branch):
    """``formulation="bordered"``: the output at sample i of the bordered system without
    row and column i (Cholesky + Schur complement, or eigh for an indefinite Omega + I)."""
    X, y = make_classification(40, n_features=4, n_redundant=0, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        model = DRLSC(eta=eta, n_neighbors=3, formulation="bordered").fit(X, y)
    assert model.solver_info_["factorization"] == "pinvh+" + branch + (
        "+schur" if branch == "cholesky" else ""
    )
    M = model.penalty_matrix(X, y).toarray()
    S = X.T @ M @ X
    Omega = X @ np.linalg.pinv(S, hermitian=True) @ X.T
    Y = _pm(y, model.classes_)[:, 0]
    n = len(X)
    for i in range(n):
        keep = np.delete(np.arange(n), i)
        system = np.zeros((n, n))
        system[0, 1:] = system[1:, 0] = 1.0
        system[1:, 1:] = Omega[np.ix_(keep, keep)] + np.eye(n - 1)
        x = np.linalg.solve(system, np.r_[0.0, Y[keep]])
        f_i = Omega[i, keep] @ x[1:] + x[0]
        np.testing.assert_allclose(model.calibrator_.decision_values_[i], f_i, atol=1e-8)


def test_large_supervised_fits_calibrate_on_a_stratified_subsample():
    X, y = make_classification(700, n_features=6, weights=[0.8], random_state=0)
    n, gamma_A = len(X), 1e-1
    model = RLSC(gamma=0.05, gamma_A=gamma_A).fit(X, y)
    rows = model.calibrator_.sample_indices_
    assert len(rows) <= LOO_MAX_SAMPLES < n
    assert np.all(np.diff(rows) > 0)
    share = np.mean(y[rows] == 1)
    assert abs(share - np.mean(y == 1)) < 0.01
    for k in (0, 100, len(rows) - 1):
        i = rows[k]
        refit = RLSC(gamma=0.05, gamma_A=gamma_A * n / (n - 1))
        refit.fit(np.delete(X, i, 0), np.delete(y, i))
        np.testing.assert_allclose(
            model.calibrator_.decision_values_[k],
            refit.decision_function(X[i : i + 1])[0],
            atol=1e-8,
        )


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_square_loss_leverages_are_the_inverse_quadratic_forms(fit_intercept):
    """``h_i = c_i a_i^T H^{-1} a_i`` against an explicit inverse of the normal equations."""
    rng = np.random.default_rng(0)
    Z, Y = rng.normal(size=(30, 6)), rng.normal(size=(30, 2))
    c = np.where(rng.random(30) < 0.5, 1 / 15, 0.0)
    B = rng.normal(size=(30, 30))
    M = 1e-2 * B @ B.T
    rows = np.array([0, 3, 7, 29])
    sol = solve_penalized_least_squares(
        Z, Y, c, M, ridge=0.1, fit_intercept=fit_intercept, leverage_rows=rows
    )
    A = np.hstack([Z, np.ones((30, 1))]) if fit_intercept else Z
    H = A.T @ (np.diag(c) + M) @ A + 0.1 * np.diag([1.0] * 6 + [0.0] * fit_intercept)
    expected = c[rows] * np.einsum("ij,jk,ik->i", A[rows], np.linalg.inv(H), A[rows])
    np.testing.assert_allclose(sol.leverages, expected, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("shift", [1.0, -1.5])  # Cholesky + Schur; eigh of the bordered matrix
def test_bordered_leverages_are_the_inverse_diagonal(shift):
    from structreg.solvers import solve_bordered

    rng = np.random.default_rng(0)
    V = rng.normal(size=(30, 30))
    Omega = V @ V.T / 30 + shift * np.eye(30)
    Y = rng.normal(size=(30, 1))
    C = np.zeros((31, 31))
    C[0, 1:] = C[1:, 0] = 1.0
    C[1:, 1:] = Omega + 0.5 * np.eye(30)
    expected = 1.0 - 0.5 * np.diag(np.linalg.inv(C))[1:]
    every = solve_bordered(Omega, Y, 0.5, leverage_rows=np.arange(30))  # from R^{-1}
    some = solve_bordered(Omega, Y, 0.5, leverage_rows=np.array([2, 9, 20]))  # solves
    assert every.factorization == ("cholesky+schur" if shift > 0 else "eigh")
    np.testing.assert_allclose(every.leverages, expected, rtol=1e-10)
    np.testing.assert_allclose(some.leverages, expected[[2, 9, 20]], rtol=1e-10)


# -- the temperature ------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 4])
def test_temperature_minimises_the_smoothed_log_loss(n_classes):
    rng = np.random.default_rng(0)
    codes = rng.integers(n_classes, size=80)
    F = rng.normal(size=(80, n_classes)) + 1.5 * np.eye(n_classes)[codes]
    F = F[:, 1] - F[:, 0] if n_classes == 2 else F
    cal = TemperatureScaling("test").fit(F, codes, n_classes, np.arange(80))
    L = np.column_stack([np.zeros(80), F]) if n_classes == 2 else F
    counts = np.bincount(codes)[codes]
    T = np.tile((1 / (counts + 2) / (n_classes - 1))[:, None], n_classes)
    T[np.arange(80), codes] = (counts + 1) / (counts + 2)

    def loss(a):
        return -np.mean(np.sum(T * log_softmax(a * L, axis=1), axis=1))

    best = minimize_scalar(loss, bounds=(1e-6, 50), method="bounded", options={"xatol": 1e-10})
    assert cal.scale_ == pytest.approx(best.x, rel=1e-6)
    np.testing.assert_allclose(cal.predict_proba(F), softmax(cal.scale_ * L, axis=1))


def test_outputs_that_reverse_the_labels_give_nearly_uniform_probabilities():
    F = np.r_[-np.ones(10), np.ones(10)]
    codes = np.r_[np.ones(10, int), np.zeros(10, int)]  # every output on the wrong side
    cal = TemperatureScaling("test").fit(F, codes, 2, np.arange(20))
    P = cal.predict_proba(F)
    assert 0 < cal.scale_ < 1e-6
    np.testing.assert_allclose(P, 0.5, atol=1e-6)
    np.testing.assert_array_equal(P.argmax(axis=1), (F > 0).astype(int))  # still predict


# -- the probabilities ----------------------------------------------------------------------

SQUARE = [
    RLSC(),
    LSSVM(),
    GRBFN(random_state=0),
    DRLSC(),
    DRLSC(kernel="rbf"),
    DRLSC(formulation="bordered"),
    DRGV(),
    DiscriminativeRLS(gamma_D=1e-3),
]
SEMI = [LapRLSC(), SparseRLSC(), SSDRWang(), SSDRWu(), DALapRLSC(random_state=0)]
HINGE = [
    LapSVM(probability=True),
    LapSVM(probability=True, solver="primal"),
    SRSVM(probability=True),
    SRSVM(probability=True, kernel="rbf", multi_class="ovo"),
    StructuralClassifier(loss="hinge", probability=True),
]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("model", SQUARE + SEMI + HINGE, ids=repr)
def test_probabilities_sum_to_one_and_agree_with_predict(model, n_classes):
    X, y = make_blobs(150, centers=n_classes, cluster_std=2.5, random_state=0)
    labels = np.array(["north", "east", "south"])[:n_classes][y]  # classes_ not in this order
    if model._semi_supervised:
        labels = labels.astype(object)
        labels[_semi(y, 10) == -1] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        model = clone(model).fit(X, labels)
    Xt = np.random.default_rng(1).normal(size=(60, 2)) * 6
    P = model.predict_proba(Xt)
    assert P.shape == (60, n_classes)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[P.argmax(axis=1)], model.predict(Xt))
    np.testing.assert_allclose(np.exp(model.predict_log_proba(Xt)), P, atol=1e-12)
    labeled = np.flatnonzero(np.array([v is not None for v in labels]))
    assert set(model.calibrator_.sample_indices_) <= set(labeled)  # unlabeled never enter


def test_calibration_improves_the_log_loss_of_the_raw_outputs():
    X, y = make_classification(600, n_features=10, flip_y=0.1, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    for model in (RLSC(), LSSVM(), SRSVM(probability=True)):
        model.fit(X_train, y_train)
        f = model.decision_function(X_test)
        raw = softmax(np.column_stack([np.zeros_like(f), f]), axis=1)
        assert log_loss(y_test, model.predict_proba(X_test)) < log_loss(y_test, raw)


def test_precomputed_kernel_gives_the_same_probabilities():
    X, y = make_moons(80, noise=0.2, random_state=0)
    Xt = np.random.default_rng(0).normal(size=(20, 2))
    rbf = RLSC(gamma=1.0).fit(X, y)
    pre = RLSC(kernel="precomputed").fit(kernel_matrix(X, kernel="rbf", gamma=1.0), y)
    np.testing.assert_allclose(
        pre.predict_proba(kernel_matrix(Xt, X, kernel="rbf", gamma=1.0)),
        rbf.predict_proba(Xt),
        atol=1e-8,
    )


# -- the hinge loss -------------------------------------------------------------------------


def test_hinge_models_need_probability_true():
    for model in (LapSVM(), SRSVM(), StructuralClassifier(loss="hinge")):
        assert not hasattr(model, "predict_proba")
        X, y = make_blobs(40, centers=2, random_state=0)
        with pytest.raises(AttributeError) as info:
            model.fit(X, y).predict_proba(X)
        assert "probability=False" in str(info.value.__cause__)
        assert hasattr(clone(model).set_params(probability=True), "predict_proba")


@pytest.mark.parametrize("semi", [True, False])
def test_hinge_calibration_uses_five_fold_out_of_fold_outputs(semi):
    """Each labeled sample's output comes from a fit whose data had it unlabeled (LapSVM:
    the graph unchanged) or removed (SRSVM)."""
    X, y = make_moons(120, noise=0.2, random_state=0)
    model, y_fit = (LapSVM(gamma=1.0), _semi(y, 15)) if semi else (SRSVM(kernel="rbf"), y)
    fitted = clone(model).set_params(probability=True).fit(X, y_fit)
    rows = np.flatnonzero(y_fit != -1)
    expected = np.empty(len(rows))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    for _, test in folds.split(rows, y_fit[rows]):
        held = rows[test]
        if semi:
            y_held = y_fit.copy()
            y_held[held] = -1
            expected[test] = clone(model).fit(X, y_held).decision_function(X[held])
        else:
            keep = np.setdiff1d(np.arange(len(X)), held)
            expected[test] = clone(model).fit(X[keep], y[keep]).decision_function(X[held])
    np.testing.assert_allclose(fitted.calibrator_.decision_values_, expected, atol=1e-8)
    assert fitted.calibrator_.method_ == "5-fold"


def test_hinge_calibration_needs_two_labels_per_class():
    X, y = make_moons(60, noise=0.1, random_state=0)
    with pytest.raises(ValueError, match="at least 2 labeled samples per class"):
        LapSVM(probability=True).fit(X, _semi(y, 1))


def test_calibrated_classifier_cv_on_srsvm():
    X, y = make_classification(200, n_features=6, random_state=0)
    calibrated = CalibratedClassifierCV(SRSVM(), cv=3).fit(X, y)
    P = calibrated.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert calibrated.score(X, y) > 0.8


# -- where there are none -------------------------------------------------------------------


def test_no_probabilities_without_a_factorisation():
    X, y = make_blobs(60, centers=2, random_state=0)
    assert not hasattr(RLSC(solver="cg"), "predict_proba")
    with pytest.raises(AttributeError) as info:
        RLSC(solver="cg").fit(X, y).predict_proba(X)
    assert "solver='dense' or 'nystroem'" in str(info.value.__cause__)
    Xi, yi = load_iris(return_X_y=True)
    ovo = LSSVM(multi_class="ovo").fit(Xi, yi)
    assert not hasattr(ovo, "predict_proba")
    with pytest.raises(AttributeError) as info:
        ovo.predict_proba(Xi)
    assert "multi_class='ovo'" in str(info.value.__cause__)


def test_fit_path_models_say_to_refit_unless_fitted_one_by_one():
    X, y = make_moons(80, noise=0.1, random_state=0)
    y_semi = _semi(y, 6)
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1.0]}
    for fitted in fit_path(LapRLSC(gamma=2.0), X, y_semi, grid):  # one shared factorisation
        with pytest.raises(AttributeError) as info:
            fitted.predict_proba(X)
        assert "refit it with fit(X, y)" in str(info.value.__cause__)
    # hinge points sharing a deformed kernel refit only libsvm: no calibration either (no
    # point of a grid runs calibration's five extra fits); fit gives it
    lapsvm = LapSVM(gamma=2.0, probability=True)
    points = [{"gamma_A": 1e-2, "gamma_I": 1.0}, {"gamma_A": 1e-1, "gamma_I": 10.0}]
    first, shared = fit_path(lapsvm, X, y_semi, points)
    refit = clone(lapsvm).set_params(**points[0]).fit(X, y_semi)
    np.testing.assert_allclose(first.decision_function(X), refit.decision_function(X))
    assert refit.predict_proba(X).shape == (80, 2)
    for fitted in (first, shared):
        with pytest.raises(AttributeError) as info:
            fitted.predict_proba(X)
        assert "refit it with fit(X, y)" in str(info.value.__cause__)


def test_search_estimators_delegate_to_the_refitted_model():
    X, y = make_moons(90, noise=0.1, random_state=0)
    y_semi = _semi(y, 8)
    search = LapRLSCCV(LapRLSC(gamma=2.0), {"gamma_A": [1e-3, 1e-1]}, cv=2).fit(X, y_semi)
    np.testing.assert_allclose(
        search.predict_proba(X), search.best_estimator_.predict_proba(X), atol=0
    )
    np.testing.assert_allclose(search.predict_log_proba(X), np.log(search.predict_proba(X)))
    assert not hasattr(StructuralClassifierCV(LapSVM(), {"gamma_A": [1e-2]}), "predict_proba")
    # the grid fits inside the search have no probabilities: a scorer that needs them is refused
    with pytest.raises(ValueError, match="needs predict_proba"):
        LapRLSCCV(LapRLSC(), {"gamma_A": [1e-3]}, cv=2, scoring="neg_log_loss").fit(X, y_semi)
    scored = LapRLSCCV(LapRLSC(gamma=2.0), {"gamma_A": [1e-3]}, cv=2, scoring="roc_auc")
    assert scored.fit(X, y_semi).best_score_ > 0.8


def test_search_over_hinge_models_calibrates_the_refit_only(monkeypatch):
    from structreg.models import _proba

    calls = []
    original = _proba.cross_fitted_decisions
    monkeypatch.setattr(
        _proba, "cross_fitted_decisions", lambda *a: calls.append(1) or original(*a)
    )
    X, y = make_moons(90, noise=0.1, random_state=0)
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1.0]}
    search = StructuralClassifierCV(LapSVM(gamma=2.0, probability=True), grid, cv=3)
    search.fit(X, _semi(y, 10))
    assert len(calls) == 1  # the folds score decision values
    np.testing.assert_allclose(search.predict_proba(X), search.best_estimator_.predict_proba(X))


# -- scikit-learn's consumers ---------------------------------------------------------------


def test_self_training_with_laprlsc():
    """SelfTrainingClassifier fits its model on the labeled (and pseudo-labeled) samples only,
    so LapRLSC inside it sees no graph beyond them.  With 10 labels the leave-one-out
    calibration is cautious (largest probability ~0.63 on two moons), below the wrapper's
    default threshold of 0.75: it then runs and adds nothing; taking the 20 most confident
    points per round instead, self-training beats LapRLSC on the labeled points alone
    (measured over 10 draws of 5 labels per class: 93.6 % against 83.8 %)."""
    ours, alone = [], []
    for seed in range(10):
        X, y = make_moons(400, noise=0.08, random_state=seed)
        y_semi = _semi(y, 5, seed=seed)
        labeled = y_semi != -1
        default = SelfTrainingClassifier(LapRLSC()).fit(X, y_semi)
        assert default.score(X, y) > 0.7
        self_training = SelfTrainingClassifier(LapRLSC(), criterion="k_best", k_best=20)
        self_training.fit(X, y_semi)
        assert self_training.labeled_iter_.max() >= 1  # pseudo-labels were added
        ours.append(self_training.score(X, y))
        alone.append(LapRLSC().fit(X[labeled], y[labeled]).score(X, y))
    assert np.mean(ours) >= np.mean(alone) + 0.03


def test_roc_auc_scoring_and_soft_voting():
    X, y = make_classification(200, n_features=8, random_state=0)
    for model in (RLSC(), LSSVM(), SRSVM(probability=True)):
        assert cross_val_score(model, X, y, cv=3, scoring="roc_auc").mean() > 0.85
        assert cross_val_score(model, X, y, cv=3, scoring="neg_log_loss").mean() > -0.6
    voting = VotingClassifier(
        [("rlsc", RLSC()), ("drlsc", DRLSC()), ("srsvm", SRSVM(probability=True))], voting="soft"
    ).fit(X, y)
    P = voting.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert voting.score(X, y) > 0.85
