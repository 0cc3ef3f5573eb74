"""kNN graphs, Laplacians and penalties."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise_distances

from structreg.structure import (
    LaplacianPenalty,
    PrecomputedPenalty,
    between_class_graph,
    build_penalties,
    class_wise_graph,
    knn_graph,
    laplacian,
    within_class_graph,
)


def _brute_knn(X, k):
    D = pairwise_distances(X)
    np.fill_diagonal(D, np.inf)
    A = np.zeros_like(D, dtype=bool)
    for i, row in enumerate(np.argsort(D, axis=1)[:, :k]):
        A[i, row] = True
    return A | A.T, D


@pytest.mark.parametrize("weights", ["connectivity", "heat", "dot"])
def test_knn_graph_matches_brute_force(rng, weights):
    X = rng.normal(size=(40, 3))
    W = knn_graph(X, 5, weights=weights, t=0.7)
    assert sp.issparse(W)
    A, D = _brute_knn(X, 5)
    np.testing.assert_array_equal(W.toarray() != 0, A)
    expected = {"connectivity": np.ones_like(D), "heat": np.exp(-(D**2) / 0.7), "dot": X @ X.T}
    np.testing.assert_allclose(W.toarray()[A], expected[weights][A])
    assert abs(W - W.T).max() == 0 and W.diagonal().sum() == 0


def test_knn_graph_with_duplicate_points_excludes_self(rng):
    X = np.repeat(rng.normal(size=(10, 2)), 2, axis=0)
    W = knn_graph(X, 3)
    assert W.diagonal().sum() == 0
    assert np.all(np.asarray((W > 0).sum(axis=1)).ravel() >= 3)


def test_knn_graph_too_many_neighbours():
    with pytest.raises(ValueError, match="n_neighbors=5 must be smaller than the number of points"):
        knn_graph(np.zeros((5, 2)) + np.arange(5)[:, None], 5)


def test_laplacian_properties(rng):
    X = rng.normal(size=(30, 2))
    W = knn_graph(X, 4, weights="heat")
    L = laplacian(W).toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    f = rng.normal(size=30)
    Wd = W.toarray()
    np.testing.assert_allclose(f @ L @ f, 0.5 * (Wd * (f[:, None] - f[None]) ** 2).sum())
    assert np.linalg.eigvalsh(L).min() > -1e-10
    Ln = laplacian(W, normalized=True).toarray()
    d = Wd.sum(1)
    np.testing.assert_allclose(Ln, np.eye(30) - Wd / np.sqrt(np.outer(d, d)))


def test_normalized_laplacian_isolated_vertex():
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], float))
    Ln = laplacian(W, normalized=True).toarray()
    np.testing.assert_allclose(Ln[2], 0)
    assert np.all(np.isfinite(Ln))


def test_within_and_between_class_split(rng):
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    Ww, Wb = within_class_graph(X, y, n_neighbors=5), between_class_graph(X, y, n_neighbors=5)
    full = knn_graph(X, 5)
    np.testing.assert_allclose((Ww + Wb).toarray(), full.toarray())
    r, c = Ww.nonzero()
    assert np.all(y[r] == y[c])
    r, c = Wb.nonzero()
    assert np.all(y[r] != y[c])


def test_class_wise_graph(rng):
    X = rng.normal(size=(30, 2))
    y = np.arange(30) % 3
    labeled = np.ones(30, bool)
    labeled[:3] = False
    W = class_wise_graph(X, y, labeled, 3)
    r, c = W.nonzero()
    assert np.all(y[r] == y[c]) and np.all(labeled[r]) and np.all(labeled[c])
    # each class's block equals the kNN graph of that class on its own
    idx = np.flatnonzero(labeled & (y == 1))
    np.testing.assert_allclose(W[idx][:, idx].toarray(), knn_graph(X[idx], 3).toarray())
    with pytest.raises(ValueError, match="class 0 has 9 labeled points"):
        class_wise_graph(X, y, labeled, 9)


def test_precomputed_graph_validation(rng):
    X = rng.normal(size=(10, 2))
    y, lab = np.zeros(10, int), np.ones(10, bool)
    with pytest.raises(ValueError, match="shape"):
        LaplacianPenalty(graph=sp.eye(9, format="csr")).build(X, y, lab)
    asym = sp.csr_matrix(np.triu(np.ones((10, 10)), 1))
    with pytest.raises(ValueError, match="symmetric"):
        LaplacianPenalty(graph=asym).build(X, y, lab)
    neg = -sp.csr_matrix(np.ones((10, 10)))
    with pytest.raises(ValueError, match="negative"):
        LaplacianPenalty(graph=neg).build(X, y, lab)


def test_penalty_sum_and_psd_flag(rng):
    X = rng.normal(size=(20, 2))
    y, lab = np.arange(20) % 2, np.ones(20, bool)
    p = LaplacianPenalty(n_neighbors=3)
    M, psd = build_penalties([(2.0, p), (0.0, PrecomputedPenalty(np.eye(20)))], X, y, lab)
    np.testing.assert_allclose(M.toarray(), 2 * p.build(X, y, lab).toarray())
    assert psd
    _, psd = build_penalties([(1.0, p), (-0.5, LaplacianPenalty(graph="between-class"))], X, y, lab)
    assert not psd
    assert build_penalties([], X, y, lab) == (None, True)
    with pytest.raises(ValueError, match="pair"):
        build_penalties([p], X, y, lab)
    with pytest.raises(ValueError, match="finite"):
        build_penalties([(np.nan, p)], X, y, lab)


def test_heat_width_default_is_mean_squared_edge_length(rng):
    X = rng.normal(size=(25, 2))
    p = LaplacianPenalty(n_neighbors=4, weights="heat")
    W = p.adjacency(X, np.zeros(25, int), np.ones(25, bool))
    r, c = W.nonzero()
    d2 = ((X[r] - X[c]) ** 2).sum(1)
    np.testing.assert_allclose(W.data, np.exp(-d2 / d2.mean()))


# -- issue 19: the graph's own scales (neighbor_scale, scale="volume", LapRLSC's "auto"s) ---------
def test_neighbor_scale_is_the_mean_squared_knn_distance():
    from scipy.spatial.distance import cdist

    from structreg.structure.graphs import knn_graph, neighbor_scale

    X = np.random.default_rng(0).normal(size=(300, 3))
    D2 = cdist(X, X, "sqeuclidean")
    np.fill_diagonal(D2, np.inf)
    exact = np.mean(np.sort(D2, axis=1)[:, :5])
    assert neighbor_scale(X, 5) == pytest.approx(exact, rel=1e-10)
    assert neighbor_scale(X, 5, max_queries=150) == pytest.approx(exact, rel=0.15)  # a sample
    W = knn_graph(X, 4, weights="connectivity")
    rows, cols = W.nonzero()
    assert neighbor_scale(X, W) == pytest.approx(np.mean(D2[rows, cols]), rel=1e-10)


def test_volume_scaled_laplacian_is_the_mean_edge_difference():
    from structreg.structure.graphs import knn_graph

    rng = np.random.default_rng(1)
    X, f = rng.normal(size=(80, 2)), rng.normal(size=80)
    labels, labeled = np.zeros(80, int), np.ones(80, bool)
    L = LaplacianPenalty(n_neighbors=5, scale="volume").build(X, labels, labeled)
    W = knn_graph(X, 5, weights="heat").tocoo()
    mean = np.sum(W.data * (f[W.row] - f[W.col]) ** 2) / (2 * W.data.sum())
    assert f @ (L @ f) == pytest.approx(mean, rel=1e-10)
    with pytest.raises(ValueError, match="scale must be None or 'volume'"):
        LaplacianPenalty(scale="trace").build(X, labels, labeled)


@pytest.mark.parametrize(
    "name, stated, text",
    [
        ("LapRLSC", 0.1 * 120 / 10, "``0.1 (n / l) f^T L f / vol(W)``"),
        ("SSDRWu", 0.1 * 120 / 10, "``0.1 (n / l) f^T L f / vol(W)``"),
        ("LapSVM", 0.1 * 120 / 10, "``0.1 (n / l) f^T L f / vol(W)``"),
    ],
)
def test_laprlsc_auto_weights_are_the_stated_numbers(name, stated, text):
    """``gamma_I="auto"`` is the weight of ``f^T L f / vol(W)`` each docstring states (on
    120 points of which 10 are labeled, ``n / l = 12``)."""
    from sklearn.datasets import make_moons

    import structreg
    from structreg.structure.graphs import knn_graph, neighbor_scale

    cls = getattr(structreg, name)
    assert text in " ".join(cls.__doc__.split())
    X, y = make_moons(120, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(120) < 10, y, -1)
    auto = cls().fit(X, y_semi)
    t = neighbor_scale(X, 6)
    volume = knn_graph(X, 6, weights="heat").sum()
    explicit = cls(gamma=1 / (4 * t), gamma_I=stated * 120**2 / volume).fit(X, y_semi)
    assert auto.feature_map_.gamma == pytest.approx(1 / (4 * t))
    np.testing.assert_allclose(
        auto.decision_function(X), explicit.decision_function(X), rtol=1e-8, atol=1e-10
    )


def test_laprls_regressor_auto_weight_is_the_stated_number():
    """The regressor's ``gamma_I="auto"`` is ``10 f^T L f / vol(W)``, as its docstring says
    (it was not part of the classifiers' defaults suite and keeps the constant weight)."""
    from sklearn.datasets import make_moons

    from structreg import LapRLSRegressor
    from structreg.structure.graphs import knn_graph

    assert "``10 f^T L f / vol(W)``" in " ".join(LapRLSRegressor.__doc__.split())
    X, y = make_moons(120, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(120) < 10, y.astype(float), np.nan)
    volume = knn_graph(X, 6, weights="heat").sum()
    auto = LapRLSRegressor(gamma=1.0, gamma_I="auto").fit(X, y_semi)
    explicit = LapRLSRegressor(gamma=1.0, gamma_I=10 * 120**2 / volume).fit(X, y_semi)
    np.testing.assert_allclose(auto.predict(X), explicit.predict(X), rtol=1e-8, atol=1e-10)


def test_reusing_knn_graphs_searches_each_graph_once(rng, knn_searches):
    from structreg.structure.graphs import reusing_knn_graphs

    X = rng.normal(size=(40, 3))
    y, labeled = (X[:, 0] > 0).astype(int), np.ones(40, bool)
    penalties = [
        LaplacianPenalty(graph, k, "connectivity")
        for k in (3, 5, 8)
        for graph in ("within-class", "between-class")
    ]
    reference = knn_graph(X, 9).toarray()
    searches = knn_searches
    searches.clear()  # (the reference above)
    alone = [p.build(X, y, labeled) for p in penalties]
    assert searches == [4, 4, 6, 6, 9, 9]  # k + 1: the point itself comes first
    searches.clear()
    with reusing_knn_graphs({}):
        shared = [p.build(X, y, labeled) for p in penalties]
        # one search, looking ahead: the other sizes are cut from it, each graph split once
        assert searches == [12]
        W = knn_graph(X, 5)
        W.data[:] = 7.0  # the caller's copy: the kept graph is untouched
        assert knn_graph(X, 5).data.max() == 1.0
        np.testing.assert_array_equal(knn_graph(X, 9).toarray(), reference)  # cut too
        assert searches == [12]
        knn_graph(X.copy(), 5)  # another array: searched again
        assert searches == [12, 18]
    for a, b in zip(alone, shared, strict=True):
        assert (a != b).nnz == 0
    knn_graph(X, 5)  # outside the block nothing is kept
    assert searches == [12, 18, 6]


def test_reused_searches_are_cut_only_where_no_tie_straddles_the_cut(rng, knn_searches):
    from structreg.structure.graphs import knn_indices, reusing_knn_graphs

    # a lattice: many exactly equal distances, so most cuts fall inside a tie
    X = np.array([(i, j) for i in range(6) for j in range(6)], dtype=float)
    Z = rng.normal(size=(50, 4))  # points in general position
    sizes = (2, 3, 4, 6, 11)
    direct = {(id(P), k): knn_graph(P, k).toarray() for P in (X, Z) for k in sizes}
    order = knn_indices(X, 3)
    searches = knn_searches
    searches.clear()  # (the references above)
    with reusing_knn_graphs({}):
        for k in sizes:
            np.testing.assert_array_equal(knn_graph(X, k).toarray(), direct[id(X), k])
        cut_grid = list(searches)
        # ordered neighbours (knn_indices) are never cut from a longer search
        np.testing.assert_array_equal(knn_indices(X, 3), order)
        assert searches[-1] == 4
        searches.clear()
        for k in sizes:
            np.testing.assert_array_equal(knn_graph(Z, k).toarray(), direct[id(Z), k])
    assert cut_grid[0] == 12 and len(cut_grid) > 2  # ambiguous cuts: searched on their own
    # Z: every size from one search looking ahead (k = 11 asks for its 12 columns: itself)
    assert searches == [12]
