"""GFHF, Poisson learning and LapRLSC fitted on a Dask cluster (structreg.models.distributed)
against the in-memory fit: the same kNN graph, the same labels, scores (decision values) to
1e-8.

The suite's LocalCluster of 2 worker processes (``dask_scheduler`` in conftest.py) serves
the module through one client.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.datasets import make_blobs, make_moons

distributed = pytest.importorskip("distributed", reason="the Dask fit needs dask.distributed")
da = pytest.importorskip("dask.array")

import structreg  # noqa: E402
from structreg._numerics import far_power_of_two  # noqa: E402
from structreg.models import GFHF, LapRLSC, PoissonLearning  # noqa: E402
from structreg.models import distributed as cluster_fit  # noqa: E402
from structreg.models.graph_inference import DisconnectedGraphWarning  # noqa: E402
from structreg.structure.distributed_graphs import (  # noqa: E402
    neighbor_scale_on_cluster,
    partitioned_knn_graph,
)
from structreg.structure.graphs import (  # noqa: E402
    HEAT_FLOOR,
    knn_graph,
    neighbor_scale,
    self_tuning_graph,
)
from structreg.structure.labeled_graph import WEAK_LINK  # noqa: E402

TOL = 1e-12  # of both solves: the scores then agree to 1e-8


@pytest.fixture(scope="module")
def client(dask_scheduler):
    """A client of the suite's LocalCluster (2 worker processes, 1 thread each)."""
    with distributed.Client(dask_scheduler) as c:
        yield c


def few_labels(y, per_class, seed=0):
    rng = np.random.default_rng(seed)
    out = np.full_like(y, -1)
    for k in np.unique(y):
        out[rng.choice(np.flatnonzero(y == k), per_class, replace=False)] = k
    return out


def moons(n=400):
    X, y = make_moons(n, noise=0.12, random_state=0)  # one graph component
    return X, y, few_labels(y, 3)


def blobs():  # three overlapping classes in 3-D, one graph component
    X, y = make_blobs(450, centers=3, n_features=3, cluster_std=2.5, random_state=1)
    return X, y, few_labels(y, 4)


def chunked(X, sizes):
    return da.from_array(X, chunks=(tuple(sizes), X.shape[1]))


def assert_same_fit(memory, cluster, X):
    scores = memory._scores_attribute
    assert cluster.weights_ == memory.weights_
    assert cluster.knn_algorithm_ == memory.knn_algorithm_ == "exact"
    np.testing.assert_array_equal(cluster.classes_, memory.classes_)
    assert cluster.n_features_in_ == memory.n_features_in_
    np.testing.assert_allclose(getattr(cluster, scores), getattr(memory, scores), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(cluster.transduction_, memory.transduction_)
    np.testing.assert_array_equal(cluster.unreachable_, memory.unreachable_)
    new = X + 0.01
    np.testing.assert_array_equal(cluster.predict(new), memory.predict(new))
    assert cluster.solver_ == "cg" and cluster.n_iter_ >= 1 and cluster.graph_ is None
    restored = pickle.loads(pickle.dumps(cluster))  # nothing of the cluster is kept
    np.testing.assert_array_equal(restored.predict(new), memory.predict(new))


# -- the graph --------------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", [(200, 200), (100, 145, 150, 5)])
def test_the_partitioned_graph_is_the_in_memory_graph(client, sizes):
    X, _, _ = moons()
    X = np.vstack([X[:394], X[:3], X[:3]])  # points with copies (fewer than n_neighbors)
    edges = partitioned_knn_graph(chunked(X, sizes), 7)
    W, sigma = self_tuning_graph(X, 7)
    W.eliminate_zeros()
    np.testing.assert_array_equal(edges.local_scale, sigma)
    for weights, expected in [
        ("self-tuning", W),
        ("heat", knn_graph(X, 7, weights="heat")),
        ("connectivity", knn_graph(X, 7)),
    ]:
        got = edges.weighted(weights).gather()
        if weights == "heat":  # and with the floor of GFHF and Poisson learning
            floored = edges.weighted(weights, t=1e-3, floor=HEAT_FLOOR).gather()
            reference = knn_graph(X, 7, weights="heat", t=1e-3)
            assert (reference.data < HEAT_FLOOR).any()
            np.testing.assert_array_equal(floored.indices, reference.indices)
            np.testing.assert_allclose(
                floored.data, np.maximum(reference.data, HEAT_FLOOR), rtol=1e-12, atol=0
            )
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-12, atol=0)


