"""The exact kNN searches -- by float32 GEMMs (certified, float64 where not), cell by cell
(dense data with 8-63 features) and by scipy's k-d tree (fewer than 16 features) -- and the
self-tuning graph, against brute-force float64 distances computed here."""

import importlib.util
import sys
import tracemalloc

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics import pairwise_distances

from structreg import _resources
from structreg.structure import graphs
from structreg.structure.graphs import knn_graph, self_tuning_graph


def _brute(X, Q):
    """Squared float64 distances of every query to every point, by differences."""
    return ((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)


def _clustered(n, d, seed=0, offset=0.0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, d)) * 3
    return centres[rng.integers(0, 8, n)] + rng.normal(size=(n, d)) + offset


@pytest.mark.parametrize("offset", [0.0, 1e4])  # far from the origin: the centring matters
def test_gemm_search_is_the_exact_search(offset):
    X = _clustered(600, 70, offset=offset)
    Q = np.vstack([X[:50], _clustered(40, 70, seed=1, offset=offset)])  # own points and new
    ind, dist = graphs._gemm_indices(X, Q, 9, return_distance=True)
    D2 = _brute(X, Q)
    expected = np.argsort(D2, axis=1, kind="stable")[:, :9]
    np.testing.assert_array_equal(ind, expected)
    np.testing.assert_allclose(dist, np.sqrt(np.take_along_axis(D2, expected, 1)), rtol=1e-12)


def test_gemm_search_with_duplicates_and_ties(monkeypatch):
    rng = np.random.default_rng(2)
    base = rng.integers(0, 3, size=(150, 64)).astype(float)  # lattice points: many ties
    X = np.vstack([base, base[:40]])  # and exact duplicates
    fallback = []
    original = graphs._library_indices

    def spy(X, Q, k, *args):
        fallback.append(Q.shape[0])
        return original(X, Q, k, *args)

    monkeypatch.setattr(graphs, "_library_indices", spy)
    ind, dist = graphs._gemm_indices(X, X, 6, return_distance=True)
    D2 = _brute(X, X)
    # the kept distances are the 6 smallest of each row, nearest first (tied indices may be
    # any of the tied points)
    np.testing.assert_allclose(dist**2, np.sort(D2, axis=1)[:, :6], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.take_along_axis(D2, ind, 1), dist**2, rtol=1e-12)
    assert all(len(set(row)) == 6 for row in ind)
    assert fallback, "ties straddling the cut go to the reference search"


