"""fit_path and the cross-validated estimators against plain fits and GridSearchCV."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold
from sklearn.preprocessing import StandardScaler

from structreg import (
    DRGV,
    DRLSC,
    GRBFN,
    RLSC,
    SRSVM,
    DALapRLSC,
    DiscriminativeRLS,
    LapRLSC,
    LapSVM,
    SparseRLSC,
    SSDRWu,
    StructuralClassifier,
)
from structreg.exceptions import GroupFallbackWarning, UnlabeledScoringWarning
from structreg.model_selection import SemiSupervisedKFold
from structreg.models import (
    DRLSCCV,
    DiscriminativeRLSCV,
    LapRLSCCV,
    StructuralClassifierCV,
    decision_path,
    decision_values,
    fit_path,
)
from structreg.solvers import NonConvexObjectiveWarning
from structreg.structure import ClassScatterPenalty, LaplacianPenalty


def _semi(n=120, labeled=24, seed=0):
    X, y = make_moons(n, noise=0.12, random_state=seed)
    y_semi = np.full_like(y, -1)
    rng = np.random.default_rng(seed)
    idx = np.r_[
        rng.choice(np.flatnonzero(y == 0), labeled // 2, replace=False),
        rng.choice(np.flatnonzero(y == 1), labeled // 2, replace=False),
    ]
    y_semi[idx] = y[idx]
    return X, y, y_semi


def _multi(n=90, seed=0):
    X, y = make_blobs(n, centers=3, n_features=4, cluster_std=2.5, random_state=seed)
    return StandardScaler().fit_transform(X), y


CASES = {
    "LapRLSC": (
        lambda: LapRLSC(),
        {
            "gamma": [0.5, 2.0],
            "n_neighbors": [5, 8],
            "gamma_A": [1e-5, 1e-3, 1e-1],
            "gamma_I": [0.0, 1.0, 100.0],
        },
        "semi",
    ),
    "LapRLSC-nystroem-intercept": (
        lambda: LapRLSC(solver="nystroem", n_components=30, random_state=0, fit_intercept=True),
        {"gamma_A": [1e-4, 1e-2], "gamma_I": [0.0, 10.0]},
        "semi",
    ),
    "RLSC-linear": (
        lambda: RLSC(kernel="linear", fit_intercept=True),
        {"gamma_A": [1e-6, 1e-3, 1.0, 100.0]},
        "multi",
    ),
    "GDR": (
        lambda: DiscriminativeRLS(margin="global"),
        {"gamma_A": [1e-3, 1e-1], "gamma_D": [0.0, 1e-3, 1.0]},
        "multi",
    ),
    "LDR-linear": (
        lambda: DiscriminativeRLS(margin="local", kernel="linear", n_neighbors=3),
        {"gamma_A": [1e-3, 1e-1], "gamma_D": [0.0, 1e-2, 10.0]},
        "multi",
    ),
    "DRLSC-rbf": (
        lambda: DRLSC(kernel="rbf", n_neighbors=4),
        {"eta": [0.0, 0.3, 0.9, 1.0], "gamma": [0.1, 1.0]},
        "multi",
    ),
    "DRGV-linear": (lambda: DRGV(), {"eta": [0.2, 0.6, 1.0]}, "multi"),
    "DALapRLSC": (
        lambda: DALapRLSC(random_state=0),
        {"gamma_A": [1e-3, 1e-1], "gamma_D": [0.0, 1.0, 50.0]},
        "semi",
    ),
    "SparseRLSC": (
        lambda: SparseRLSC(l1_mode="lasso", n_candidates=8, gamma=1.0),
        {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 10.0, 1e2]},
        "semi",
    ),
    "SSDRWu": (
        lambda: SSDRWu(gamma=2.0),
        {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 10.0], "eta": [0.3, 0.9]},
        "semi",
    ),
    "GRBFN": (lambda: GRBFN(n_centers=6, random_state=0), {"gamma_A": [1e-4, 1e-1]}, "multi"),
    "StructuralClassifier": (
        lambda: StructuralClassifier(
            penalties=[(1e-3, LaplacianPenalty()), (1e-2, ClassScatterPenalty("within"))],
            fit_intercept=True,
        ),
        {"gamma_A": [1e-4, 1e-2, 1.0]},
        "semi",
    ),
    "LapSVM-hinge-falls-back": (
        lambda: LapSVM(gamma=2.0),
        {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 10.0]},
        "semi",
    ),
}


def _data(kind):
    if kind == "semi":
        X, _, y = _semi()
        return X, y
    return _multi()


@pytest.mark.parametrize("name", list(CASES))
def test_fit_path_equals_one_fit_per_grid_point(name):
    make, grid, kind = CASES[name]
    X, y = _data(kind)
    X_new = X[::3] + 0.05
    with _quiet():
        fits = fit_path(make(), X, y, grid)

    points = list(ParameterGrid(grid))
    assert len(fits) == len(points)
    for point, fitted in zip(points, fits, strict=True):
        with _quiet():
            direct = make().set_params(**point).fit(X, y)
        assert repr(fitted.get_params()) == repr(direct.get_params())
        F, G = fitted.decision_function(X_new), direct.decision_function(X_new)
        scale = max(1.0, float(np.abs(G).max()))
        np.testing.assert_allclose(F, G, rtol=1e-7, atol=1e-7 * scale, err_msg=str(point))
        np.testing.assert_array_equal(fitted.predict(X_new), direct.predict(X_new))
        if hasattr(direct, "transduction_"):
            np.testing.assert_array_equal(fitted.transduction_, direct.transduction_)
        info, ref = fitted.solver_info_, direct.solver_info_
        assert info.get("convex") == ref.get("convex"), point


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_fit_path_shares_the_factorisation_across_ridges():
    X, y_true, y = _semi()
    many = list(np.logspace(-6, 1, 30))
    # few labels: one eigendecomposition of the graph term serves the whole grid
    fits = fit_path(LapRLSC(gamma=1.0), X, y, {"gamma_A": many, "gamma_I": [1.0]})
    assert {f.solver_info_["factorization"] for f in fits} == {"spectral-path"}
    grid2 = {"gamma_A": many[::3], "gamma_I": [0.0, 0.1, 1.0]}
    fits = fit_path(LapRLSC(gamma=1.0), X, y, grid2)
    assert {f.solver_info_["factorization"] for f in fits} == {"spectral-path"}
    # every point labeled: one eigendecomposition per graph weight serves its ridges
    fits = fit_path(LapRLSC(gamma=1.0), X, y_true, {"gamma_A": many, "gamma_I": [1.0]})
    assert {f.solver_info_["factorization"] for f in fits} == {"eigh-path"}
    few = fit_path(LapRLSC(gamma=1.0), X, y, {"gamma_A": many[:3], "gamma_I": [1.0]})
    assert {f.solver_info_["factorization"] for f in few} == {"cholesky"}
    (single,) = fit_path(LapRLSC(gamma=1.0), X, y, {"gamma_A": [1e-3]})
    assert single.solver_info_["factorization"] == "cholesky"


def test_decision_path_shape_and_values():
    X, y = _multi()
    grid = [{"gamma_A": 1e-3}, {"gamma_A": 1.0}]
    F = decision_path(RLSC(), X, y, grid, X[:7])
    assert F.shape == (2, 7, 3)
    np.testing.assert_allclose(F[1], RLSC(gamma_A=1.0).fit(X, y).decision_function(X[:7]))


@pytest.mark.parametrize(
    "estimator, grid",
    [
        (DRLSC(kernel="rbf", gamma=0.5), {"eta": [0.0, 0.5, 1.0], "n_neighbors": [3, 5]}),
        (LapRLSC(gamma=0.5, n_neighbors=4), {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 1.0]}),
        (DRLSC(formulation="bordered"), {"eta": [0.5, 1.0]}),  # no shared path: fitted
    ],
)
def test_decision_path_equals_the_fitted_estimators(estimator, grid):
    X, y = _multi()
    y_fit = y.copy()
    if isinstance(estimator, LapRLSC):
        y_fit[::3] = -1  # semi-supervised
    cache: dict = {}
    F = decision_path(estimator, X, y_fit, grid, X[:9], cache=cache)
    again = decision_path(estimator, X, y_fit, grid, X[:9], cache=cache)  # from the cache
    with _quiet():
        for i, point in enumerate(ParameterGrid(grid)):
            one = clone(estimator).set_params(**point).fit(X, y_fit)
            np.testing.assert_allclose(F[i], one.decision_function(X[:9]), atol=1e-8)
    np.testing.assert_array_equal(F, again)


def test_fit_path_validates_each_point():
    X, y = _multi()
    with pytest.raises(ValueError, match="gamma_A"):
        fit_path(RLSC(), X, y, {"gamma_A": [1e-3, -1.0]})


def test_fit_path_on_sparse_input_serves_the_groups_that_accept_it():
    # sparse X is a linear DiscriminativeRLS's (the groups of a call share the validated data
    # only when they accept the same input), and still refused by an RBF one in the grid
    import scipy.sparse as sp

    X, y = _multi()
    Xs = sp.csr_matrix(X)
    grid = [{"kernel": ["linear"], "gamma_A": [0.1, 1.0]}, {"kernel": ["rbf"], "gamma_A": [1.0]}]
    with pytest.warns(GroupFallbackWarning, match="RefusedInputType: Sparse data"):
        out = fit_path(DiscriminativeRLS(gamma_D=1e-3), Xs, y, grid, errors="return", warn=False)
    assert all(isinstance(f, DiscriminativeRLS) for f in out[:2])
    assert isinstance(out[2], TypeError) and "Sparse data" in str(out[2])
    # the later groups of a call take the first group's input attributes
    fits = fit_path(DRLSC(n_neighbors=3), X, y, {"n_neighbors": [2, 3], "eta": [1.0]})
    assert [f.n_features_in_ for f in fits] == [X.shape[1]] * 2


# ------------------------------------------------------------------------------------------
# The CV estimators against GridSearchCV on the same folds
# ------------------------------------------------------------------------------------------
def _compare_with_grid_search(search, reference):
    res, ref = search.cv_results_, reference.cv_results_
    assert [dict(p) for p in res["params"]] == [dict(p) for p in ref["params"]]
    for key in ["mean_test_score", "std_test_score"] + [
        f"split{i}_test_score" for i in range(reference.n_splits_)
    ]:
        np.testing.assert_allclose(res[key], ref[key], rtol=0, atol=1e-8, err_msg=key)
    np.testing.assert_array_equal(res["rank_test_score"], ref["rank_test_score"])
    assert search.best_params_ == reference.best_params_
    assert search.best_index_ == reference.best_index_
    assert search.best_score_ == pytest.approx(reference.best_score_, abs=1e-8)
    assert search.n_splits_ == reference.n_splits_


def test_laprlsccv_equals_grid_search_cv():
    X, y_true, y = _semi(n=150, labeled=30)
    grid = {
        "gamma": [0.5, 2.0],
        "gamma_A": list(np.logspace(-6, 0, 7)),
        "gamma_I": [0.0, 0.1, 10.0, 1000.0],
    }
    cv = SemiSupervisedKFold(3, random_state=0)
    search = LapRLSCCV(param_grid=grid, cv=cv).fit(X, y)
    reference = GridSearchCV(LapRLSC(), grid, cv=cv).fit(X, y)
    _compare_with_grid_search(search, reference)
    np.testing.assert_allclose(
        search.decision_function(X), reference.best_estimator_.decision_function(X)
    )
    assert search.score(X, y_true) == reference.score(X, y_true)
    assert list(search.classes_) == [0, 1]


def test_drlsccv_equals_grid_search_cv_with_a_plain_splitter():
    X, y = make_classification(120, n_features=6, n_informative=4, random_state=1)
    X = StandardScaler().fit_transform(X)
    grid = {"eta": [0.0, 0.25, 0.5, 0.75, 1.0], "n_neighbors": [3, 6]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with pytest.warns(NonConvexObjectiveWarning):  # GridSearchCV's own fits warn
        reference = GridSearchCV(DRLSC(), grid, cv=cv).fit(X, y)
    search = DRLSCCV(param_grid=grid, cv=cv).fit(X, y)
    _compare_with_grid_search(search, reference)
    assert search.cv_results_["nonconvex_folds"].max() > 0  # eta < 1 is usually a saddle
    assert search.cv_results_["nonconvex_folds"][grid["eta"].index(1.0) * 2] == 0


def test_discriminative_cv_with_a_decision_based_scorer():
    X, y = make_classification(100, n_features=5, random_state=3)
    grid = {"gamma_A": [1e-3, 1e-1, 10.0], "gamma_D": [0.0, 1e-3, 1e-2]}
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    search = DiscriminativeRLSCV(param_grid=grid, cv=cv, scoring="roc_auc").fit(X, y)
    with _quiet():
        reference = GridSearchCV(DiscriminativeRLS(), grid, cv=cv, scoring="roc_auc").fit(X, y)
    _compare_with_grid_search(search, reference)


def test_default_grids_and_parallel_folds():
    X, _, y = _semi(n=100, labeled=20)
    serial = LapRLSCCV(cv=3).fit(X, y)
    assert len(serial.cv_results_["params"]) == 64
    parallel = LapRLSCCV(cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(
        serial.cv_results_["mean_test_score"], parallel.cv_results_["mean_test_score"]
    )
    assert DRLSCCV()._resolved()[1][-1] == {"eta": 1.0}
    assert len(DiscriminativeRLSCV()._resolved()[1]) == 30


def test_cv_estimators_report_bad_configurations():
    X, _, y = _semi()
    with pytest.raises(ValueError, match="needs an estimator"):
        StructuralClassifierCV(param_grid={"gamma_A": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="needs a param_grid"):
        StructuralClassifierCV(LapRLSC()).fit(X, y)
    with pytest.raises(ValueError, match=r"names \['gamma_Q'\], which LapRLSC does not have"):
        LapRLSCCV(param_grid={"gamma_Q": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="no points"):
        LapRLSCCV(param_grid=[]).fit(X, y)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LapRLSCCV().predict(X)


def test_fit_path_cache_builds_each_structure_once(monkeypatch):
    import structreg.models.path as path_module

    built = []
    original = path_module._Group.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(path_module._Group, "__init__", counting)
    X, _, y = _semi()
    cache: dict = {}
    first = fit_path(LapRLSC(), X, y, {"gamma_A": [1e-3], "gamma_I": [1.0]}, cache=cache)
    again = fit_path(LapRLSC(), X, y, {"gamma_A": [1e-1], "gamma_I": [0.0, 1.0]}, cache=cache)
    assert len(built) == 1
    other = fit_path(LapRLSC(), X, y, {"gamma": [0.5], "gamma_A": [1e-3]}, cache=cache)
    assert len(built) == 2  # another kernel width: another structure
    direct = LapRLSC(gamma_A=1e-1, gamma_I=1.0).fit(X, y)
    np.testing.assert_allclose(again[1].decision_function(X), direct.decision_function(X))
    assert first[0].gamma_A == 1e-3 and other[0].gamma == 0.5


def test_deformed_gram_is_the_deformed_kernel_and_what_the_svm_scores():
    from structreg import SRSVM
    from structreg.kernels import kernel_matrix

    X, _, y = _semi(n=60, labeled=20)
    X_new = X[:7] + 0.1
    lap = LapSVM(gamma=1.5, gamma_A=1e-2, gamma_I=5.0, solver="dense").fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=1.5)
    Kx = kernel_matrix(X_new, X, kernel="rbf", gamma=1.5)
    M = lap.penalty_matrix(X, y).toarray()
    lab = np.flatnonzero(y != -1)
    inner = np.linalg.solve(1e-2 * np.eye(60) + M @ K, M)
    expected = Kx[:, lab] - Kx @ inner @ K[:, lab]
    np.testing.assert_allclose(lap.deformed_gram(X_new), expected, atol=1e-8)
    G = lap.deformed_gram()
    np.testing.assert_allclose(G, K[np.ix_(lab, lab)] - K[lab] @ inner @ K[:, lab], atol=1e-8)
    np.testing.assert_allclose(
        lap.decision_function(X_new), lap.svm_.decision_function(lap.deformed_gram(X_new))
    )
    X2, y2 = _multi(60)
    for kernel in ("rbf", "linear"):
        sr = SRSVM(kernel=kernel, lam=1.0).fit(X2, y2)
        G = sr.deformed_gram()
        assert G.shape == (60, 60) and np.allclose(G, G.T)
        np.testing.assert_allclose(
            sr.decision_function(X2[:5]), sr.svm_.decision_function(sr.deformed_gram(X2[:5]))
        )


def test_fit_path_cache_keys_label_work_by_the_labels():
    from structreg.models import drop_label_work

    X, _, y = _semi()
    y2 = y.copy()
    y2[np.flatnonzero(y != -1)[:3]] = -1  # other labels, same X
    cache: dict = {}
    est = LapRLSC(gamma_A=1e-3)
    a = fit_path(est, X, y, [{}], cache=cache)[0]
    b = fit_path(est, X, y2, [{}], cache=cache)[0]  # must not reuse y's system
    np.testing.assert_allclose(b.decision_function(X), clone(est).fit(X, y2).decision_function(X))
    assert not np.allclose(a.decision_function(X), b.decision_function(X))
    kinds = sorted(k[0] for k in cache)
    # one kNN graph, one kernel width (gamma="graph") and one design entry (its null-space
    # complement) for both label sets
    assert kinds == ["design", "feature_map", "group", "group", "neighbor_scale", "penalty"]
    drop_label_work(cache)  # the design of a cached feature map is not label work
    assert sorted(k[0] for k in cache) == ["design", "feature_map", "neighbor_scale", "penalty"]
    cw = LapRLSC(graph="class-wise", n_neighbors=3)  # a graph that reads the labels
    fit_path(cw, X, y, [{}], cache=cache)
    fit_path(cw, X, y2, [{}], cache=cache)
    assert sum(k[0] == "penalty" and k[2] is not None for k in cache) == 2
    drop_label_work(cache)
    assert all(k[0] != "group" and (k[0] != "penalty" or k[2] is None) for k in cache)


def test_error_score_raise_and_a_custom_scorer_without_failures():
    X, y = _multi()
    grid = {"gamma_A": [1e-3, 1.0]}
    search = StructuralClassifierCV(RLSC(), grid, cv=3, error_score="raise").fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    with pytest.raises(ValueError, match="gamma_A"):
        StructuralClassifierCV(RLSC(), {"gamma_A": [-1.0]}, cv=3, error_score="raise").fit(X, y)


def test_fit_path_groups_with_a_bordered_formulation_fit_one_by_one():
    X, y = _multi()
    grid = {"formulation": ["primal", "bordered"], "eta": [0.5, 1.0]}
    with _quiet():
        fits = fit_path(DRLSC(n_neighbors=3), X, y, grid)
        for point, f in zip(list(ParameterGrid(grid)), fits, strict=True):
            direct = DRLSC(n_neighbors=3).set_params(**point).fit(X, y)
            np.testing.assert_allclose(
                f.decision_function(X), direct.decision_function(X), atol=1e-8
            )
            assert f.solver_info_["factorization"].startswith("pinvh") == (
                point["formulation"] == "bordered"
            )


def _same_as_plain_fits(estimator, X, y, grid, fits):
    for point, fitted in zip(ParameterGrid(grid), fits, strict=True):
        direct = clone(estimator).set_params(**point).fit(X, y)
        F, G = fitted.decision_function(X), direct.decision_function(X)
        np.testing.assert_allclose(F, G, rtol=1e-6, atol=1e-8 * np.abs(G).max(), err_msg=str(point))
        np.testing.assert_array_equal(fitted.predict(X), direct.predict(X))
        assert fitted.solver_info_["C"] == pytest.approx(direct.solver_info_["C"])
        np.testing.assert_array_equal(fitted.support_, direct.support_)
        if hasattr(direct, "transduction_"):
            np.testing.assert_array_equal(fitted.transduction_, direct.transduction_)


def test_fit_path_shares_the_deformed_kernel_of_hinge_models_across_C():
    X, y = make_blobs(90, centers=[[0, 0], [3, 0], [0, 3]], cluster_std=1.2, random_state=0)
    grid = {"lam": [0.0, 2.0], "C": [0.1, 1.0, 10.0]}
    fits = fit_path(SRSVM(kernel="rbf", gamma=0.5), X, y, grid)
    _same_as_plain_fits(SRSVM(kernel="rbf", gamma=0.5), X, y, grid, fits)
    # one deformed kernel per lam, libsvm per C
    assert len({id(f.deformed_kernel_) for f in fits}) == 2
    assert fits[0].deformed_kernel_ is fits[2].deformed_kernel_
    # LapSVM: the deformation depends on gamma_I / gamma_A only
    Xm, y_true, y_semi = _semi()
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [1e-2, 1e-1]}
    hinge = LapSVM(gamma=1.0, solver="dense")
    fits = fit_path(hinge, Xm, y_semi, grid)
    _same_as_plain_fits(hinge, Xm, y_semi, grid, fits)
    points = list(ParameterGrid(grid))
    a = points.index({"gamma_A": 1e-3, "gamma_I": 1e-2})
    b = points.index({"gamma_A": 1e-2, "gamma_I": 1e-1})
    c = points.index({"gamma_A": 1e-2, "gamma_I": 1e-2})
    assert fits[a].deformation_ is fits[b].deformation_
    assert fits[a].deformation_ is not fits[c].deformation_
    # an invalid weight fails that point only
    with pytest.warns(GroupFallbackWarning, match="2 grid point.*InvalidParameterError.*'C'"):
        out = fit_path(SRSVM(), X, y, {"C": [1.0, -1.0]}, errors="return")
    assert hasattr(out[0], "svm_") and isinstance(out[1], Exception)


def test_decision_values_deform_the_test_points_once_per_shared_deformation(monkeypatch):
    """Hinge fits that share a deformed kernel share its section at the test points too
    (libsvm alone runs per C); the values equal each fit's decision_function."""
    from structreg.models._losses import HingeLoss

    X, y = make_blobs(90, centers=[[0, 0], [3, 0], [0, 3]], cluster_std=1.2, random_state=0)
    grid = {"lam": [0.0, 2.0], "C": [0.1, 1.0, 10.0]}
    fits = fit_path(SRSVM(kernel="rbf", gamma=0.5), X, y, grid)
    expected = [f.decision_function(X[::3]) for f in fits]
    calls = []
    original = HingeLoss.deformed_gram

    def counting(self, model, X=None):
        calls.append(X is not None)
        return original(self, model, X)

    monkeypatch.setattr(HingeLoss, "deformed_gram", counting)
    values = decision_values(fits, X[::3])
    assert sum(calls) == 2  # one per lam
    for value, want in zip(values, expected, strict=True):
        np.testing.assert_array_equal(value, want)