def test_components_and_cut_are_those_of_the_gathered_graph(client):
    X, y = make_blobs(300, centers=[[0, 0], [30, 0], [0, 30]], random_state=0)
    graph = partitioned_knn_graph(chunked(X, (120, 100, 80)), 5).weighted("connectivity")
    found = graph.components()
    W = graph.gather()
    n, expected = connected_components(W, directed=False)
    assert n == 3
    pairs = {(a, b) for a, b in zip(found, expected, strict=True)}
    assert len(pairs) == 3  # the same partition of the vertices
    labels = np.where(X[:, 0] > 10, "b", "a")
    from structreg.structure.labeled_graph import normalized_cut

    assert graph.normalized_cut(labels) == pytest.approx(normalized_cut(W, labels), rel=1e-12)


def test_one_estimator_code_path_for_both_graph_holders():
    """The cluster fit is the estimator's own fit on a graph held on the workers: no
    second copy of the systems in models.distributed, no method replaced on an instance,
    the weak-edge threshold the in-memory one."""
    import structreg.structure.distributed_graphs as held

    assert held.WEAK_LINK is WEAK_LINK
    for gone in ("_ClusterSystem", "_harmonic_on_cluster", "_poisson_on_cluster", "_SYSTEMS"):
        assert not hasattr(cluster_fit, gone)
    assert not hasattr(cluster_fit, "WEAK_LINK")


# -- the estimators ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, sizes",
    [(moons, (170, 130, 100)), (blobs, (100, 150, 120, 80))],
)
@pytest.mark.parametrize("Estimator", [GFHF, PoissonLearning])
def test_the_cluster_fit_is_the_in_memory_fit(client, data, sizes, Estimator):
    X, _, y = data()
    memory = Estimator(tol=TOL).fit(X, y)
    cluster = Estimator(tol=TOL).fit(chunked(X, sizes), y)
    assert_same_fit(memory, cluster, X)


def test_two_thousand_points(client):
    X, _, y = moons(2000)
    memory = PoissonLearning(tol=TOL).fit(X, y)
    cluster = PoissonLearning(tol=TOL).fit(chunked(X, (700, 700, 600)), y)
    assert_same_fit(memory, cluster, X)


@pytest.mark.parametrize(
    "Estimator, params",
    [
        (GFHF, {"class_mass_normalization": True, "weights": "self-tuning"}),
        (GFHF, {"weights": "connectivity", "n_neighbors": 10}),
        (PoissonLearning, {"class_prior": None}),
        (PoissonLearning, {"class_prior": [0.3, 0.7], "weights": "heat"}),
    ],
)
def test_other_settings(client, Estimator, params):
    X, _, y = moons(400)
    memory = Estimator(tol=TOL, **params).fit(X, y)
    cluster = Estimator(tol=TOL, **params).fit(chunked(X, (250, 150)), y)
    assert_same_fit(memory, cluster, X)


def test_string_labels_a_dask_y_and_an_in_memory_x_on_the_cluster(client):
    X, _, y = moons(400)
    names = np.array(["left", "right"], dtype=object)
    y_str = np.where(y >= 0, names[np.maximum(y, 0)], None)
    memory = PoissonLearning(tol=TOL).fit(X, y_str)
    cluster = PoissonLearning(tol=TOL).fit(chunked(X, (200, 200)), y_str)
    assert_same_fit(memory, cluster, X)
    model = GFHF(weights="heat", tol=TOL)
    on_cluster = cluster_fit.fit_on_cluster(model, X, da.from_array(y), n_partitions=3)
    assert_same_fit(GFHF(weights="heat", tol=TOL).fit(X, y), on_cluster, X)


def test_floored_heat_weights_as_in_memory(client):
    """Five far points, fewer than n_neighbors, joined to the moons only by edges whose heat
    weight underflows: both fits raise them to HEAT_FLOOR, reach the far points and agree."""
    X, _, y = moons(400)
    X = np.vstack([X, np.random.default_rng(0).normal(size=(5, 2)) * 0.05 + [30.0, 30.0]])
    y = np.r_[y, np.full(5, -1)]
    memory = GFHF(weights="heat", t=0.05, tol=TOL).fit(X, y)
    assert memory.graph_.data.min() == HEAT_FLOOR and not memory.unreachable_.any()
    cluster = GFHF(weights="heat", t=0.05, tol=TOL).fit(chunked(X, (200, 205)), y)
    assert_same_fit(memory, cluster, X)