def test_gemm_search_tiles_and_blocks(monkeypatch, memory_budget):
    """Small tiles and blocks (several column tiles merged, the sampled threshold of wide rows)
    give the same answer as one tile."""
    X = _clustered(900, 64, seed=3)
    whole = graphs._gemm_indices(X, X, 7)
    monkeypatch.setattr(graphs, "GEMM_SAMPLE_STRIDE", 4)
    memory_budget(8 * 400 * 512)  # tiles of 400 points, blocks of 512 (or 256) query rows
    assert _resources.gemm_tile_columns() == 400
    np.testing.assert_array_equal(graphs._gemm_indices(X, X, 7), whole)  # 65-point blocks
    np.testing.assert_array_equal(graphs._gemm_indices(X, X.copy(), 7), whole)  # as queries
    expected = np.argsort(_brute(X, X), axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(whole, expected)


def test_top_m_keeps_the_largest():
    rng = np.random.default_rng(4)
    V = rng.normal(size=(30, 5000)).astype(np.float32)
    idx, val = graphs._top_m(V, 12)  # wide rows: the sampled threshold
    np.testing.assert_array_equal(np.sort(idx, axis=1), np.sort(np.argsort(-V, 1)[:, :12], 1))
    np.testing.assert_array_equal(val, np.take_along_axis(V, idx, 1))


def test_knn_graph_takes_the_gemm_path_with_the_same_result(monkeypatch):
    X = _clustered(700, 80, seed=5)
    calls = []
    original = graphs._gemm_indices

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(graphs, "_gemm_indices", spy)
    monkeypatch.setattr(graphs, "GEMM_MIN_PAIRS", 0)
    W = knn_graph(X, 8, weights="heat", algorithm="exact")
    assert calls
    monkeypatch.setattr(graphs, "GEMM_MIN_PAIRS", np.inf)
    reference = knn_graph(X, 8, weights="heat", algorithm="exact")  # scikit-learn's search
    assert len(calls) == 1
    assert (W != reference).nnz == 0


def test_gemm_search_has_no_n_by_n_array():
    n = 12_000
    X = _clustered(n, 64, seed=6)
    assert graphs._gemm_applies(X, X)
    tracemalloc.start()
    try:
        ind = graphs._gemm_indices(X, X, 11)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ind.shape == (n, 11)
    assert peak < 100e6 < n * n * 4, f"peak traced memory {peak / 1e6:.0f} MB"


def test_self_tuning_graph_weights():
    X = _clustered(200, 3, seed=7)
    X[1] = X[0]  # a duplicate
    W, sigma = self_tuning_graph(X, 5)
    D2 = _brute(X, X)
    np.fill_diagonal(D2, np.inf)
    kth = np.sort(D2, axis=1)[:, 4]  # the 5th nearest other point
    np.testing.assert_allclose(sigma, np.sqrt(kth), rtol=1e-12)
    pattern = knn_graph(X, 5).toarray() != 0  # the union of both directions
    np.testing.assert_array_equal(W.toarray() != 0, pattern)
    expected = np.exp(-4 * D2 / np.outer(sigma, sigma))
    np.testing.assert_allclose(W.toarray()[pattern], expected[pattern], rtol=1e-12)
    assert abs(W - W.T).max() == 0 and W.diagonal().sum() == 0 and W.has_sorted_indices


def test_self_tuning_scale_of_duplicated_points():
    X = np.array([[0.0], [0.0], [0.0], [1.0], [3.0]])
    W, sigma = self_tuning_graph(X, 2)
    # points 0-2 have two duplicates (sigma 0): they take the smallest positive scale, 1
    np.testing.assert_array_equal(sigma, [1.0, 1.0, 1.0, 1.0, 3.0])
    assert W[0, 1] == 1.0 and np.all(np.isfinite(W.data))


# -- the cell search and the k-d tree --------------------------------------------------------


def _brute_k(X, Q, k):
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
    tree = _spy(monkeypatch, "_library_indices")
    ind, dist = graphs._exact_indices(X, X, 9, return_distance=True)
    ref_ind, ref_dist = _brute_k(X, X, 9)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-10, atol=1e-12)
    # clustered data are searched by the cells alone; one blob hands most queries to the tree
    assert (sum(tree) == 0) == (spread > 0)


def test_cell_search_of_new_queries_and_graph(rng, small_cells):
    X = _mixture(rng, 1200, 12)
    Q = _mixture(np.random.default_rng(5), 300, 12) + 0.5
    ind = graphs._exact_indices(X, Q, 5)
    np.testing.assert_array_equal(ind, _brute_k(X, Q, 5)[0])
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
    ref_ind, ref_dist = _brute_k(X, X, 5)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, atol=1e-12)


# -- the approximate search: faiss' calibrated inverted file ---------------------------------


def _faiss():
    return pytest.importorskip("faiss", reason="faiss-cpu (the optional extra 'ann') is absent")


def _recall(X, ind, k):
    """Share of every point's k nearest other points (exact, ties counted) found in ``ind``."""
    found = []
    for start in range(0, X.shape[0], 500):
        rows = np.arange(start, min(start + 500, X.shape[0]))
        D = cdist(X[rows], X)
        D[np.arange(rows.size), rows] = np.inf
        kth = np.partition(D, k - 1, axis=1)[:, k - 1]
        found.append(np.take_along_axis(D, ind[rows], 1) <= kth[:, None] * (1 + 1e-9))
    return np.mean(np.vstack(found))


def test_ivf_search_reaches_the_recall_target_on_a_hard_mixture(rng):
    """Full-rank Gaussian blobs in 40-d (the hardest case: high intrinsic dimension)."""
    _faiss()
    X = _mixture(rng, 5000, 40, blobs=12)
    ind = graphs.knn_indices(X, 8, algorithm="approximate")
    assert ind.shape == (5000, 8) and not np.any(ind == np.arange(5000)[:, None])
    assert all(len(set(row)) == 8 for row in ind)
    info = graphs.IVF_LAST
    assert isinstance(info["nprobe"], int) and info["nprobe"] < info["nlist"] / 4
    assert info["sample_recall"] >= graphs.IVF_RECALL
    assert _recall(X, ind, 8) >= 0.99
    # reproducible: a seeded sample and k-means
    np.testing.assert_array_equal(graphs.knn_indices(X, 8, algorithm="approximate"), ind)