def test_fit_path_clusters_grbfn_centres_once_per_seed(monkeypatch):
    from structreg import GRBFN
    from structreg.clustering import FuzzyCMeans

    X, y = make_classification(80, n_features=4, random_state=5)
    calls = []
    fit = FuzzyCMeans.fit
    monkeypatch.setattr(FuzzyCMeans, "fit", lambda self, X, y=None: calls.append(1) or fit(self, X))
    grid = {"gamma": [0.1, 1.0], "gamma_A": [1e-3, 1e-1], "random_state": [0, 1]}
    fits = fit_path(GRBFN(n_centers=6), X, y, grid)
    assert len(calls) == 2  # one clustering per seed, shared by the widths and ridges
    for point, est in zip(ParameterGrid(grid), fits, strict=True):
        alone = GRBFN(n_centers=6, **point).fit(X, y)
        np.testing.assert_allclose(est.decision_function(X), alone.decision_function(X))
    calls.clear()
    fit_path(GRBFN(n_centers=6, random_state=None), X, y, {"gamma": [0.1, 1.0]})
    assert len(calls) == 2  # no seed: every structure group clusters afresh


def test_parameter_names_are_cached_per_class():
    from structreg import DRLSC, StructuralClassifier

    class Fewer(StructuralClassifier):
        def __init__(self, gamma_A=1e-3):
            super().__init__(gamma_A=gamma_A)

    assert StructuralClassifier._get_param_names() == sorted(StructuralClassifier().get_params())
    assert Fewer().get_params() == {"gamma_A": 1e-3}  # not the parent's cached names
    assert "penalties" in StructuralClassifier().get_params()
    assert (
        DRLSC._get_param_names() == sorted(DRLSC().get_params()) and "eta" in DRLSC().get_params()
    )
    assert clone(Fewer(gamma_A=3.0)).gamma_A == 3.0


