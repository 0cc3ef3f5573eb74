"""Equivalences between the presets and their baselines, and the hinge-loss path."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_moons
from sklearn.svm import SVC

from structreg import RLSC, LapRLSC, LapSVM, StructuralClassifier
from structreg.kernels import KernelFeatureMap, kernel_matrix
from structreg.models._base import LinearFeatures
from structreg.solvers import DeformedFeatures
from structreg.structure import LaplacianPenalty, knn_graph, laplacian


def _semi(y, per_class, rng, marker=-1):
    y_semi = np.array(y, dtype=object if marker is None else None)
    keep = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)]
    )
    mask = np.ones(len(y), bool)
    mask[keep] = False
    y_semi[mask] = marker
    return y_semi, keep


@pytest.mark.parametrize("n_classes", [2, 3])
def test_laprlsc_without_graph_term_equals_rlsc(rng, n_classes):
    X, y = make_blobs(60, centers=n_classes, random_state=1)
    y_semi, keep = _semi(y, 5, rng)
    Xt = rng.normal(size=(10, 2)) * 4
    lap = LapRLSC(gamma=0.2, gamma_A=0.03, gamma_I=0.0).fit(X, y_semi)
    rls = RLSC(gamma=0.2, gamma_A=0.03).fit(X[keep], y[keep])
    np.testing.assert_allclose(lap.decision_function(Xt), rls.decision_function(Xt), atol=1e-8)
    # and on fully labeled data as well
    lap_full = LapRLSC(gamma=0.2, gamma_A=0.03, gamma_I=0.0).fit(X, y)
    np.testing.assert_allclose(
        lap_full.decision_function(Xt),
        RLSC(gamma=0.2, gamma_A=0.03).fit(X, y).decision_function(Xt),
        atol=1e-8,
    )


def test_rlsc_closed_form(rng):
    X, y = make_blobs(30, centers=2, random_state=0)
    clf = RLSC(gamma=0.1, gamma_A=0.02).fit(X, y)
    K = kernel_matrix(X, kernel="rbf", gamma=0.1)
    alpha = np.linalg.solve(K + len(X) * 0.02 * np.eye(len(X)), np.where(y == 1, 1.0, -1.0))
    Xt = rng.normal(size=(5, 2))
    np.testing.assert_allclose(
        clf.decision_function(Xt), kernel_matrix(Xt, X, kernel="rbf", gamma=0.1) @ alpha, atol=1e-8
    )


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_lapsvm_without_graph_term_equals_svc(rng, kernel):
    X, y = make_moons(80, noise=0.2, random_state=0)
    gamma_A = 0.01
    lap = LapSVM(
        kernel=kernel, gamma=1.0, gamma_A=gamma_A, gamma_I=0.0, tol=1e-10, solver="dense"
    ).fit(X, y)
    svc = SVC(kernel=kernel, gamma=1.0, coef0=1.0, C=1 / (2 * gamma_A * len(X)), tol=1e-10).fit(
        X, y
    )
    Xt = rng.normal(size=(20, 2))
    np.testing.assert_allclose(lap.decision_function(Xt), svc.decision_function(Xt), atol=1e-5)


def test_lapsvm_multiclass_ovo_and_ovr(rng):
    X, y = make_blobs(90, centers=3, cluster_std=2.0, random_state=3)
    C = 1 / (2 * 0.02 * len(X))
    ovo = LapSVM(gamma=0.3, gamma_A=0.02, gamma_I=0.0, multi_class="ovo", tol=1e-10).fit(X, y)
    svc = SVC(gamma=0.3, C=C, tol=1e-10).fit(X, y)
    Xt = rng.normal(size=(30, 2)) * 5
    np.testing.assert_array_equal(ovo.predict(Xt), svc.predict(Xt))
    ovr = LapSVM(
        gamma=0.3, gamma_A=0.02, gamma_I=0.0, multi_class="ovr", tol=1e-10, solver="dense"
    ).fit(X, y)
    F = ovr.decision_function(Xt)
    for k in range(3):
        ref = SVC(gamma=0.3, C=C, tol=1e-10).fit(X, (y == k).astype(int)).decision_function(Xt)
        np.testing.assert_allclose(F[:, k], ref, atol=1e-5)


def test_deformed_gram_matches_explicit_features_for_linear_kernel(rng):
    X = rng.normal(size=(30, 4))
    M = laplacian(knn_graph(X, 4)).toarray() * 0.3
    gamma_A = 0.05
    K = X @ X.T
    direct = K - K @ np.linalg.solve(gamma_A * np.eye(30) + M @ K, M @ K)
    for fmap in (KernelFeatureMap(kernel="linear"), LinearFeatures()):
        Z = fmap.fit_transform(X)
        Zt = DeformedFeatures(Z, M, gamma_A).transform(Z)
        np.testing.assert_allclose(Zt @ Zt.T, direct, atol=1e-9)
    # explicit-feature form of the deformed linear kernel: X (I + X'MX/gamma_A)^{-1} X'
    explicit = X @ np.linalg.solve(np.eye(4) + X.T @ M @ X / gamma_A, X.T)
    np.testing.assert_allclose(direct, explicit, atol=1e-9)


def test_deformed_kernel_out_of_sample_formula(rng):
    X, Xt = rng.normal(size=(25, 2)), rng.normal(size=(6, 2))
    M = laplacian(knn_graph(X, 4)).toarray()
    gamma_A = 0.1
    fmap = KernelFeatureMap(gamma=0.7)
    Z = fmap.fit_transform(X)
    deform = DeformedFeatures(Z, M, gamma_A)
    cross = deform.transform(fmap.transform(Xt)) @ deform.transform(Z).T
    K, Kt = kernel_matrix(X, kernel="rbf", gamma=0.7), kernel_matrix(Xt, X, kernel="rbf", gamma=0.7)
    direct = Kt - Kt @ np.linalg.solve(gamma_A * np.eye(25) + M @ K, M @ K).T
    # k~(x, X) = k_x - K (gamma_A I + M K)^{-1} M k_x, written row-wise
    direct = Kt - (K @ np.linalg.solve(gamma_A * np.eye(25) + M @ K, M @ Kt.T)).T
    np.testing.assert_allclose(cross, direct, atol=1e-8)


def test_semi_supervised_two_moons_beats_supervised(rng):
    X, y = make_moons(200, noise=0.05, random_state=0)
    y_semi, keep = _semi(y, 2, rng)
    unl = y_semi == -1
    for est in (
        LapRLSC(gamma=5.0, gamma_A=1e-4, gamma_I=1e2),
        LapSVM(gamma=5.0, gamma_A=1e-4, gamma_I=1e2),
    ):
        est.fit(X, y_semi)
        assert (est.transduction_[unl] == y[unl]).mean() >= 0.95
        assert est.score(X, y) >= 0.95
    # with the same labels and no unlabeled data, RLSC does much worse
    rls = RLSC(gamma=5.0, gamma_A=1e-4).fit(X[keep], y[keep])
    assert (rls.predict(X[unl]) == y[unl]).mean() < 0.9


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
def test_string_labels_with_none_as_unlabeled(rng):
    X, y = make_moons(120, noise=0.05, random_state=1)
    names = np.array(["left", "right"], dtype=object)[y]
    y_semi, keep = _semi(names, 3, rng, marker=None)
    for est in (
        LapRLSC(gamma=5.0, gamma_A=1e-4, gamma_I=1e2),
        LapSVM(gamma=5.0, gamma_A=1e-4, gamma_I=1e2),
    ):
        est.fit(X, y_semi)
        assert list(est.classes_) == ["left", "right"]
        assert set(est.predict(X)) <= {"left", "right"}
        assert (est.predict(X) == names).mean() > 0.9
        assert est.score(X, y_semi) == 1.0  # scored on the labeled samples only


def test_unlabeled_mask_when_minus_one_is_a_class(rng):
    X, y = make_moons(100, noise=0.05, random_state=2)
    y_pm = np.where(y == 1, 1, -1)
    mask = np.ones(100, bool)
    mask[[0, 1, 2, 3, 50, 51]] = False
    mask[np.flatnonzero(y_pm == -1)[:3]] = False
    mask[np.flatnonzero(y_pm == 1)[:3]] = False
    clf = LapRLSC(gamma=5.0, gamma_A=1e-4, gamma_I=1e2).fit(X, y_pm, unlabeled=mask)
    assert list(clf.classes_) == [-1, 1]
    same = LapRLSC(gamma=5.0, gamma_A=1e-4, gamma_I=1e2).fit(X, np.where(mask, -1, y))
    np.testing.assert_allclose(clf.decision_function(X), same.decision_function(X))


def test_supervised_mr_mode_class_wise_graph(rng):
    X, y = make_blobs(60, centers=3, random_state=0)
    clf = LapRLSC(graph="class-wise", n_neighbors=4, gamma=0.3, gamma_A=1e-4, gamma_I=1.0).fit(X, y)
    W = clf.penalty_matrix(X, y).toarray()
    off_class = y[:, None] != y[None, :]
    assert np.all(W[off_class] == 0)  # no edge between classes
    assert clf.score(X, y) > 0.9


def test_precomputed_graph_is_used(rng):
    X, y = make_moons(60, noise=0.05, random_state=0)
    W = knn_graph(X, 5, weights="connectivity")
    # a numeric width: gamma="graph" reads a given graph's edge lengths, not n_neighbors
    a = LapRLSC(graph=W, gamma=1.0, gamma_I=5.0).fit(X, y)
    b = LapRLSC(n_neighbors=5, weights="connectivity", gamma=1.0, gamma_I=5.0).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    c = LapRLSC(n_neighbors=3, weights="connectivity", gamma=1.0, gamma_I=5.0).fit(X, y)
    assert not np.allclose(a.decision_function(X), c.decision_function(X))


def test_structural_classifier_combines_penalties(rng):
    X, y = make_moons(80, noise=0.1, random_state=0)
    y_semi, _ = _semi(y, 4, rng)
    p1 = LaplacianPenalty(n_neighbors=5)
    p2 = LaplacianPenalty(n_neighbors=8, weights="connectivity")
    both = StructuralClassifier(penalties=[(1e-3, p1), (2e-3, p2)]).fit(X, y_semi)
    M = 1e-3 * p1.build(X, np.zeros(80, int), y_semi != -1) + 2e-3 * p2.build(
        X, np.zeros(80, int), y_semi != -1
    )
    np.testing.assert_allclose(both.penalty_matrix(X, y_semi).toarray(), M.toarray())
    hinge = StructuralClassifier(loss="hinge", penalties=[(1e-3, p1), (2e-3, p2)]).fit(X, y_semi)
    assert hinge.score(X, y) > 0.7


def test_hinge_refuses_indefinite_penalty(rng):
    X, y = make_moons(60, noise=0.1, random_state=0)
    clf = StructuralClassifier(loss="hinge", penalties=[(-1.0, LaplacianPenalty())])
    with pytest.raises(ValueError, match="positive semi-definite"):
        clf.fit(X, y)


def test_lapsvm_supervised_mr_mode(rng):
    X, y = make_blobs(60, centers=3, random_state=0)
    clf = LapSVM(graph="class-wise", n_neighbors=4, gamma=0.3, gamma_A=1e-3, gamma_I=1.0)
    clf.fit(X, y)
    assert clf.score(X, y) > 0.9
    base = LapSVM(graph="class-wise", n_neighbors=4, gamma=0.3, gamma_A=1e-3, gamma_I=0.0)
    assert not np.allclose(clf.decision_function(X), base.fit(X, y).decision_function(X))


def test_fitted_models_are_slim():
    """Issue 19.6: a fitted model keeps what predict needs.  No n x n penalty (rebuilt on
    demand by penalty_matrix), and the kernel map's O(n^2) Cholesky factor is not pickled
    (rebuilt from basis_ when transform needs it): LapRLSC on 2,000 points pickled to 32 MB
    before, the factor alone being 2,000^2 doubles."""
    import pickle

    from structreg.structure import LaplacianPenalty

    X, y = make_moons(2000, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(2000) < 40, y, -1)
    clf = LapRLSC(gamma=2.0, gamma_I=1.0, n_neighbors=6).fit(X, y_semi)
    assert not hasattr(clf, "penalty_")
    L = LaplacianPenalty(n_neighbors=6).build(X, y_semi, y_semi != -1)
    np.testing.assert_allclose(clf.penalty_matrix(X, y_semi).toarray(), L.toarray() / 2000**2)
    blob = pickle.dumps(clf)
    assert len(blob) < 1_000_000
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_allclose(
        back.feature_map_.transform(X[:20]), clf.feature_map_.transform(X[:20]), atol=1e-6
    )


# -- pickling: the same outputs, bit for bit ------------------------------------------------


def _round_trips(clf):
    import copy
    import pickle

    return [pickle.loads(pickle.dumps(clf)), copy.deepcopy(clf)]


def _outputs(clf, X) -> dict:
    out = {}
    for name in ("decision_function", "predict_proba", "predict"):
        try:
            out[name] = getattr(clf, name)(X)
        except AttributeError:  # predict_proba where the model has none
            pass
    return out


def _assert_same_outputs(clf, X_sets):
    for back in _round_trips(clf):
        for X in X_sets:
            before, after = _outputs(clf, X), _outputs(back, X)
            assert before.keys() == after.keys()
            for name, value in before.items():
                assert np.array_equal(value, after[name]), (name, np.abs(value - after[name]).max())


def test_lapsvm_pickle_round_trip_is_bit_identical(rng):
    """LapSVM's default on small data is libsvm on the deformed features of the exact kernel
    factor: predict maps new points through feature_map_.transform, whose Cholesky factor a
    pickle left out and rebuilt by another factorisation (outputs 1e-13 apart)."""
    X, y = make_moons(100, noise=0.1, random_state=0)
    y_semi, _ = _semi(y, 10, rng)
    X_new = rng.normal(size=(15, 2))
    for clf in (LapSVM(solver="dense"), LapSVM(solver="dense", probability=True, random_state=0)):
        clf.fit(X, y_semi)
        assert clf.solver_ == "dense" and clf.deformed_kernel_ is None
        _assert_same_outputs(clf, [X, X.copy(), X_new])
    _assert_same_outputs(LapSVM().fit(X, y_semi), [X, X_new])  # the default: primal
    X3, y3 = make_blobs(90, centers=3, random_state=0)
    y3_semi, _ = _semi(y3, 8, rng)
    for multi_class in ("ovr", "ovo"):
        clf = LapSVM(multi_class=multi_class, solver="dense")
        _assert_same_outputs(clf.fit(X3, y3_semi), [X3, X_new])


def _public_classifiers():
    import inspect

    from sklearn.base import ClassifierMixin, MetaEstimatorMixin

    import structreg

    return [
        pytest.param(cls, id=name)
        for name in structreg.__all__
        if inspect.isclass(cls := getattr(structreg, name))
        and issubclass(cls, ClassifierMixin)
        and not issubclass(cls, MetaEstimatorMixin)
    ]


@pytest.mark.parametrize("cls", _public_classifiers())
def test_public_classifiers_answer_the_same_after_a_pickle_round_trip(cls, rng):
    """Every classifier of structreg.__all__ with its defaults on a small (semi-)supervised
    problem: decision_function / predict_proba / predict bit-identical after pickle and
    deepcopy, on the training array itself (LS-SVM's kernel expansion kept the caller's
    array: k(X, X)'s symmetric shortcut then met it by identity before, not after), on a
    copy of it and on new points."""
    import warnings

    X, y = make_moons(60, noise=0.1, random_state=0)
    clf = cls()
    y_fit = _semi(y, 6, rng)[0] if getattr(clf, "_semi_supervised", False) else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a default that warns on 60 points
        clf.fit(X, y_fit)
        _assert_same_outputs(clf, [X, X.copy(), rng.normal(size=(10, 2))])


def test_kernel_expansion_keeps_its_own_copy_of_the_training_samples():
    """A model that scores with its training samples (LS-SVM, the kernel CG) no longer
    changes when the caller later writes into the array it was fitted on."""
    from structreg import LSSVM

    X, y = make_moons(60, noise=0.1, random_state=0)
    X_new = X[:5] + 0.01
    for clf in (LSSVM(), LapRLSC(solver="cg")):
        X_fit = X.copy()
        clf.fit(X_fit, np.where(np.arange(60) < 20, y, -1) if clf._semi_supervised else y)
        before = clf.decision_function(X_new)
        X_fit[:] = 0.0
        np.testing.assert_array_equal(clf.decision_function(X_new), before)


def test_cv_estimators_answer_the_same_after_a_pickle_round_trip(rng):
    """The CV estimators of structreg.__all__ (small grids): their refitted model's outputs
    after pickle and deepcopy, as for every other classifier."""
    from structreg import DRLSCCV, DiscriminativeRLSCV, LapRLSCCV, StructuralClassifierCV

    X, y = make_moons(60, noise=0.1, random_state=0)
    y_semi, _ = _semi(y, 8, rng)
    searches = [
        (StructuralClassifierCV(LapSVM(), {"gamma_A": [1e-3, 1e-1]}, cv=2), y_semi),
        (LapRLSCCV(param_grid={"gamma_A": [1e-3, 1e-1]}, cv=2), y_semi),
        (DiscriminativeRLSCV(param_grid={"gamma_D": [0.0, 1e-2]}, cv=2), y),
        (DRLSCCV(param_grid={"eta": [0.3, 1.0]}, cv=2), y),
    ]
    for search, labels in searches:
        _assert_same_outputs(search.fit(X, labels), [X, X.copy(), rng.normal(size=(10, 2))])