def test_ivf_search_counts_ties_and_duplicates(rng):
    _faiss()
    base = _mixture(rng, 1500, 20)
    X = np.vstack([base, base[:300]])  # 300 points twice
    ind = graphs.knn_indices(X, 5, algorithm="approximate")
    assert not np.any(ind == np.arange(X.shape[0])[:, None])
    assert graphs.IVF_LAST["sample_recall"] >= graphs.IVF_RECALL
    assert _recall(X, ind, 5) >= 0.99


def test_ivf_search_gives_way_to_the_exact_search(rng, monkeypatch):
    """A recall that would need more than IVF_MAX_SHARE of the cells: the exact search."""
    _faiss()
    X = rng.uniform(size=(3000, 24))  # no clusters
    monkeypatch.setattr(graphs, "IVF_RECALL", 1.01)  # never reached
    ind = graphs._ivf_indices(X, 7)
    assert graphs.IVF_LAST["nprobe"] == "exact"
    np.testing.assert_array_equal(ind, graphs._exact_indices(X, X, 7))


def test_ivf_search_repairs_rows_short_of_neighbours(rng, monkeypatch):
    """Cells of a few points probed one at a time: rows short of neighbours (-1) are searched
    exactly."""
    _faiss()
    X = _mixture(rng, 2000, 16, blobs=12)
    monkeypatch.setattr(graphs, "IVF_LISTS", 1e6)  # as many cells as allowed: n / (2 k)
    monkeypatch.setattr(graphs, "IVF_FIRST_PROBE", 1)
    monkeypatch.setattr(graphs, "IVF_RECALL", 0.0)  # take the first nprobe
    repaired = []
    original = graphs._exact_indices

    def spy(X, Q, k, *args, **kwargs):
        repaired.append(Q.shape[0])
        return original(X, Q, k, *args, **kwargs)

    monkeypatch.setattr(graphs, "_exact_indices", spy)
    ind = graphs._ivf_indices(X, 30)
    assert graphs.IVF_LAST["nprobe"] == 1 and len(repaired) == 2  # the sample, the repair
    assert np.all(ind >= 0) and all(len(set(row)) == 30 for row in ind)


def test_approximate_engine_and_fallbacks(rng, monkeypatch):
    X = _mixture(rng, 400, 12)
    big = np.empty((graphs.APPROX_MIN_SAMPLES, graphs.APPROX_MIN_FEATURES))
    engines = []
    monkeypatch.setattr(graphs, "_ivf_indices", lambda X, k: engines.append("faiss") or 0)
    monkeypatch.setattr(graphs, "_nndescent_indices", lambda X, k: engines.append("nnd") or 0)
    # each engine where installed, then without it (`import` of a None module fails)
    for module, tag in (("faiss", "faiss"), ("pynndescent", "nnd")):
        if importlib.util.find_spec(module) is not None:
            assert graphs._approximate_engine() == module
            assert graphs.resolve_algorithm(big, "auto") == "approximate"
            graphs._approximate_indices(X, 5)
            assert engines[-1] == tag
        monkeypatch.setitem(sys.modules, module, None)
    assert graphs._approximate_engine() is None
    assert graphs.resolve_algorithm(big, "auto") == "exact"  # "auto" never needs the extra
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "faiss", None)
    monkeypatch.setitem(sys.modules, "pynndescent", None)
    with pytest.raises(ImportError, match=r"structreg\[ann\]"):
        graphs.knn_indices(X, 3, algorithm="approximate")


def test_estimator_says_which_search_it_used(rng, monkeypatch):
    from structreg.models import GFHF

    X = _mixture(rng, 700, 20)
    y = np.full(700, -1)
    y[::7] = np.arange(100) % 2  # a label in every blob
    assert GFHF().fit(X, y).knn_algorithm_ == "exact"
    monkeypatch.setattr(graphs, "APPROX_MIN_SAMPLES", 500)
    expected = "exact" if graphs._approximate_engine() is None else "approximate"
    searched = []
    original = graphs._approximate_indices
    monkeypatch.setattr(
        graphs, "_approximate_indices", lambda X, k: searched.append(k) or original(X, k)
    )
    assert GFHF().fit(X, y).knn_algorithm_ == expected
    assert bool(searched) == (expected == "approximate")