def test_fit_path_searches_each_knn_graph_once_and_checks_each_group(knn_searches):
    from structreg.structure.graphs import SEARCH_AHEAD_MIN

    X, y = _multi()
    grid = {"gamma": [0.1, 1.0], "n_neighbors": [3, 5], "eta": [0.0, 0.6, 1.0]}
    with _quiet():
        fits = fit_path(DRLSC(kernel="rbf"), X, y, grid, warn=False)
    # DRLSC's within- and between-class graphs split one search, which serves both
    # neighbourhood sizes (looking ahead) and both widths
    assert knn_searches == [SEARCH_AHEAD_MIN]
    with _quiet():
        for point, fitted in zip(ParameterGrid(grid), fits, strict=True):
            one = DRLSC(kernel="rbf", **point).fit(X, y)
            np.testing.assert_allclose(
                fitted.decision_function(X), one.decision_function(X), atol=1e-8
            )
    # a later structure group's parameters are still checked (only the data once)
    bad = {"gamma": [0.1, -1.0], "eta": [1.0]}
    with pytest.raises(ValueError, match="gamma"):
        fit_path(DRLSC(kernel="rbf"), X, y, bad)
    with pytest.warns(GroupFallbackWarning, match="InvalidParameterError.*'gamma'"):
        out = fit_path(DRLSC(kernel="rbf"), X, y, bad, errors="return")
    assert isinstance(out[0], DRLSC) and isinstance(out[1], ValueError)


