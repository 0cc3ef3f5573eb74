"""The solver choice of the square-loss models: dense, Nystroem, CG and what "auto" picks."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator
from sklearn.datasets import make_moons

from structreg import (
    DRLSC,
    RLSC,
    DALapRLSC,
    DiscriminativeRLS,
    LapRLSC,
    SparseRLSC,
    StructuralClassifier,
)
from structreg.kernels import (
    LandmarkFeatureMap,
    NystroemApproximationWarning,
    kernel_matrix,
    select_centers,
)
from structreg.models import _base, _solver_choice
from structreg.models.ssdr import SSDRWang, SSDRWu
from structreg.solvers import SquareLossPath
from structreg.solvers.design import design_penalty_gram
from structreg.structure import LaplacianPenalty, knn_graph, laplacian

# few labels and few centres on purpose: their warnings are expected where a test is not about them
pytestmark = [
    pytest.mark.filterwarnings("ignore::structreg.exceptions.DegenerateSolutionWarning"),
    pytest.mark.filterwarnings("ignore::structreg.kernels.NystroemApproximationWarning"),
]


def _semi(n=120, n_lab=6, seed=0):
    X, y = make_moons(n, noise=0.08, random_state=seed)
    y_semi = np.full_like(y, -1)
    for c in (0, 1):
        y_semi[np.flatnonzero(y == c)[:n_lab]] = c
    return X, y, y_semi


SEMI = [
    LapRLSC(gamma=2.0, gamma_A=1e-3, gamma_I=1.0),
    DALapRLSC(gamma=2.0, gamma_A=1e-3, gamma_D=1.0, random_state=0),
    SSDRWu(gamma=2.0, gamma_A=1e-3, gamma_I=1.0, gamma_D=1e-2),
    SSDRWang(kernel="rbf", gamma=2.0, gamma_A=1e-2),
    SparseRLSC(gamma=2.0, l1_mode="lasso", n_candidates=8),
    StructuralClassifier(penalties=[(1e-3, LaplacianPenalty())], gamma=2.0, gamma_A=1e-3),
]
SUPERVISED = [
    RLSC(gamma=2.0, gamma_A=1e-3),
    DiscriminativeRLS(margin="local", gamma=2.0, gamma_A=1e-2, gamma_D=1e-4),
    # no RKHS norm: a kernel of finite rank (6 features in 2-D) keeps the system nonsingular
    DRLSC(kernel="poly", degree=2, gamma=1.0, eta=0.9, n_neighbors=4),
]


def _name(est):
    return type(est).__name__


def _fit_pair(est, solver, **extra):
    X, y, y_semi = _semi()
    target = y_semi if est in SEMI else y
    dense = est.set_params(solver="dense").fit(X, target)
    ref = dense.decision_function(X)
    other = est.set_params(solver=solver, **extra).fit(X, target)
    return X, ref, other


@pytest.mark.parametrize("est", SEMI + SUPERVISED, ids=_name)
def test_nystroem_with_every_sample_as_a_centre_is_the_dense_solution(est):
    X, ref, ny = _fit_pair(est, "nystroem", n_components=10_000)
    feature_map = getattr(ny.feature_map_, "base", ny.feature_map_)  # SSDRWang centres it
    assert ny.solver_ == "nystroem" and isinstance(feature_map, LandmarkFeatureMap)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(ny.decision_function(X), ref, atol=1e-6 * scale)


@pytest.mark.parametrize("est", SEMI + SUPERVISED, ids=_name)
def test_cg_is_the_dense_solution(est):
    X, ref, it = _fit_pair(est, "cg", tol=1e-12, max_iter=5000)
    assert it.solver_ == "cg" and it.solver_info_["solver"] == "cg"
    assert it.n_iter_ >= 1
    scale = np.abs(ref).max()
    np.testing.assert_allclose(it.decision_function(X), ref, atol=1e-5 * scale)
    if hasattr(it, "transduction_"):
        np.testing.assert_array_equal(it.transduction_, it.predict(X))


def test_nystroem_with_few_centres_is_close_to_dense_on_moons():
    X, y = make_moons(1500, noise=0.1, random_state=1)
    y_semi = np.full_like(y, -1)
    y_semi[np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]] = [0] * 10 + [1] * 10
    common = dict(gamma=2.0, gamma_A=1e-4, gamma_I=10.0, n_neighbors=8)
    dense = LapRLSC(solver="dense", **common).fit(X, y_semi)
    ny = LapRLSC(solver="nystroem", n_components=150, random_state=0, **common).fit(X, y_semi)
    kpp = LapRLSC(solver="nystroem", n_components=150, centers="k-means++", random_state=0)
    kpp.set_params(**common).fit(X, y_semi)
    assert ny.feature_map_.n_components_ <= 150
    acc = {m: m.score(X, y) for m in (dense, ny, kpp)}
    assert acc[dense] > 0.95
    assert abs(acc[ny] - acc[dense]) <= 0.01 and abs(acc[kpp] - acc[dense]) <= 0.01


def test_nystroem_warns_when_the_centres_miss_most_of_the_kernel():
    X, y, y_semi = _semi(n=300)
    common = dict(gamma_A=1e-4, gamma_I=1.0, solver="nystroem", n_components=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a wide kernel: no warning
        wide = LapRLSC(gamma=1.0, **common).fit(X, y_semi)
    assert wide.solver_info_["unexplained_trace"] < 0.01
    with pytest.warns(NystroemApproximationWarning, match="30 Nystroem centres leave 9[0-9]%"):
        narrow = LapRLSC(gamma=1e4, **common).fit(X, y_semi)
    assert narrow.solver_info_["unexplained_trace"] == pytest.approx(
        narrow.feature_map_.unexplained_trace_
    )
    assert narrow.solver_info_["unexplained_trace"] > _base.NYSTROEM_WARN_UNEXPLAINED
    assert "unexplained_trace" not in LapRLSC(gamma=1e4, solver="dense").fit(X, y_semi).solver_info_
    # SSDRWang centres the Nystroem features: the base map's share is reported
    wang = SSDRWang(kernel="rbf", gamma=1e4, solver="nystroem", n_components=30, random_state=0)
    with pytest.warns(NystroemApproximationWarning):
        wang.fit(X, y_semi)
    assert wang.solver_info_["unexplained_trace"] == pytest.approx(
        wang.feature_map_.base.unexplained_trace_
    )


def test_auto_picks_by_size_and_says_so(monkeypatch):
    X, y, y_semi = _semi()
    assert LapRLSC().fit(X, y_semi).solver_ == "dense"
    monkeypatch.setattr(_solver_choice, "AUTO_DENSE_MAX", 50)
    clf = LapRLSC(n_components=40, random_state=0).fit(X, y_semi)
    assert clf.solver_ == "nystroem" and clf.feature_map_.n_components_ <= 40
    # a linear kernel with fewer features than samples keeps its small primal system
    assert RLSC(kernel="linear").fit(X, y).solver_ == "dense"
    # sparse input goes to the matrix-free path
    lin = DiscriminativeRLS(kernel="linear", gamma_D=1e-4).fit(sp.csr_matrix(X), y)
    assert lin.solver_ == "cg"


def test_unknown_or_unsupported_solver_is_refused():
    X, y, _ = _semi()
    with pytest.raises(ValueError, match="solver"):
        RLSC(solver="primal").fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        RLSC(solver="nystrom").fit(X, y)
    with pytest.raises(ValueError, match="bordered"):
        DRLSC(formulation="bordered", solver="cg", n_neighbors=4).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        StructuralClassifier(loss="hinge", solver="cg").fit(X, y)


def test_select_centers():
    X = np.random.default_rng(0).normal(size=(500, 3))
    a = select_centers(X, 50, "uniform", random_state=0)
    b = select_centers(X, 50, "uniform", random_state=0)
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) == 50 and a.max() < 500
    k = select_centers(X, 50, "k-means++", random_state=0)
    assert len(k) == 50 and len(np.unique(k)) == 50

    # k-means++ spreads the centres: its farthest point is nearer a centre than uniform's
    def coverage(idx):
        return np.sqrt(((X[:, None] - X[idx][None]) ** 2).sum(-1).min(1)).max()

    assert coverage(k) < coverage(a)
    np.testing.assert_array_equal(select_centers(X, 900), np.arange(500))
    with pytest.raises(ValueError, match="centers"):
        select_centers(X, 5, "random")


@pytest.mark.parametrize("kind", ["sparse", "dense", "operator"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_blockwise_normal_equations_equal_the_direct_products(kind, fit_intercept, memory_budget):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    L = laplacian(knn_graph(X, 5, weights="heat"))
    M = {"sparse": L, "dense": L.toarray(), "operator": aslinearoperator(L)}[kind]
    Z = kernel_matrix(X, X[:40], kernel="rbf", gamma=1.0)
    c = np.where(rng.random(300) < 0.1, 0.05, 0.0)
    # tiny blocks so that the row-block loop really runs many times
    memory_budget(8 * 40 * 7)
    A = np.hstack([Z, np.ones((300, 1))]) if fit_intercept else Z
    expected = A.T @ ((np.diag(c) + L.toarray()) @ A)
    expected[np.arange(40), np.arange(40)] += 0.3
    H = SquareLossPath(Z, np.zeros((300, 1)), c, [M], fit_intercept=fit_intercept).system(0.3)
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        design_penalty_gram(Z, M, fit_intercept=False), Z.T @ L.toarray() @ Z, atol=1e-10
    )


def test_lapsvm_primal_solvers():
    from structreg import LapSVM

    X, y, y_semi = _semi(n=200, n_lab=5)
    common = dict(gamma=2.0, gamma_A=1e-3, gamma_I=10.0, fit_intercept=True)
    primal = LapSVM(solver="primal", **common).fit(X, y_semi)
    nys = LapSVM(solver="nystroem", n_components=10_000, **common).fit(X, y_semi)
    assert primal.solver_info_["loss"] == "squared_hinge" and primal.solver_info_["converged"]
    np.testing.assert_allclose(nys.decision_function(X), primal.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(primal.transduction_, primal.predict(X))
    # the primal optimum is stationary: zero gradient of the squared-hinge objective
    Z = primal.feature_map_.transform(X)
    f = primal.decision_function(X)
    lab = y_semi != -1
    ypm = np.where(y == 1, 1.0, -1.0)
    slack = np.where(lab, np.maximum(0.0, 1 - ypm * f), 0.0)
    g_f = -2 * ypm * slack / lab.sum() + 2 * (primal.penalty_matrix(X, y_semi) @ f)
    grad = np.r_[Z.T @ g_f + 2 * common["gamma_A"] * primal.coef_.ravel(), g_f.sum()]
    assert np.abs(grad).max() < 1e-8
    dense = LapSVM(solver="dense", **common).fit(X, y_semi)
    assert abs(primal.score(X, y) - dense.score(X, y)) <= 0.02
    with pytest.raises(ValueError, match="one-vs-rest"):
        Xb, yb = make_moons(90, random_state=0)
        y3 = np.where(Xb[:, 0] > 1.0, 2, yb)
        LapSVM(solver="primal", multi_class="ovo").fit(Xb, y3)


def test_graph_width_with_few_centres_is_the_centres_scale():
    """gamma='graph' with Nystroem: the width is at least the centres' own neighbour scale
    (many points, few centres: the points' scale would leave the centres' kernels apart)."""
    from structreg.models.manifold import GRAPH_KERNEL_WIDTH
    from structreg.structure.graphs import neighbor_scale

    X, y = make_moons(6000, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]] = [0] * 5 + [1] * 5
    few = LapRLSC(solver="nystroem", n_components=100, random_state=0).fit(X, y_semi)
    centres = few.feature_map_.landmarks
    assert len(centres) == 100
    t_points, t_centres = neighbor_scale(X, 6), neighbor_scale(centres, 6)  # n_neighbors=6
    assert t_centres > 10 * t_points
    np.testing.assert_allclose(few.feature_map_.gamma, 1 / (GRAPH_KERNEL_WIDTH * t_centres))
    # the points' own scale is kept by the dense solver, and wins when it is the larger
    dense = LapRLSC(solver="dense").fit(X[:1500], y_semi[:1500])
    np.testing.assert_allclose(
        dense.feature_map_.gamma, 1 / (GRAPH_KERNEL_WIDTH * neighbor_scale(X[:1500], 6))
    )
    assert few.score(X, y) > 0.95
    narrow = LapRLSC(
        solver="nystroem", n_components=100, random_state=0, gamma=1 / (4 * t_points)
    ).fit(X, y_semi)
    assert narrow.score(X, y) < few.score(X, y) - 0.05  # 88.6 % against 98.3 %