def test_ivf_search_checks_the_recall_on_a_second_sample(rng, monkeypatch):
    """The nprobe that first passes on the calibration sample is taken only when the second
    sample passes too: here the check fails once (a recall of 0), so the search goes on to
    the next setting, where both pass; the recorded recalls are the last measured."""
    _faiss()
    X = _mixture(rng, 5000, 16, blobs=12)
    monkeypatch.setattr(graphs, "IVF_RECALL", 0.0)  # every setting passes, unless made to fail
    calls = []
    original = graphs._sample_recall

    def failing_once(X, queries, found, ref_dist, own=None):
        per_query = original(X, queries, found, ref_dist, own=own)
        calls.append(queries.shape[0])
        return per_query - 2.0 if len(calls) == 2 else per_query  # the first check fails

    monkeypatch.setattr(graphs, "_sample_recall", failing_once)
    ind = graphs._ivf_indices(X, 8)
    info = graphs.IVF_LAST
    first = graphs.IVF_FIRST_PROBE
    assert info["nprobe"] == int(np.ceil(first * 1.5))  # one setting beyond the first
    assert len(calls) == 4 and calls[0] == calls[1] == info["sample"] == 1000
    assert 0 < info["check_recall"] <= 1 and info["check_recall"] != info["sample_recall"]
    assert ind.shape == (5000, 8) and np.all(ind >= 0)


def test_self_search_computes_each_pair_once_with_the_same_result(monkeypatch, memory_budget):
    """The symmetric self-search (upper tiles, thresholds from a sample) finds what the
    query-by-query search and brute force find, also over several tiles and row blocks, and
    gives way to the query-by-query search where it would keep too many products."""
    X = _clustered(1000, 66, seed=8)
    used = []
    original = graphs._self_candidates

    def spy(*args, **kwargs):
        found = original(*args, **kwargs)
        used.append(found is not None)
        return found

    monkeypatch.setattr(graphs, "_self_candidates", spy)
    expected = np.argsort(_brute(X, X), axis=1, kind="stable")[:, :10]
    ind, dist = graphs._gemm_indices(X, X, 10, return_distance=True)
    assert used == [True]
    np.testing.assert_array_equal(ind, expected)
    np.testing.assert_array_equal(graphs._gemm_indices(X, X.copy(), 10), expected)  # queries
    memory_budget(8 * 300 * 512)  # tiles of 300 points: several tiles per row block
    np.testing.assert_array_equal(graphs._gemm_indices(X, X, 10), expected)
    monkeypatch.setattr(graphs, "SELF_MAX_KEPT", 0)  # too many kept: query by query
    np.testing.assert_array_equal(graphs._gemm_indices(X, X, 10), expected)
    assert used == [True, True, False]


def test_searches_take_their_threads_from_the_one_limiter(monkeypatch):
    """``set_config(threads=...)`` reaches the GEMM search's workers, the cell search's and
    the tree's; the neighbours do not depend on it."""
    import structreg

    X = _clustered(1200, 64, seed=9)
    runs = []
    original_run = graphs._run

    def run(func, starts, threads):
        runs.append(threads)
        return original_run(func, starts, threads)

    monkeypatch.setattr(graphs, "_run", run)
    monkeypatch.setattr(_resources, "available_cpus", lambda: 2)
    with structreg.config_context(threads=1):
        one = graphs._gemm_indices(X, X, 8), graphs._gemm_indices(X, X[:300].copy(), 8)
    assert runs and set(runs) == {1}
    runs.clear()
    with structreg.config_context(threads=2):
        two = graphs._gemm_indices(X, X, 8), graphs._gemm_indices(X, X[:300].copy(), 8)
    assert set(runs) == {2}
    runs.clear()
    default = graphs._gemm_indices(X, X, 8)
    assert set(runs) == {2}  # None: every CPU (2 here)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(default, one[0])

    workers = []

    class Tree(graphs.cKDTree):
        def query(self, *args, **kwargs):
            workers.append(kwargs.get("workers"))
            return super().query(*args, **kwargs)

    monkeypatch.setattr(graphs, "cKDTree", Tree)
    monkeypatch.setattr(graphs, "PARALLEL_MIN_QUERIES", 0)
    P = _clustered(500, 3, seed=10)
    with structreg.config_context(threads=1):
        tree_one = graphs._library_indices(P, P, 5)
    with structreg.config_context(threads=2):
        tree_two = graphs._library_indices(P, P, 5)
    assert workers == [1, 2]
    np.testing.assert_array_equal(tree_one, tree_two)