def test_a_failed_structure_group_warns_with_its_cause_and_a_bug_propagates(monkeypatch):
    """``errors="return"``: a group that fails for a meant reason (here a penalty matrix
    that cannot be built, a ValueError) is refitted point by point with a
    GroupFallbackWarning naming the cause; an unrelated exception (a TypeError, as a bug
    raises) is neither turned into a refit nor returned: it propagates."""
    from structreg.models import _base

    X, _, y_semi = _semi()
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1.0]}
    build = _base.StructuralEstimator._penalty_matrix

    def failing(exc):
        def matrix(penalty, points, y_codes, labeled, memo, graphs, labels):
            if memo is not None:  # the group's shared build; a plain fit builds as usual
                raise exc
            return build(penalty, points, y_codes, labeled, memo, graphs, labels)

        return staticmethod(matrix)

    monkeypatch.setattr(_base.StructuralEstimator, "_penalty_matrix", failing(ValueError("x")))
    with pytest.warns(GroupFallbackWarning, match=r"4 grid point\(s\) of LapRLSC .*ValueError: x"):
        out = fit_path(LapRLSC(gamma=2.0), X, y_semi, grid, errors="return")
    assert all(isinstance(f, LapRLSC) and hasattr(f, "coef_") for f in out)
    bug = TypeError("unsupported operand")
    monkeypatch.setattr(_base.StructuralEstimator, "_penalty_matrix", failing(bug))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GroupFallbackWarning)
        with pytest.raises(TypeError, match="unsupported operand"):
            fit_path(LapRLSC(gamma=2.0), X, y_semi, grid, errors="return")


