"""Input types: pandas labels with missing values, feature names and pandas output of the
kernel maps, and precomputed kernels."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons

from structreg import GFHF, RLSC, LapRLSC, StructuralClassifier
from structreg.model_selection import SemiSupervisedKFold, labeled_accuracy_scorer
from structreg.models import is_unlabeled
from structreg.models._base import missing_as_unlabeled, missing_labels

# DRLSC at its defaults on the small test sets has an indefinite objective (it says so)
pytestmark = [
    pytest.mark.filterwarnings("ignore::structreg.exceptions.NonConvexObjectiveWarning"),
]


@pytest.fixture(scope="module")
def semi():
    """Two moons with three labels per class: the -1 / None conventions and the labels."""
    X, y = make_moons(60, noise=0.05, random_state=0)
    labeled = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    y_int = np.full(60, -1)
    y_int[labeled] = y[labeled]
    y_obj = np.full(60, None, dtype=object)
    y_obj[labeled] = np.array(["a", "b"], dtype=object)[y[labeled]]
    return X, y_int, y_obj


def _pandas_labels(pd, y_int, y_obj):
    """The pandas forms of the same labels: (name, Series, the -1/None convention)."""
    nan_obj = [np.nan if v is None else v for v in y_obj]
    return [
        ("str with None", pd.Series(list(y_obj)), y_obj),
        ("object with NaN", pd.Series(nan_obj, dtype=object), y_obj),
        ("string with NA", pd.Series(list(y_obj), dtype="string"), y_obj),
        ("Int64 with NA", pd.Series([pd.NA if v < 0 else v for v in y_int], dtype="Int64"), y_int),
        ("float with NaN", pd.Series([np.nan if v < 0 else float(v) for v in y_int]), y_int),
    ]


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
@pytest.mark.parametrize("Estimator", [LapRLSC, GFHF])
def test_pandas_missing_labels_fit_as_unlabeled(semi, Estimator):
    pd = pytest.importorskip("pandas")
    X, y_int, y_obj = semi
    for name, series, reference in _pandas_labels(pd, y_int, y_obj):
        expected = Estimator().fit(X, reference)
        clf = Estimator().fit(X, series)
        np.testing.assert_array_equal(clf.classes_, expected.classes_, err_msg=name)
        np.testing.assert_array_equal(clf.predict(X), expected.predict(X), err_msg=name)
        np.testing.assert_array_equal(clf.transduction_, expected.transduction_, err_msg=name)
        assert clf.score(X, series) == expected.score(X, reference), name
    # a nullable integer Series keeps integer classes
    series = _pandas_labels(pd, y_int, y_obj)[3][1]
    assert Estimator().fit(X, series).classes_.dtype.kind == "i"


def test_missing_labels_and_markers():
    pd = pytest.importorskip("pandas")
    y = np.array(["a", None, np.nan, pd.NA, "b"], dtype=object)
    np.testing.assert_array_equal(missing_labels(y), [False, True, True, True, False])
    np.testing.assert_array_equal(is_unlabeled(np.array([0.0, np.nan, -1.0])), [0, 1, 1])
    np.testing.assert_array_equal(is_unlabeled(pd.Series([1, pd.NA], dtype="Int64")), [0, 1])
    filled = missing_as_unlabeled(pd.Series([1, pd.NA, 0], dtype="Int64"))
    assert filled.dtype == np.int64 and filled.tolist() == [1, -1, 0]
    plain = np.array([0, 1, -1])
    assert missing_as_unlabeled(plain) is plain  # nothing missing: y as given


def test_float_nan_is_unlabeled_like_minus_one(semi):
    X, y_int, _ = semi
    y_nan = np.where(y_int < 0, np.nan, y_int.astype(float))
    expected = LapRLSC().fit(X, y_int.astype(float))
    np.testing.assert_array_equal(LapRLSC().fit(X, y_nan).predict(X), expected.predict(X))


def test_missing_label_under_an_explicit_mask_is_refused(semi):
    X, y_int, y_obj = semi
    y = y_obj.copy()
    mask = is_unlabeled(y)
    y[np.flatnonzero(~mask)[0]] = None  # missing, yet the mask says labeled
    with pytest.raises(ValueError, match="missing label.*marks as labeled"):
        LapRLSC().fit(X, y, unlabeled=mask)
    # the mask alone decides otherwise: -1 is a real class here
    y_minus = np.where(y_int < 0, 7, y_int - 1)  # classes -1 and 0, unlabeled 7
    clf = LapRLSC().fit(X, y_minus, unlabeled=y_minus == 7)
    np.testing.assert_array_equal(clf.classes_, [-1, 0])


def test_supervised_estimators_refuse_missing_labels(semi):
    X, y_int, y_obj = semi
    for y in (np.where(y_int < 0, np.nan, y_int.astype(float)), y_obj):
        with pytest.raises(ValueError, match="RLSC is supervised.*missing label"):
            RLSC().fit(X, y)
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="RLSC is supervised.*missing label"):
        RLSC().fit(X, pd.Series(list(y_obj), dtype="string"))


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
def test_model_selection_masks_missing_labels(semi):
    pd = pytest.importorskip("pandas")
    X, y_int, y_obj = semi
    series = pd.Series(list(y_obj), dtype="string")
    cv = SemiSupervisedKFold(3, random_state=0)
    splits = list(cv.split(X, series))
    expected = list(cv.split(X, y_obj))
    for (train, test), (train_ref, test_ref) in zip(splits, expected, strict=True):
        np.testing.assert_array_equal(train, train_ref)
        np.testing.assert_array_equal(test, test_ref)
    clf = StructuralClassifier().fit(X, series)
    assert labeled_accuracy_scorer(clf, X, series) == clf.score(X, y_obj)
    assert not np.isin(np.concatenate([t for _, t in splits]), np.flatnonzero(y_int < 0)).any()


# -- feature names and pandas output of the kernel maps ------------------------------------


def _kernel_maps(X):
    from structreg.kernels import (
        EmpiricalKernelMap,
        KernelExpansion,
        KernelFeatureMap,
        LandmarkFeatureMap,
    )

    return [
        KernelFeatureMap(gamma=0.5),
        EmpiricalKernelMap(gamma=0.5),
        LandmarkFeatureMap(landmarks=X[:5], gamma=0.5),
        KernelExpansion(gamma=0.5),
    ]


def test_kernel_maps_name_their_output_columns(semi):
    X = semi[0]
    for feature_map in _kernel_maps(X):
        Z = feature_map.fit_transform(X)
        prefix = type(feature_map).__name__.lower()
        names = feature_map.get_feature_names_out()
        assert names.tolist() == [f"{prefix}{i}" for i in range(Z.shape[1])]
        assert Z.shape[1] == feature_map.n_components_


def test_kernel_maps_set_output_pandas_in_a_pipeline(semi):
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y_int, _ = semi
    frame = pd.DataFrame(X, columns=["u", "v"], index=np.arange(100, 160))
    y = (X[:, 0] > 0.5).astype(int)
    for feature_map in _kernel_maps(X):
        pipe = make_pipeline(StandardScaler(), feature_map, LogisticRegression())
        pipe.set_output(transform="pandas").fit(frame, y)
        out = pipe[:-1].transform(frame)
        assert isinstance(out, pd.DataFrame)
        assert out.columns.tolist() == feature_map.get_feature_names_out().tolist()
        np.testing.assert_array_equal(out.index, frame.index)
        plain = make_pipeline(StandardScaler(), feature_map).set_output(transform="default")
        np.testing.assert_allclose(out.to_numpy(), plain.fit(frame, y).transform(frame))


def test_models_keep_array_feature_maps_under_global_pandas_output(semi):
    pytest.importorskip("pandas")
    from sklearn import config_context

    from structreg import EKM, LSSVM, SSDRWang

    X, y_int, _ = semi
    y = (X[:, 0] > 0.5).astype(int)
    for model in (LapRLSC(), LSSVM(), SSDRWang(), EKM()):
        expected = model.fit(X, y).decision_function(X)
        with config_context(transform_output="pandas"):
            np.testing.assert_allclose(model.fit(X, y).decision_function(X), expected)


# -- kernel="precomputed" -------------------------------------------------------------------


@pytest.fixture(scope="module")
def split():
    """Training and test moons, semi-supervised labels, and a graph on the inputs."""
    from structreg.structure.graphs import knn_graph

    X, y = make_moons(80, noise=0.1, random_state=0)
    X_train, X_test, y_train = X[:60], X[60:], y[:60]
    y_semi = y_train.copy()
    y_semi[10:50] = -1
    return X_train, X_test, y_train, y_semi, knn_graph(X_train, 6, weights="heat")


def _same_decisions(named, precomputed, X_train, X_test, y, kernel, atol=1e-8):
    from sklearn.metrics.pairwise import pairwise_kernels

    params = {"gamma": 2.0} if kernel == "rbf" else {}
    K = pairwise_kernels(X_train, metric=kernel, **params)
    K_test = pairwise_kernels(X_test, X_train, metric=kernel, **params)
    expected = named.set_params(kernel=kernel, **params).fit(X_train, y)
    fitted = precomputed.set_params(kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(
        fitted.decision_function(K_test), expected.decision_function(X_test), atol=atol
    )
    np.testing.assert_array_equal(fitted.predict(K_test), expected.predict(X_test))
    return fitted


@pytest.mark.parametrize(
    "make",
    [
        lambda: RLSC(gamma_A=1e-3),
        lambda: RLSC(gamma_A=1e-3, fit_intercept=True),
        lambda: __import__("structreg").LSSVM(C=10.0),
    ],
    ids=["RLSC", "RLSC-bias", "LSSVM"],
)
def test_precomputed_rbf_equals_the_named_kernel(split, make):
    X_train, X_test, y_train, _, _ = split
    _same_decisions(make(), make(), X_train, X_test, y_train, "rbf")


@pytest.mark.parametrize("solver", ["dense", "primal"])
def test_precomputed_graph_models_with_the_same_graph(split, solver):
    from structreg import LapSVM

    X_train, X_test, _, y_semi, W = split
    models = [LapSVM(graph=W, solver=solver)]
    if solver == "dense":
        models.append(LapRLSC(graph=W))
    for model in models:
        _same_decisions(model, clone_of(model), X_train, X_test, y_semi, "rbf")


def clone_of(model):
    from sklearn.base import clone

    return clone(model)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_precomputed_linear_kernel_builds_the_euclidean_graph(split, fit_intercept):
    """With the linear kernel the kernel-induced distance is the Euclidean one, so the kNN
    graph (and its heat weights) are those of the inputs."""
    X_train, X_test, _, y_semi, _ = split
    model = LapRLSC(fit_intercept=fit_intercept)
    fitted = _same_decisions(model, clone_of(model), X_train, X_test, y_semi, "linear")
    expected = clone_of(model).set_params(kernel="linear").fit(X_train, y_semi)
    K = X_train @ X_train.T  # what _same_decisions fitted the precomputed model on
    np.testing.assert_allclose(
        fitted.penalty_matrix(K, y_semi).toarray(),
        expected.penalty_matrix(X_train, y_semi).toarray(),
        atol=1e-10,
    )


def test_kernel_points_have_the_kernel_induced_distances(split):
    from sklearn.metrics.pairwise import rbf_kernel

    from structreg.kernels import kernel_points

    K = rbf_kernel(split[0], gamma=2.0)
    V = kernel_points(K)
    d2 = ((V[:, None] - V[None]) ** 2).sum(-1)
    np.testing.assert_allclose(d2, np.diag(K)[:, None] + np.diag(K)[None] - 2 * K, atol=1e-10)


def test_precomputed_kernel_maps(split):
    from sklearn.metrics.pairwise import rbf_kernel

    from structreg.kernels import EmpiricalKernelMap, KernelExpansion, KernelFeatureMap

    X_train, X_test = split[0], split[1]
    K, K_test = rbf_kernel(X_train, gamma=2.0), rbf_kernel(X_test, X_train, gamma=2.0)
    for Map in (KernelFeatureMap, EmpiricalKernelMap, KernelExpansion):
        named = Map(gamma=2.0).fit(X_train)
        fitted = Map(kernel="precomputed").fit(K)
        assert fitted.__sklearn_tags__().input_tags.pairwise
        np.testing.assert_allclose(fitted.transform(K_test), named.transform(X_test), atol=1e-10)
        np.testing.assert_array_equal(fitted.basis_, named.basis_indices_)


def test_precomputed_input_errors(split):
    from sklearn.metrics.pairwise import rbf_kernel

    from structreg.kernels import KernelFeatureMap

    X_train, X_test, y_train, y_semi, _ = split
    K = rbf_kernel(X_train, gamma=2.0)
    for model in (RLSC(kernel="precomputed"), LapRLSC(kernel="precomputed")):
        y = y_semi if model._semi_supervised else y_train
        name = type(model).__name__
        with pytest.raises(
            ValueError, match=f"{name} with kernel='precomputed' fits on the square"
        ):
            model.fit(rbf_kernel(X_train, X_train[:50]), y)
        asymmetric = K.copy()
        asymmetric[0, 1] += 1e-3
        with pytest.raises(ValueError, match="Gram matrix is not symmetric"):
            model.fit(asymmetric, y)
        model.fit(K, y)
        with pytest.raises(ValueError, match="its 60 training samples"):
            model.predict(rbf_kernel(X_test, X_train[:50]))
        for solver in ("nystroem", "cg"):
            with pytest.raises(ValueError, match="solves on the exact Gram matrix"):
                clone_of(model).set_params(solver=solver).fit(K, y)
    with pytest.raises(ValueError, match="KernelFeatureMap takes the .* its 60 training samples"):
        KernelFeatureMap(kernel="precomputed").fit(K).transform(K[:, :5])


def test_precomputed_refused_where_the_inputs_are_needed(split):
    from sklearn.metrics.pairwise import rbf_kernel

    from structreg import EKM, GRBFN, MPM
    from structreg.kernels import LandmarkFeatureMap

    X_train, _, y_train, _, _ = split
    K = rbf_kernel(X_train, gamma=2.0)
    for model in (
        GRBFN(kernel="precomputed"),
        EKM(kernel="precomputed"),
        MPM(kernel="precomputed"),
    ):
        with pytest.raises(ValueError, match=f"{type(model).__name__} does not take kernel="):
            model.fit(K, y_train)
    with pytest.raises(ValueError, match="LandmarkFeatureMap does not take"):
        LandmarkFeatureMap(landmarks=K[:3], kernel="precomputed").fit_transform(K)


def test_precomputed_cross_validation_slices_the_gram_matrix(split):
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import KFold, cross_val_predict, cross_val_score

    from structreg.models import LapRLSCCV

    X_train, _, y_train, y_semi, _ = split
    K = rbf_kernel(X_train, gamma=2.0)
    model = RLSC(kernel="precomputed", gamma_A=1e-3)
    assert model.__sklearn_tags__().input_tags.pairwise
    assert not RLSC().__sklearn_tags__().input_tags.pairwise
    cv = KFold(4, shuffle=True, random_state=0)
    named = RLSC(gamma=2.0, gamma_A=1e-3)
    np.testing.assert_array_equal(
        cross_val_score(model, K, y_train, cv=cv), cross_val_score(named, X_train, y_train, cv=cv)
    )
    np.testing.assert_allclose(
        cross_val_predict(model, K, y_train, cv=cv, method="decision_function"),
        cross_val_predict(named, X_train, y_train, cv=cv, method="decision_function"),
        atol=1e-8,
    )
    # the grid search that shares work across the grid slices K the same way
    grid = {"gamma_I": [0.0, 1.0]}
    K_lin = X_train @ X_train.T
    search = LapRLSCCV(LapRLSC(kernel="precomputed"), param_grid=grid, cv=3).fit(K_lin, y_semi)
    reference = LapRLSCCV(LapRLSC(kernel="linear"), param_grid=grid, cv=3).fit(X_train, y_semi)
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], reference.cv_results_["mean_test_score"]
    )


def test_precomputed_fit_path_and_decision_path(split):
    from sklearn.metrics.pairwise import rbf_kernel

    from structreg import LapSVM
    from structreg.models import decision_path, fit_path

    X_train, X_test, _, y_semi, W = split
    K, K_test = rbf_kernel(X_train, gamma=2.0), rbf_kernel(X_test, X_train, gamma=2.0)
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.1, 1.0]}
    for Estimator in (LapRLSC, LapSVM):
        named = Estimator(gamma=2.0, graph=W)
        precomputed = Estimator(kernel="precomputed", graph=W)
        for a, b in zip(
            fit_path(named, X_train, y_semi, grid),
            fit_path(precomputed, K, y_semi, grid),
            strict=True,
        ):
            np.testing.assert_allclose(
                b.decision_function(K_test), a.decision_function(X_test), atol=1e-8
            )
        np.testing.assert_allclose(
            decision_path(precomputed, K, y_semi, grid, K_test),
            decision_path(named, X_train, y_semi, grid, X_test),
            atol=1e-8,
        )
        with pytest.raises(ValueError, match="its 60 training samples"):
            decision_path(precomputed, K, y_semi, grid, K_test[:, :5])


# -- issue 19.4: sparse X on every square-loss model whose structure reads sparse rows ----------
def _sparse_problem(n=160, d=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = sp.random(n, d, density=0.04, format="csr", random_state=seed)
    X = X + sp.csr_matrix((np.ones(n), (np.arange(n), y)), shape=(n, d))  # a class word
    return sp.csr_matrix(X), y, np.where(np.arange(n) < 50, y, -1)


@pytest.mark.parametrize(
    "name",
    ["RLSC", "LapRLSC", "DRLSC", "DRGV", "DiscriminativeRLS", "SSDRWu", "StructuralClassifier"],
)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_linear_models_equal_their_dense_cg_fit(name, fmt):
    import structreg

    X, y, y_semi = _sparse_problem()
    cls = getattr(structreg, name)
    targets = y_semi if cls()._semi_supervised else y
    fitted = cls(kernel="linear", solver="auto", tol=1e-10).fit(X.asformat(fmt), targets)
    assert fitted.solver_ == "cg"
    dense = cls(kernel="linear", solver="cg", tol=1e-10).fit(X.toarray(), targets)
    np.testing.assert_allclose(
        fitted.decision_function(X[:30]), dense.decision_function(X[:30].toarray()), atol=1e-6
    )


def test_tfidf_pipeline_with_laprlsc():
    """A 20-newsgroups-like corpus generated here: two topics, each document 12 words of a
    shared vocabulary and 8 of its topic's, about 5 % of the documents labeled; the TF-IDF
    rows stay sparse all the way into LapRLSC's CG solver, whose graph over the unlabeled
    documents beats RLSC on the labeled ones (measured: 100 % against 96 %)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    shared = [f"w{i}" for i in range(300)]
    topics = [[f"a{i}" for i in range(60)], [f"b{i}" for i in range(60)]]
    y = rng.integers(0, 2, 400)
    words = [rng.choice(shared, 12).tolist() + rng.choice(topics[c], 8).tolist() for c in y]
    docs = [" ".join(w) for w in words]
    y_semi = np.where(rng.random(400) < 0.05, y, -1)
    model = make_pipeline(TfidfVectorizer(), LapRLSC(kernel="linear")).fit(docs, y_semi)
    assert sp.issparse(model[0].transform(docs[:3]))
    assert model[-1].solver_ == "cg"
    unlabeled = y_semi == -1
    ours = np.mean(model[-1].transduction_[unlabeled] == y[unlabeled])
    X = model[0].transform(docs)
    rlsc = RLSC(kernel="linear").fit(X[~unlabeled], y[~unlabeled])
    assert ours > max(0.95, np.mean(rlsc.predict(X[unlabeled]) == y[unlabeled]))


