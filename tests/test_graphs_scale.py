"""kNN graphs for large n: exact vs approximate (faiss / pynndescent) search, symmetrisation,
memory.

The tests that run pynndescent share one numba JIT compilation per process (about a minute
of CPU the first time in a process; every later call takes well under a second).
"""

import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise_distances

from structreg.structure import LaplacianPenalty, graphs, knn_graph


def _mixture(n, d, seed=0, n_components=8):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(n_components, d))
    return centers[rng.integers(n_components, size=n)] + rng.normal(size=(n, d))


def _brute_union(X, k):
    """Reference: i ~ j iff j among the k nearest of i or i among the k nearest of j."""
    D = pairwise_distances(X)
    np.fill_diagonal(D, np.inf)
    A = np.zeros(D.shape, dtype=bool)
    np.put_along_axis(A, np.argsort(D, axis=1, kind="stable")[:, :k], True, axis=1)
    return A | A.T, D


def _pattern(W):
    return {(int(i), int(j)) for i, j in zip(*W.nonzero(), strict=True)}


@pytest.fixture(scope="module")
def needs_pynndescent():
    pytest.importorskip("pynndescent")


def test_unknown_algorithm_names_the_allowed_values(rng):
    X = rng.normal(size=(30, 3))
    with pytest.raises(ValueError, match="'auto', 'exact' or 'approximate', got 'annoy'"):
        knn_graph(X, 3, algorithm="annoy")
    with pytest.raises(ValueError, match="'auto', 'exact' or 'approximate'"):
        LaplacianPenalty(algorithm="fast").build(X, np.zeros(30, int), np.ones(30, bool))


def test_approximate_without_pynndescent_names_the_extra(rng, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynndescent", None)  # `import pynndescent` now fails
    monkeypatch.setitem(sys.modules, "faiss", None)  # and so does the other engine's
    X = rng.normal(size=(50, 4))
    with pytest.raises(ImportError, match=r"structreg\[ann\]"):
        knn_graph(X, 3, algorithm="approximate")
    # "auto" never needs it: above the thresholds it falls back to the exact search
    monkeypatch.setattr(graphs, "APPROX_MIN_SAMPLES", 10)
    monkeypatch.setattr(graphs, "APPROX_MIN_FEATURES", 2)
    assert graphs.resolve_algorithm(X, "auto") == "exact"


def test_auto_rule_and_exact_result_below_the_threshold(rng):
    X = _mixture(600, 20)
    assert 600 < graphs.APPROX_MIN_SAMPLES
    assert graphs.resolve_algorithm(X, "auto") == "exact"
    auto, exact = (
        knn_graph(X, 7, weights="heat"),
        knn_graph(X, 7, weights="heat", algorithm="exact"),
    )
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(auto, name), getattr(exact, name))
    # the rule itself: both thresholds, dense input only
    big = np.empty((graphs.APPROX_MIN_SAMPLES, graphs.APPROX_MIN_FEATURES))
    low_d = np.empty((graphs.APPROX_MIN_SAMPLES, graphs.APPROX_MIN_FEATURES - 1))
    few = np.empty((graphs.APPROX_MIN_SAMPLES - 1, 10 * graphs.APPROX_MIN_FEATURES))
    # the k-d tree regime: fewer features, more samples
    tree_big = np.empty((graphs.TREE_APPROX_MIN_SAMPLES, graphs.TREE_APPROX_MIN_FEATURES))
    tree_low_d = np.empty(
        (10 * graphs.TREE_APPROX_MIN_SAMPLES, graphs.TREE_APPROX_MIN_FEATURES - 1)
    )
    tree_few = np.empty((graphs.TREE_APPROX_MIN_SAMPLES - 1, graphs.TREE_APPROX_MIN_FEATURES))
    assert graphs.TREE_APPROX_MIN_FEATURES < graphs.APPROX_MIN_FEATURES
    for exact_case in (low_d, few, tree_low_d, tree_few, sp.csr_matrix((10, 10))):
        assert graphs.resolve_algorithm(exact_case, "auto") == "exact"
    try:
        import pynndescent  # noqa: F401
    except ImportError:
        expected = "exact"
    else:
        expected = "approximate"
    assert graphs.resolve_algorithm(big, "auto") == expected
    assert graphs.resolve_algorithm(tree_big, "auto") == expected
    assert graphs.resolve_algorithm(big, "exact") == "exact"


@pytest.mark.parametrize("weights", ["connectivity", "heat", "dot"])
def test_symmetrised_pattern_is_the_union_of_both_directions(rng, weights):
    X = rng.normal(size=(150, 5))
    X[1] = X[0]  # a duplicate: self may hide behind it
    W = knn_graph(X, 6, weights=weights, t=0.9, algorithm="exact")
    A, D = _brute_union(X, 6)
    np.testing.assert_array_equal(W.toarray() != 0, A)
    assert W.has_sorted_indices and abs(W - W.T).max() == 0 and W.diagonal().sum() == 0
    expected = {"connectivity": np.ones_like(D), "heat": np.exp(-(D**2) / 0.9), "dot": X @ X.T}
    np.testing.assert_allclose(W.toarray()[A], expected[weights][A], rtol=1e-12)
    # not symmetrised: exactly the directed lists
    Wd = knn_graph(X, 6, symmetrize=False, algorithm="exact")
    ind = graphs.knn_indices(X, 6, algorithm="exact")
    assert _pattern(Wd) == {(i, int(j)) for i in range(150) for j in ind[i]}