def test_grid_points_without_a_weight_take_the_estimators_value():
    # [{"eta": [...]}, {}]: the second point has no eta, so the estimator's own (0.5) applies,
    # not the previous point's, in the fitted estimators, the decision values and the search
    X, y = _multi()
    grid = [{"eta": [0.1, 0.9]}, {}]
    base = DRLSC(kernel="rbf", n_neighbors=4, eta=0.5)
    with _quiet():
        F = decision_path(base, X, y, grid, X[:7])
        fits = fit_path(base, X, y, grid, warn=False)
        for i, point in enumerate([{"eta": 0.1}, {"eta": 0.9}, {}]):
            one = clone(base).set_params(**point).fit(X, y)
            np.testing.assert_allclose(F[i], one.decision_function(X[:7]), atol=1e-8)
            assert fits[i].eta == one.eta
        cv = StratifiedKFold(3, shuffle=True, random_state=0)
        reference = GridSearchCV(base, grid, cv=cv).fit(X, y)
        search = StructuralClassifierCV(base, grid, cv=cv).fit(X, y)
    _compare_with_grid_search(search, reference)


def test_fit_path_mixes_auto_and_numeric_graph_weights():
    """gamma_I="auto" scales the Laplacian by its volume (another penalty matrix than a
    numeric gamma_I's): grid points of both kinds, given or taken from the estimator, are
    grouped apart and each equals its own fit."""
    X, _, y = _semi()
    grid = [{"gamma_I": ["auto", 1.0, 100.0], "gamma_A": [1e-3, 1e-1]}, {"gamma_A": [1e-2]}]
    for base in (LapRLSC(gamma=2.0), LapRLSC(gamma=2.0, gamma_I=10.0), LapSVM(gamma=2.0)):
        with _quiet():
            fits = fit_path(base, X, y, grid)
            F = decision_path(base, X, y, grid, X[:9])
            for i, point in enumerate(ParameterGrid(grid)):
                one = clone(base).set_params(**point).fit(X, y)
                G = one.decision_function(X[:9])
                np.testing.assert_allclose(fits[i].decision_function(X[:9]), G, atol=1e-7)
                np.testing.assert_allclose(F[i], G, atol=1e-7)