# -- issue 19.4: cosine kNN graphs on sparse rows ------------------------------------------------
def _cosine_neighbours(X, k):
    """The k nearest rows of every row by cosine similarity, from the dense similarities."""
    D = X.toarray() if sp.issparse(X) else np.asarray(X)
    S = D @ D.T / np.outer(np.linalg.norm(D, axis=1), np.linalg.norm(D, axis=1))
    np.fill_diagonal(S, -np.inf)
    return np.sort(np.argsort(-S, axis=1, kind="stable")[:, :k], axis=1)


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense"])
def test_cosine_knn_graph_links_the_most_similar_rows(fmt):
    from structreg.structure import knn_graph

    X, _, _ = _sparse_problem(n=80, d=200)
    X = sp.diags(np.random.default_rng(1).uniform(0.1, 10, 80)) @ X  # lengths must not matter
    X = X.toarray() if fmt == "dense" else X.asformat(fmt)
    W = knn_graph(X, 5, metric="cosine", symmetrize=False)
    found = np.sort(W.tolil().rows.tolist(), axis=1)
    np.testing.assert_array_equal(found, _cosine_neighbours(X, 5))
    # the Euclidean graph of the unscaled rows is another graph (not vacuous)
    euclid = knn_graph(X, 5, symmetrize=False)
    assert not np.array_equal(np.sort(euclid.tolil().rows.tolist(), axis=1), found)
    # heat weights on the chords ||u - v||^2 = 2 (1 - cos)
    Wh = knn_graph(X, 5, metric="cosine", weights="heat", t=1.0, symmetrize=False).tocoo()
    D = X.toarray() if sp.issparse(X) else X
    cos = np.einsum("ij,ij->i", D[Wh.row], D[Wh.col]) / (
        np.linalg.norm(D[Wh.row], axis=1) * np.linalg.norm(D[Wh.col], axis=1)
    )
    np.testing.assert_allclose(Wh.data, np.exp(-2 * (1 - cos)), rtol=1e-10)