def test_points_no_label_reaches_get_the_prior_as_in_memory(client):
    X, y = make_blobs(300, centers=[[0, 0], [40, 0], [0, 40]], random_state=0)
    y = few_labels(y, 3)
    y[(X[:, 1] > 20) & (y >= 0)] = -1  # the third blob without labels
    for Estimator in (GFHF, PoissonLearning):
        with pytest.warns(DisconnectedGraphWarning):
            memory = Estimator(tol=TOL).fit(X, y)
        with pytest.warns(DisconnectedGraphWarning):
            cluster = Estimator(tol=TOL).fit(chunked(X, (150, 150)), y)
        assert cluster.unreachable_.sum() == 100
        assert_same_fit(memory, cluster, X)


# -- what the cluster fit refuses -------------------------------------------------------------


def test_an_empty_partition(client):
    X, _, y = moons(200)
    memory = GFHF(weights="connectivity", tol=TOL).fit(X, y)
    uneven = GFHF(weights="connectivity", tol=TOL).fit(chunked(X, (120, 0, 80)), y)
    assert_same_fit(memory, uneven, X)


def test_a_dask_dataframe(client):
    dd = pytest.importorskip("dask.dataframe")  # needs pyarrow
    pd = pytest.importorskip("pandas")
    X, _, y = moons(200)
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b"]), npartitions=2)
    memory = GFHF(weights="connectivity", tol=TOL).fit(X, y)
    assert_same_fit(memory, GFHF(weights="connectivity", tol=TOL).fit(frame, y), X)


def test_a_precomputed_graph_is_refused(client):
    X, _, y = moons(200)
    W = knn_graph(X, 7)
    with pytest.raises(ValueError, match="graph must be 'knn'"):
        GFHF(graph=W).fit(chunked(X, (100, 100)), y)


def test_blocks_of_unknown_size_are_refused(client):
    X, _, y = moons(200)
    unknown = chunked(X, (100, 100))[da.from_array(np.ones(200, dtype=bool), chunks=100)]
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        GFHF().fit(unknown, y)


def test_weak_edges_are_refused(client):
    rng = np.random.default_rng(0)
    tight = rng.normal(scale=0.05, size=(40, 2))  # a tight cluster among sparse points
    sparse = rng.uniform(-6, 6, size=(60, 2))
    X = np.vstack([tight, sparse])
    W, _ = self_tuning_graph(X, 7)
    degree = np.asarray(W.sum(axis=1)).ravel()
    C = sp.coo_matrix(W)
    assert np.any(C.data < WEAK_LINK * np.maximum(degree[C.row], degree[C.col]))
    y = np.full(100, -1)
    y[[0, 1, 50, 51]] = [0, 0, 1, 1]
    with pytest.raises(ValueError, match="join sets of points"):
        PoissonLearning().fit(chunked(X, (50, 50)), y)


def test_points_with_n_neighbors_copies_are_refused_with_self_tuning_weights(client):
    X, _, y = moons(200)
    X = np.vstack([X, np.repeat(X[:1], 8, axis=0)])
    y = np.concatenate([y, np.full(8, -1)])
    with pytest.raises(ValueError, match="exact copies"):
        PoissonLearning().fit(chunked(X, (104, 104)), y)
    memory = GFHF(weights="heat", tol=TOL).fit(X, y)  # heat weights take them
    assert_same_fit(memory, GFHF(weights="heat", tol=TOL).fit(chunked(X, (104, 104)), y), X)


# -- LapRLSC: Nystroem features, Phi^T L Phi summed on the workers ------------------------------