# -- feature names, and -1 as a class -------------------------------------------------------


def _frames(values, columns):
    """A pandas DataFrame of the data, in a list (the tests loop over frame kinds)."""
    import pandas as pd

    return [pd.DataFrame(values, columns=columns)]


def _reordered(frame, columns):
    return frame[columns]


def _renamed(frame, columns):
    return type(frame)(np.asarray(frame), columns=columns)


def _searches():
    """Every CV / meta estimator of structreg's public API (structreg.__all__), each with a
    small grid."""
    import inspect

    from sklearn.base import MetaEstimatorMixin

    import structreg

    grids = {
        StructuralClassifierCV: lambda: StructuralClassifierCV(
            LapRLSC(gamma=2.0), {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 10.0]}, cv=3
        ),
        LapRLSCCV: lambda: LapRLSCCV(param_grid={"gamma_A": [1e-3, 1e-1]}, cv=3),
        DiscriminativeRLSCV: lambda: DiscriminativeRLSCV(param_grid={"gamma_D": [0.0, 1e-2]}, cv=3),
        DRLSCCV: lambda: DRLSCCV(param_grid={"eta": [0.3, 1.0]}, cv=3),
    }
    found = [
        cls
        for name in structreg.__all__
        if inspect.isclass(cls := getattr(structreg, name)) and issubclass(cls, MetaEstimatorMixin)
    ]
    assert set(found) == set(grids), "a new CV estimator: give it a small grid here"
    return [pytest.param(grids[cls], id=cls.__name__) for cls in found]


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
@pytest.mark.parametrize("make", _searches())
def test_cv_estimators_keep_and_check_feature_names(make):
    """Fitted on a data frame, a search keeps feature_names_in_ / n_features_in_ (as
    GridSearchCV), refits its model on the frame, answers without a warning on the same
    columns, and refuses reordered or renamed ones with scikit-learn's ValueError in every
    method (it answered wrongly on them, after a 'fitted without feature names' warning)."""
    X, y, y_semi = _semi(n=90, labeled=30)
    X = np.c_[X, np.random.default_rng(0).normal(size=(90, 2))]
    names = ["a", "b", "c", "d"]
    match = "The feature names should match those that were passed during fit"
    for frame in _frames(X, names):
        search = make()
        labels = y_semi if getattr(search._resolved()[0], "_semi_supervised", True) else y
        search.fit(frame, labels)
        assert search.n_features_in_ == 4
        assert list(search.feature_names_in_) == names
        assert list(search.best_estimator_.feature_names_in_) == names
        methods = [
            m
            for m in ("predict", "decision_function", "predict_proba", "predict_log_proba")
            if hasattr(search, m)
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same columns: no feature-name warning
            warnings.simplefilter("ignore", UnlabeledScoringWarning)  # score drops the -1s
            expected = {m: getattr(search, m)(frame) for m in methods}
            score = search.score(frame, labels)
        with pytest.warns(UserWarning, match="X does not have valid feature names"):
            for m in methods:  # scikit-learn's warning for an array after a frame
                # (a frame's values may be Fortran-ordered: the same numbers up to rounding)
                np.testing.assert_allclose(
                    expected[m], getattr(search, m)(X), rtol=1e-12, atol=1e-12
                )
            assert score == search.score(X, labels)
        for other in (
            _reordered(frame, ["d", "c", "b", "a"]),
            _renamed(frame, ["a", "b", "c", "e"]),
        ):
            for m in methods:
                with pytest.raises(ValueError, match=match):
                    getattr(search, m)(other)
            with pytest.raises(ValueError, match=match):
                search.score(other, labels)


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
def test_semi_supervised_score_checks_the_feature_names_of_the_labeled_rows():
    """score() of a semi-supervised model drops the unlabeled rows: it keeps X's container,
    so the names are still checked (they were lost with the rows, and predict warned)."""
    X, _, y_semi = _semi(n=60, labeled=20)
    for frame in _frames(X, ["u", "v"]):
        clf = LapRLSC(gamma=2.0).fit(frame, y_semi)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same columns: no feature-name warning
            warnings.simplefilter("ignore", UnlabeledScoringWarning)  # score drops the -1s
            score = clf.score(frame, y_semi)
        assert score == np.mean(clf.predict(frame)[y_semi != -1] == y_semi[y_semi != -1])
        with pytest.raises(ValueError, match="The feature names should match"):
            clf.score(_reordered(frame, ["v", "u"]), y_semi)


def test_laprlsccv_refuses_minus_one_as_a_class_before_any_fit(monkeypatch):
    """y in {-1, +1}, every point labeled: for a semi-supervised model -1 marks unlabeled
    points, so one class is left.  The search says so before fitting anything (it failed
    after 320 fits), with the plain model's message and what to do."""
    import structreg.models.cv as cv_module

    X, y, _ = _semi()
    y_pm = 2 * y - 1

    def no_fits(*args, **kwargs):
        raise AssertionError("a fold was fitted")

    monkeypatch.setattr(cv_module, "grid_outputs", no_fits)
    expected = (
        r"LapRLSCCV: LapRLSC needs labeled samples of at least 2 classes; got 60 labeled "
        r"sample\(s\) and 1 class\(es\); -1 marks unlabeled samples for LapRLSC \(60 of the "
        r"120 samples here, taken as unlabeled\): if -1 is a class, recode the labels"
    )
    with pytest.raises(ValueError, match=expected):
        LapRLSCCV().fit(X, y_pm)
    with pytest.raises(ValueError, match=r"StructuralClassifierCV: LapSVM needs .* 1 class"):
        StructuralClassifierCV(LapSVM(), {"gamma_A": [1e-2]}, cv=3).fit(X, y_pm)
    with pytest.raises(ValueError, match=r"LapRLSCCV: LapRLSC needs .* got 1 labeled sample"):
        LapRLSCCV().fit(X, np.where(np.arange(120) == 0, y, -1))  # one labeled point
    # the plain model: the same check, which names the mask a model's fit takes
    with pytest.raises(ValueError, match=r"-1 marks unlabeled samples .* pass the unlabeled mask"):
        LapRLSC().fit(X, y_pm)
    assert list(LapRLSC().fit(X, y_pm, unlabeled=np.zeros(120, bool)).classes_) == [-1, 1]
    # a supervised model's search keeps -1 as a class
    monkeypatch.undo()
    assert list(DRLSCCV(param_grid={"eta": [0.5]}, cv=3).fit(X, y_pm).classes_) == [-1, 1]


def test_deformed_gram_of_a_primal_fit_says_it_has_none():
    X, y = make_moons(60, noise=0.1, random_state=0)
    lap = LapSVM().fit(X, y)  # the default: the primal squared hinge
    with pytest.raises(AttributeError, match="solver='primal'.*solver='dense'"):
        lap.deformed_gram()


def test_a_sparse_grid_builds_its_knn_graph_in_the_group():
    """Sparse X through a structure group's shared kNN search (the cut tolerance of a sparse
    matrix's rows) fits the group as a whole, no point-by-point fallback, equal to the
    plain fits."""
    import scipy.sparse as sp

    X, y = _multi()
    Xs = sp.csr_matrix(X)
    base = DRLSC(kernel="linear", solver="cg", n_neighbors=3)
    grid = {"eta": [0.5, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", GroupFallbackWarning)
        fits = fit_path(base, Xs, y, grid, warn=False)
    with _quiet():
        for point, fitted in zip(ParameterGrid(grid), fits, strict=True):
            one = clone(base).set_params(**point).fit(Xs, y)
            np.testing.assert_allclose(
                fitted.decision_function(Xs), one.decision_function(Xs), atol=1e-8
            )