def test_cosine_graph_in_laprlsc_and_errors():
    from structreg.structure import LaplacianPenalty

    X, y, y_semi = _sparse_problem(n=120, d=300)
    model = LapRLSC(kernel="linear", metric="cosine").fit(X, y_semi)
    labeled = y_semi != -1
    W = LaplacianPenalty(metric="cosine").adjacency(X, y_semi, labeled)
    rows = sp.diags(1 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    same = LapRLSC(kernel="linear").fit(X, y_semi)  # Euclidean graph
    assert np.abs(W - LaplacianPenalty().adjacency(rows, y_semi, labeled)).max() < 1e-12
    assert not np.allclose(model.decision_function(X), same.decision_function(X))
    zero = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()
    with pytest.raises(ValueError, match="metric='cosine' needs non-zero rows.*row 120"):
        LapRLSC(kernel="linear", metric="cosine").fit(zero, np.r_[y_semi, -1])
    with pytest.raises(ValueError, match="metric"):
        LapRLSC(metric="manhattan").fit(X, y_semi)


# -- issue 19.4: float32 kept by the kernel maps -------------------------------------------------
@pytest.mark.parametrize("name", ["KernelFeatureMap", "EmpiricalKernelMap", "KernelExpansion"])
def test_kernel_maps_keep_float32(name):
    """float32 in, float32 out: the kernel and its factor are computed in float64 and rounded
    once, so the float32 map is the float64 map rounded (not a float32 computation)."""
    import structreg.kernels as kernels

    X = np.random.default_rng(0).normal(size=(40, 3))
    Xt = np.random.default_rng(1).normal(size=(7, 3))
    double = getattr(kernels, name)().fit(X)
    single = getattr(kernels, name)()
    Z32 = single.fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and single.transform(Xt.astype(np.float32)).dtype == np.float32
    exact = getattr(kernels, name)().fit_transform(X.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(Z32, exact.astype(np.float32))
    assert double.transform(Xt).dtype == np.float64
    landmarks = kernels.LandmarkFeatureMap(landmarks=X[:5])
    assert landmarks.fit_transform(X.astype(np.float32)).dtype == np.float32


def test_models_solve_in_float64_on_float32_input():
    """The square-loss solvers square the design's condition number: float32 input is
    converted once and the models answer in float64, the same as on the float64 input."""
    X = np.random.default_rng(0).normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    f32 = RLSC().fit(X.astype(np.float32), y).decision_function(X.astype(np.float32))
    f64 = (
        RLSC()
        .fit(X.astype(np.float32).astype(np.float64), y)
        .decision_function(X.astype(np.float32).astype(np.float64))
    )
    assert f32.dtype == np.float64
    np.testing.assert_array_equal(f32, f64)
