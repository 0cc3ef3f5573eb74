"""The exact neighbour searches behind ``knn_graph``: the cell-by-cell search of dense data with
8-63 features (``_cell_indices``) and the k-d tree of fewer features (scipy's cKDTree) give the
neighbours, order and distances of a brute-force search, ties by index."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics import pairwise_distances

from structreg.structure import graphs


def _brute(X, Q, k):
    D = cdist(Q, X)  # differences, not |x|^2 - 2 x.y + |y|^2: duplicates at exactly 0
    ind = np.argsort(D, axis=1, kind="stable")[:, :k]  # ties by index
    return ind, np.take_along_axis(D, ind, axis=1)


def _mixture(rng, n, d, blobs=6, spread=4.0):
    centres = rng.normal(size=(blobs, d)) * spread
    return centres[rng.integers(0, blobs, n)] + rng.normal(size=(n, d))


@pytest.fixture
def small_cells(monkeypatch):
    """Cell search from 500 points on, with cells of about 40 points."""
    monkeypatch.setattr(graphs, "CELL_MIN_SAMPLES", 500)
    monkeypatch.setattr(graphs, "CELL_POINTS", 40)
    monkeypatch.setattr(graphs, "CELL_PILOT", 4)


def _spy(monkeypatch, name):
    calls = []
    original = getattr(graphs, name)

    def spy(*args, **kwargs):
        calls.append(args[1].shape[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(graphs, name, spy)
    return calls


@pytest.mark.parametrize("spread", [4.0, 0.0])  # clustered (prunes), one blob (gives up)
def test_cell_search_equals_brute_force(rng, small_cells, monkeypatch, spread):
    X = _mixture(rng, 1500, 10, spread=spread)
    X[7] = X[3]  # duplicates: ties by index
    X[900] = X[3]
    assert graphs._cells_apply(X, X, 9)
    tree = _spy(monkeypatch, "_sklearn_indices")
    ind, dist = graphs._exact_indices(X, X, 9, return_distance=True)
    ref_ind, ref_dist = _brute(X, X, 9)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-10, atol=1e-12)
    # clustered data are searched by the cells alone; one blob hands most queries to the tree
    assert (sum(tree) == 0) == (spread > 0)


def test_cell_search_of_new_queries_and_graph(rng, small_cells):
    X = _mixture(rng, 1200, 12)
    Q = _mixture(np.random.default_rng(5), 300, 12) + 0.5
    ind = graphs._exact_indices(X, Q, 5)
    np.testing.assert_array_equal(ind, _brute(X, Q, 5)[0])
    W = graphs.knn_graph(X, 6, weights="connectivity", algorithm="exact")
    D = pairwise_distances(X)
    np.fill_diagonal(D, np.inf)
    A = np.zeros(D.shape, dtype=bool)
    np.put_along_axis(A, np.argsort(D, axis=1, kind="stable")[:, :6], True, axis=1)
    np.testing.assert_array_equal(W.toarray() != 0, A | A.T)


def test_cell_search_prunes_clustered_data(rng, small_cells, monkeypatch):
    """Well-separated clusters: far fewer query-point pairs than brute force."""
    X = _mixture(rng, 3000, 10, blobs=12, spread=8.0)
    pairs = []
    original = graphs._gemm_indices

    def count(P, Q, *args, **kwargs):
        pairs.append(P.shape[0] * Q.shape[0])
        return original(P, Q, *args, **kwargs)

    monkeypatch.setattr(graphs, "_gemm_indices", count)
    graphs._exact_indices(X, X, 8)
    assert sum(pairs) < 0.3 * X.shape[0] ** 2


def test_tree_search_orders_ties_by_index(rng):
    X = np.repeat(rng.normal(size=(40, 3)), 3, axis=0)  # every point three times
    ind, dist = graphs._exact_indices(X, X, 5, return_distance=True)
    ref_ind, ref_dist = _brute(X, X, 5)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, atol=1e-12)