def assert_same_laprlsc(memory, cluster, X):
    """The same model: decision values to 1e-8, the same labels and probabilities."""
    new = X + 0.01
    assert cluster.solver_ == "nystroem"
    np.testing.assert_array_equal(cluster.classes_, memory.classes_)
    assert cluster.feature_map_.gamma_ == pytest.approx(memory.feature_map_.gamma_, rel=1e-12)
    np.testing.assert_array_equal(cluster.feature_map_.basis_, memory.feature_map_.basis_)
    np.testing.assert_allclose(cluster.coef_, memory.coef_, rtol=0, atol=1e-8)
    decision = memory.decision_function(new)
    np.testing.assert_allclose(cluster.decision_function(new), decision, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(cluster.predict(new), memory.predict(new))
    np.testing.assert_array_equal(cluster.transduction_, memory.transduction_)
    proba = memory.predict_proba(new)
    np.testing.assert_allclose(cluster.predict_proba(new), proba, rtol=0, atol=1e-8)
    unexplained = memory.solver_info_.get("unexplained_trace", 0.0)
    assert cluster.solver_info_["unexplained_trace"] == pytest.approx(unexplained, abs=1e-12)
    restored = pickle.loads(pickle.dumps(cluster))  # nothing of the cluster is kept
    np.testing.assert_allclose(restored.decision_function(new), decision, rtol=0, atol=1e-8)


def test_laprlsc_on_the_cluster_is_the_in_memory_nystroem_fit(client):
    """Also with the workers' memory budget so small that every block forms its
    neighbours' features in runs of 43 rows."""
    X, _, y = moons(400)
    params = {"solver": "nystroem", "n_components": 150, "random_state": 0}
    memory = LapRLSC(**params).fit(X, y)
    cluster = LapRLSC(**params).fit(chunked(X, (170, 130, 100)), y)
    assert_same_laprlsc(memory, cluster, X)
    budget = structreg.get_config()["working_memory"]
    client.run(structreg.set_config, working_memory=0.05)  # 52 kB: 43 rows of 150 features
    try:
        small = LapRLSC(**params).fit(chunked(X, (170, 130, 100)), y)
    finally:
        client.run(structreg.set_config, working_memory=budget)
    assert_same_laprlsc(memory, small, X)


def test_laprlsc_default_on_the_cluster_is_the_in_memory_default(client):
    """Up to n_components points every point is a centre: the Nystroem features span the
    kernel's, the objective is the exact kernel's and the cluster fit is the in-memory
    default (solver "dense" there)."""
    X, _, y = moons(400)
    memory = LapRLSC().fit(X, y)
    assert memory.solver_ == "dense"
    assert_same_laprlsc(memory, LapRLSC().fit(chunked(X, (250, 150)), y), X)


@pytest.mark.parametrize(
    "params",
    [
        {"class_weight": "balanced", "gamma_I": 1e-2},
        {"normalized": True, "weights": "connectivity", "kernel": "poly", "degree": 2},
    ],
)
def test_laprlsc_other_settings_string_labels_and_a_dask_y(client, params):
    X, _, y = blobs()
    names = np.array(["a", "b", "c"], dtype=object)
    y = np.where(y >= 0, names[np.maximum(y, 0)], None)
    params = {"solver": "nystroem", "n_components": 120, "random_state": 1, **params}
    memory = LapRLSC(**params).fit(X, y)
    cluster = LapRLSC(**params).fit(chunked(X, (100, 150, 200)), da.from_array(y, chunks=150))
    assert_same_laprlsc(memory, cluster, X)


def test_the_neighbour_scale_of_copies_and_many_points(client):
    """gamma="graph": over 1000 distinct points a fixed sample of queries, copies of a point
    counted once; the width is the in-memory one."""
    X, _, y = moons(1100)
    X = np.vstack([X, X[:20], X[:3]]) * 1e5  # copies, and far from unit scale
    y = np.concatenate([y, np.full(23, -1)])
    edges = partitioned_knn_graph(chunked(X, (500, 623)), 6, keep_blocks=True)
    s = far_power_of_two(np.abs(X).max())  # what neighbor_scale divides X by
    assert s > 1 and neighbor_scale_on_cluster(edges, 6, s) == neighbor_scale(X, 6)
    params = {"solver": "nystroem", "n_components": 100, "random_state": 0}
    memory = LapRLSC(**params).fit(X, y)
    assert_same_laprlsc(memory, LapRLSC(**params).fit(chunked(X, (500, 623)), y), X)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"solver": "dense"}, "solver='dense'"),
        ({"graph": "class-wise"}, "graph must be 'knn'"),
        ({"kernel": "linear"}, "kernel='linear'"),
        ({"weights": "dot"}, "weights='dot'"),
        ({"metric": "cosine"}, "metric='cosine'"),
        ({"centers": "k-means++"}, "centers='k-means\\+\\+'"),
        ({"fit_intercept": True}, "fit_intercept=True"),
        ({"gamma_A": 0.0}, "gamma_A=0"),
    ],
)
def test_what_the_laprlsc_cluster_fit_refuses(client, params, message):
    X, _, y = moons(100)
    with pytest.raises(ValueError, match=f"cannot be fitted on a Dask cluster with {message}"):
        LapRLSC(**params).fit(chunked(X, (50, 50)), y)


def test_the_cluster_fit_reads_the_penalty_terms_once(client):
    """The Dask fit builds its penalty terms once: the problem it assembles keeps the
    model's Setting, which the loss reads (as in memory, ``tests/test_penalty_terms_once.py``)."""

    class Counting(LapRLSC):
        calls = 0

        def _penalty_terms(self, n_samples, n_labeled):
            type(self).calls += 1
            return super()._penalty_terms(n_samples, n_labeled)

    X, _, y = moons(200)
    model = Counting(solver="nystroem", n_components=50, random_state=0)
    model.fit(chunked(X, (120, 80)), y)
    assert model.solver_ == "nystroem" and Counting.calls == 1