def test_pair_values_do_not_depend_on_the_chunking(rng, memory_budget):
    X = rng.normal(size=(400, 6))
    W = knn_graph(X, 5, weights="heat")
    memory_budget(7)  # the smallest chunks: 1024 pairs
    W2 = knn_graph(X, 5, weights="heat")
    np.testing.assert_array_equal(W.data, W2.data)


@pytest.mark.parametrize("n, d", [(20_000, 2), (12_000, 20)])  # k-d tree; chunked brute force
def test_no_dense_n_by_n_array(monkeypatch, n, d):
    """An n x n float64 array would take n*n*8 bytes (3.2 GB, 1.15 GB); numpy allocations are
    traced, and scikit-learn's full pairwise-distance routines may not run at all."""
    import sklearn.metrics.pairwise as pw

    def forbidden(*args, **kwargs):
        raise AssertionError("a full pairwise distance matrix was requested")

    for name in ("pairwise_distances", "euclidean_distances", "pairwise_kernels"):
        monkeypatch.setattr(pw, name, forbidden)
    X = _mixture(n, d, seed=1)
    tracemalloc.start()
    try:
        W = knn_graph(X, 10, weights="heat", algorithm="exact")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert W.shape == (n, n) and W.nnz >= n * 10
    # O(n k) arrays plus fixed-size chunks of per-edge temporaries (about 40 MB)
    assert peak < 100e6 < n * n * 8, f"peak traced memory {peak / 1e6:.0f} MB"


def test_approximate_graph_recall_and_properties(needs_pynndescent):
    X = _mixture(2000, 20)
    exact = knn_graph(X, 10, weights="heat", algorithm="exact")
    approx = knn_graph(X, 10, weights="heat", algorithm="approximate")
    found = _pattern(exact) & _pattern(approx)
    recall = len(found) / exact.nnz
    assert recall >= 0.9, recall
    assert approx.shape == (2000, 2000) and approx.has_sorted_indices
    assert abs(approx - approx.T).max() == 0
    assert approx.diagonal().sum() == 0 and np.all(approx.data > 0)
    # heat weights computed exactly from X, with the mean squared edge length as width
    r, c = approx.nonzero()
    d2 = np.sum((X[r] - X[c]) ** 2, axis=1)
    np.testing.assert_allclose(approx[r, c].A1, np.exp(-d2 / d2.mean()), rtol=1e-12)
    # every point keeps at least its 10 (approximate) neighbours; the pattern is their union
    ind = graphs.knn_indices(X, 10, algorithm="approximate")
    assert ind.shape == (2000, 10) and not np.any(ind == np.arange(2000)[:, None])
    directed = {(i, int(j)) for i in range(2000) for j in ind[i]}
    assert _pattern(approx) == directed | {(j, i) for i, j in directed}
    # reproducible (fixed random_state)
    again = knn_graph(X, 10, weights="heat", algorithm="approximate")
    assert (again != approx).nnz == 0


def test_auto_above_the_threshold_is_approximate(needs_pynndescent, monkeypatch):
    X = _mixture(500, 20, seed=2)
    monkeypatch.setattr(graphs, "APPROX_MIN_SAMPLES", 100)
    monkeypatch.setattr(graphs, "APPROX_MIN_FEATURES", 10)
    auto = knn_graph(X, 6, algorithm="auto")
    approx = knn_graph(X, 6, algorithm="approximate")
    assert (auto != approx).nnz == 0


def test_laplacian_penalty_approximate_is_psd_with_zero_row_sums(needs_pynndescent):
    X = _mixture(300, 12, seed=3)
    X[5] = X[4]  # duplicate points stay off the diagonal
    y = (X[:, 0] > X[:, 0].mean()).astype(int)
    labeled = np.ones(300, bool)
    pen = LaplacianPenalty(n_neighbors=8, algorithm="approximate")
    assert pen.get_params()["algorithm"] == "approximate"
    W = pen.adjacency(X, y, labeled)
    assert W.diagonal().sum() == 0 and abs(W - W.T).max() == 0
    L = pen.build(X, y, labeled).toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    np.testing.assert_array_equal(L, L.T)
    assert np.linalg.eigvalsh(L).min() > -1e-10
    # the class-wise graph searches each class with the same algorithm
    Lc = LaplacianPenalty(graph="class-wise", n_neighbors=5, algorithm="approximate")
    Mc = Lc.build(X, y, labeled).toarray()
    np.testing.assert_allclose(Mc.sum(axis=1), 0, atol=1e-12)
    r, c = np.nonzero(Lc.adjacency(X, y, labeled))
    assert np.all(y[r] == y[c])
