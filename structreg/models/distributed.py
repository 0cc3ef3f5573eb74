"""GFHF, Poisson learning and LapRLSC fitted on a Dask cluster, the data partitioned across
workers: what is about distribution (partitioning, checks run on the cluster, the graph held
on the workers, gathering).

``GFHF().fit(X, y)`` and ``PoissonLearning().fit(X, y)`` with a ``dask.array`` ``X`` take
the estimator's one fit (:meth:`GraphInferenceClassifier.fit
<structreg.models.graph_inference.GraphInferenceClassifier.fit>`), under the current
``dask.distributed`` client; :func:`fit_on_cluster` does the same for an in-memory ``X``
split into partitions.  Two steps differ, and live here:

- :func:`checked_on_cluster`: the data checks of the in-memory fit, computed on the cluster
  (finite, representable, not all one point; labels as in memory).
- :func:`cluster_graphs`: the kNN graph built on the workers, one block of rows per
  partition of ``X`` (:func:`~structreg.structure.distributed_graphs.partitioned_knn_graph`):
  the same exact neighbours, edges and weights as the in-memory graph, as
  :class:`~structreg.structure.graphs.WeightedGraph` s holding a
  :class:`~structreg.structure.distributed_graphs.PartitionedGraph`.

The systems are the in-memory ones (:mod:`structreg.solvers.laplace`) on the labeled graph
that the partitioned graph gives
(:class:`~structreg.structure.distributed_graphs.PartitionedLabeledGraph`): its Laplacian
blocks are operators whose products run on the workers (each CG iteration sends the search
directions, n x columns, to every worker and gathers each block's rows of ``W p``), so the
solve is Jacobi-scaled conjugate gradients; the client holds vectors of length n, the rows of
``W`` never leave their worker.  Everything else (the class prior of points no label
reaches, class mass normalisation, Poisson learning's class-size correction and its harmonic
solve, the tie rule, ``weights="auto"``'s cut) is the estimator's own code.

What the in-memory fit handles and this one refuses: a precomputed ``graph``; edges so weak
next to their ends' degrees that the in-memory solvers merge or cut them (self-tuning weights
where a tight cluster meets sparse points;
:data:`~structreg.structure.labeled_graph.WEAK_LINK`); a point with ``n_neighbors``
exact copies under self-tuning weights.  Each is a ``ValueError`` that names it.  The
scores agree with the in-memory fit's to the solve's tolerance.  The fitted estimator holds
``X_`` gathered on the client (the out-of-sample rule needs it); ``graph_`` is None (the
rows of ``W`` were on the workers and are released after the fit).

``LapRLSC().fit(X, y)`` with a ``dask.array`` ``X`` runs :func:`fit_manifold_on_cluster`:
the in-memory Nystroem fit, whose sufficient statistics are small.  The workers build the
same kNN graph, measure ``gamma="graph"``'s neighbour scale, and sum ``Phi^T L Phi`` (m x m)
over the blocks, each block reading the points of its neighbours in other blocks; the client
gathers the centres, the labeled points, the degrees and that m x m matrix, and solves the
normal equations by the in-memory solver (the same functions, the same fitted attributes),
then the workers compute the outputs at the training points (``transduction_``).  Only
vectors of length n, the labeled rows and m x m matrices reach the client.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import column_or_1d

from .._numerics import check_representable, far_power_of_two
from ..kernels import LandmarkFeatureMap, internal_map, kernel_diagonal
from ..solvers.design import ProjectedPenalty, RowDesign
from ..structure.distributed_graphs import (
    PartitionedGraph,
    _client,
    neighbor_scale_on_cluster,
    partitioned_knn_graph,
)
from ..structure.graphs import HEAT_FLOOR, SELF_TUNING_FLOOR, WeightedGraph
from ..structure.penalties import checked_terms
from ._base import (
    DEGENERATE_HINT,
    is_dask_collection,
    missing_as_unlabeled,
)
from ._degenerate import warn_if_degenerate
from ._losses import loss_for
from ._nystroem_rows import warn_nystroem

__all__ = ["fit_manifold_on_cluster", "fit_on_cluster", "is_dask_collection"]


def fit_on_cluster(estimator, X, y, unlabeled=None, *, client=None, n_partitions: int = 2):
    """Fit a GFHF or PoissonLearning ``estimator`` on a Dask cluster, ``X`` partitioned.

    The estimator's own ``fit`` with ``X`` as a dask array (an in-memory ``X`` is split into
    ``n_partitions`` blocks of rows first), run with ``client`` as the current client.

    Parameters
    ----------
    estimator : GFHF or PoissonLearning
    X : dask array, dask DataFrame or array-like of shape (n_samples, n_features)
    y : array-like or dask array of shape (n_samples,)
        Labels; unlabeled samples as for ``fit``.
    unlabeled : array-like of bool, shape (n_samples,), optional
    client : distributed.Client or None
        None: the current client.
    n_partitions : int, default=2
        Blocks of an in-memory ``X``.

    Returns
    -------
    estimator
        Fitted, with the attributes of the in-memory fit (``graph_`` None, ``solver_``
        ``"cg"``).
    """
    if not hasattr(estimator, "_solve_system"):
        raise ValueError(
            f"{type(estimator).__name__} cannot be fitted on a Dask cluster by fit_on_cluster "
            "(GFHF and PoissonLearning can; LapRLSC fits a dask array itself)"
        )
    client = _client(client)
    X = _as_dask_array(X, n_partitions)
    with client.as_current():
        return estimator.fit(X, y, unlabeled)


def checked_on_cluster(estimator, X, y, unlabeled) -> tuple:
    """``(X, y)``: the dask collection ``X`` as a dask array of floats, rows chunked, checked
    on the cluster as the in-memory fit checks its data (finite, representable, not one
    point; a precomputed ``graph`` refused), and the labels (a dask ``y`` computed, missing
    labels as unlabeled, one per row); sets ``n_features_in_``."""
    X = _as_dask_array(X, 1)
    _check_cluster_fit(estimator)
    X, _ = _checked(estimator, X.astype(float))
    return X, _labels(estimator, X, y, unlabeled)


def cluster_graphs(
    X, n_neighbors: int, weightings: tuple[str, ...], t: float | None
) -> list[WeightedGraph]:
    """The kNN graph of the dask array ``X`` with each of ``weightings``, held on the
    workers (:func:`~structreg.structure.distributed_graphs.partitioned_knn_graph`, one
    search; every weighting read from the same edges and lengths), as the in-memory
    :func:`~structreg.structure.graphs.weighted_knn_graphs` gives them (heat weights
    floored at ``HEAT_FLOOR``, self-tuning ones at ``SELF_TUNING_FLOOR``; unlike the
    in-memory graph, a point's local scale here counts its copies as neighbours)."""
    edges = partitioned_knn_graph(X, n_neighbors, client=_client(None))
    graphs = []
    for weights in weightings:
        floor = {"heat": HEAT_FLOOR, "self-tuning": SELF_TUNING_FLOOR}.get(weights, 0.0)
        graph = edges.weighted(weights, t, floor)
        graphs.append(
            WeightedGraph(
                graph,
                weights,
                t=float(graph.t) if weights == "heat" else None,
                local_scale=graph.local_scale if weights == "self-tuning" else None,
            )
        )
    return graphs


def _as_dask_array(X, n_partitions: int):
    """``X`` as a dask array: a dask DataFrame's values, an in-memory array split into
    ``n_partitions`` blocks of rows."""
    import dask.array as da

    if hasattr(X, "to_dask_array"):  # a dask DataFrame
        X = X.to_dask_array(lengths=True)
    if not is_dask_collection(X):
        X = np.asarray(X, dtype=float)
        X = da.from_array(X, chunks=(-(-X.shape[0] // max(1, int(n_partitions))), -1))
    return X


def _labels(estimator, X, y, unlabeled) -> np.ndarray:
    """The labels of a cluster fit as the in-memory fit checks them (a dask ``y`` computed,
    missing labels as unlabeled, one per row of X); sets ``n_features_in_``."""
    y = np.asarray(y.compute()) if is_dask_collection(y) else y
    y = missing_as_unlabeled(y, unlabeled)
    y = column_or_1d(np.asarray(y) if not hasattr(y, "dtype") else y, warn=True)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]} labels")
    estimator.n_features_in_ = X.shape[1]
    estimator.__dict__.pop("feature_names_in_", None)
    return y


def _check_cluster_fit(estimator) -> None:
    """Refuse what the cluster fit does not do: a precomputed graph."""
    if not (isinstance(estimator.graph, str) and estimator.graph == "knn"):
        raise ValueError(
            "a fit on a dask array builds its kNN graph on the cluster: graph must be 'knn', "
            "not a precomputed matrix (fit X.compute() in memory to use one)"
        )
    estimator._check_width()


def _checked(estimator, X) -> tuple:
    """``(X, max|X|)``: ``X`` (rows chunked, all columns in one chunk) after the in-memory
    fit's checks of the values, computed on the cluster: finite, squares representable, not
    all one point."""
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
    if np.isnan(X.shape[0]):
        raise ValueError("X has row blocks of unknown sizes; call X.compute_chunk_sizes() first")
    rows = tuple(size for size in X.chunks[0] if size != 0)  # empty blocks dropped
    X = X.rechunk((rows, X.shape[1]))
    finite, low, high = da.compute(da.isfinite(X).all(), X.min(axis=0), X.max(axis=0))
    owner = type(estimator).__name__
    if not finite:
        raise ValueError(f"{owner}: X contains NaN or infinity")
    check_representable(np.vstack([low, high]), owner)
    if X.shape[0] > 1 and np.all(low == high):
        raise ValueError(
            f"{owner}: X has zero variance: all {X.shape[0]} samples are the same point, so "
            "there is nothing to learn from"
        )
    return X, float(max(np.max(high), -np.min(low))) if X.shape[0] else 0.0


# ---------------------------------------------------------------------------------------------
# LapRLSC: Nystroem features, the Laplacian's projection summed on the workers


def fit_manifold_on_cluster(estimator, X, y, unlabeled=None, *, client=None, n_partitions=2):
    """Fit a LapRLSC ``estimator`` on a Dask cluster, ``X`` partitioned across the workers;
    what ``estimator.fit(X, y, unlabeled)`` does for a ``dask.array`` ``X``.

    The model is the in-memory Nystroem fit (``solver="nystroem"``, which ``"auto"`` picks
    beyond ``AUTO_DENSE_MAX`` points): features ``Phi = phi(X)`` on ``n_components``
    centres drawn as in memory, and the normal equations ``(Phi_l^T C Phi_l + gamma_A I + w
    Phi^T M Phi) theta = Phi_l^T C Y`` with ``M`` the kNN graph's Laplacian.  The workers
    build the exact kNN graph
    (:func:`~structreg.structure.distributed_graphs.partitioned_knn_graph`), the kernel
    width of ``gamma="graph"``
    (:func:`~structreg.structure.distributed_graphs.neighbor_scale_on_cluster`) and the m x m
    projection ``Phi^T M Phi`` summed over the blocks
    (:meth:`~structreg.structure.distributed_graphs.PartitionedGraph.laplacian_gram`: every
    block forms its rows of ``M Phi`` from its edges
    and from the points of its neighbours in other blocks).  The client gathers the centres
    and the labeled points, that projection, the degrees and the outputs at the training
    points (vectors of length n), and solves the m x m system by the in-memory solver
    (:class:`~structreg.solvers.SquareLossPath`), leverages, calibration and all; the fitted
    attributes are those of the in-memory fit.

    Parameters
    ----------
    estimator : LapRLSC
    X : dask.array.Array or array-like of shape (n_samples, n_features)
        A dask array's row chunks are the partitions; an in-memory array is split into
        ``n_partitions`` blocks of rows (and sent to the cluster).
    y : array-like of shape (n_samples,)
        Labels, ``-1`` (``None`` for string labels) or missing where unlabeled; a dask array
        is computed.
    unlabeled : array-like of bool, shape (n_samples,), optional
    client : distributed.Client or None
        None: the current client.
    n_partitions : int, default=2
        Blocks of an in-memory ``X``.

    Returns
    -------
    estimator
        Fitted (``solver_`` ``"nystroem"``).
    """
    client = _client(client)
    X = _as_dask_array(X, n_partitions)
    estimator._validate_params()
    _check_manifold_fit(estimator)
    X, extent = _checked(estimator, X.astype(float))
    y = _labels(estimator, X, y, unlabeled)
    y_codes, labeled = estimator._start_fit(y, unlabeled)
    estimator.solver_ = "nystroem"
    estimator.loss_ = loss_for(estimator, "nystroem")

    edges = partitioned_knn_graph(X, estimator.n_neighbors, client=client, keep_blocks=True)
    fmap = estimator.feature_map_ = _feature_map(estimator, edges, X, extent)
    features = _Features(fmap)
    n, p = X.shape[0], fmap.n_components_
    terms = checked_terms(estimator._penalty_terms(n, int(labeled.sum())))
    built = [k for k, (w, _) in enumerate(terms) if w != 0]
    parts, explained = [], None
    if built:
        graph = edges.weighted(estimator.weights, estimator.t)
        degree = graph.degree()
        graph.release()  # the workers form the rows of W again from the edges, block by block
        for k in built:
            P, explained = graph.laplacian_gram(features, degree, **_laplacian(terms[k][1], degree))
            parts.append(P)
    if explained is None:
        explained = _on_blocks(edges, _squared_norm, features)
    unexplained = _unexplained(edges, fmap, explained)
    warn_nystroem(estimator, unexplained, p)

    Z = RowDesign(
        n,
        p,
        rows=lambda idx: features(edges.point_rows(idx)),
        product=lambda V: np.vstack(_on_blocks(edges, _features_times, features, V, total=False)),
    )
    Z.squared_norm_ = explained
    # the projections Phi^T M_k Phi, summed on the workers, stand for the penalties
    problem = estimator._assembled_problem(
        X,
        Z,
        y,
        y_codes,
        labeled,
        terms,
        built,
        [ProjectedPenalty(n, P) for P in parts],
        fit_intercept=False,
        loo_rows=estimator._loo_rows(y_codes, labeled),
        unexplained=unexplained,
    )
    fitted = estimator.loss_.fit_grid(problem, [estimator])[0]
    fitted = estimator._finish_fit(problem, fitted, None)
    warn_if_degenerate(estimator, fitted, labeled, y_codes, DEGENERATE_HINT)
    estimator._calibrate(None, y, unlabeled, problem)
    return estimator


def _check_manifold_fit(estimator) -> None:
    """Refuse what the cluster fit of LapRLSC does not do, naming it."""
    name = type(estimator).__name__
    refusals = [
        (
            estimator.solver not in ("auto", "nystroem"),
            f"solver={estimator.solver!r}: the cluster fit solves on Nystroem centres "
            "(solver 'nystroem', which 'auto' picks on a cluster)",
        ),
        (
            not (isinstance(estimator.graph, str) and estimator.graph == "knn"),
            "graph must be 'knn' (a precomputed or class-wise graph is built in memory only)",
        ),
        (
            estimator.kernel in ("linear", "precomputed"),
            f"kernel={estimator.kernel!r}: the cluster fit maps the points to Nystroem "
            "features of a kernel ('rbf', 'poly' or a callable)",
        ),
        (
            estimator.weights not in ("heat", "connectivity"),
            f"weights={estimator.weights!r}: the cluster graph has 'heat' and 'connectivity' "
            "weights",
        ),
        (
            estimator.metric != "euclidean",
            f"metric={estimator.metric!r}: the cluster graph is Euclidean",
        ),
        (
            estimator.centers != "uniform",
            f"centers={estimator.centers!r}: the cluster fit draws its centres uniformly",
        ),
        (estimator.fit_intercept, "fit_intercept=True: the cluster fit has no intercept"),
        (
            not estimator.gamma_A > 0,
            "gamma_A=0: the cluster fit needs a ridge (gamma_A > 0)",
        ),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{name} cannot be fitted on a Dask cluster with {why}; fit in memory")


def _feature_map(estimator, edges: PartitionedGraph, X, extent: float):
    """The estimator's Nystroem map (``_make_feature_map``: the centres drawn as in memory),
    fitted on its centres: ``gamma="graph"`` reads the neighbour scale measured on the
    workers, ``gamma="scale"`` the variance of X computed by Dask."""
    memo: dict = {}
    if estimator.gamma == "graph" and estimator.kernel == "rbf":  # what _kernel_gamma reads
        scale = neighbor_scale_on_cluster(edges, estimator.n_neighbors, far_power_of_two(extent))
        memo["neighbor_scale", estimator.n_neighbors] = scale
    fmap = internal_map(estimator._make_feature_map(_PointsOnCluster(edges, X.shape), memo))
    if type(fmap) is not LandmarkFeatureMap:  # pragma: no cover - refused before
        raise ValueError(f"the cluster fit needs Nystroem features, got {type(fmap).__name__}")
    gamma = fmap.gamma
    if gamma == "scale" and not callable(fmap.kernel):  # (the map's kernel is not linear)
        fmap.gamma = _scale_gamma(X, extent)
    fmap.fit_landmarks(fmap.landmarks)  # (gamma numeric: the landmarks only checked)
    fmap.gamma = gamma
    return fmap


def _scale_gamma(X, extent: float) -> float:
    """``gamma="scale"`` of X (:func:`~structreg.kernels.resolve_gamma`), the variance
    computed by Dask on X divided by its far power of two."""
    s = far_power_of_two(extent)
    var = float((X / s).var().compute()) if s != 1.0 else float(X.var().compute())
    if not var > 0:
        return 1.0
    return 1.0 / (X.shape[1] * var) / s / s


class _PointsOnCluster:
    """The training points as ``_make_feature_map`` reads them: their number, and rows by
    index (the centres), gathered from the workers."""

    def __init__(self, edges: PartitionedGraph, shape: tuple):
        self.edges, self.shape = edges, shape

    def __getitem__(self, idx) -> np.ndarray:
        return self.edges.point_rows(idx)


class _Features:
    """``phi(X)`` of a fitted Nystroem map, sent to the workers with the client's Cholesky
    factor (a map's pickle leaves it out and refactors: the same features to rounding, these
    to the bit)."""

    def __init__(self, fmap):
        self.fmap, self.factor = fmap, fmap.cholesky_factor_

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.fmap.cholesky_factor_ = self.factor  # (set before anything rebuilds it)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.fmap._map(np.asarray(X, dtype=float))

    def trace(self, X: np.ndarray) -> float:
        """``sum_i k(x_i, x_i)``."""
        f = self.fmap
        diag = kernel_diagonal(X, kernel=f.kernel, gamma=f.gamma_, degree=f.degree, coef0=f.coef0)
        return float(diag.sum())


def _laplacian(penalty, degree: np.ndarray) -> dict:
    """The arguments of :meth:`PartitionedGraph.laplacian_gram` for a LaplacianPenalty: the
    normalisation, and the volume ``scale="volume"`` divides by (the trace of L, as
    :func:`~structreg.structure.penalties.scaled_laplacian` takes it)."""
    volume = None
    if penalty.scale == "volume":
        volume = float((degree > 0).astype(float).sum() if penalty.normalized else degree.sum())
        if not volume > 0:
            raise ValueError("scale='volume' needs a graph with at least one weighted edge")
    return {"normalized": bool(penalty.normalized), "volume": volume}


def _squared_norm(points: np.ndarray, features: _Features) -> float:
    F = features(points)
    return float(np.einsum("ij,ij->", F, F))


def _features_times(points: np.ndarray, features: _Features, V: np.ndarray) -> np.ndarray:
    return features(points) @ V


def _trace(points: np.ndarray, features: _Features) -> float:
    return features.trace(points)


def _on_blocks(edges: PartitionedGraph, func, *args, total: bool = True):
    """``func(points, *args)`` on every block's worker: their sum (``total``), or the list."""
    client = edges.client
    spread = [client.scatter(a, broadcast=True, hash=False) for a in args]
    found = client.gather([client.submit(func, x, *spread, pure=False) for x in edges.points])
    return float(np.sum(found)) if total else found


def _unexplained(edges: PartitionedGraph, fmap, explained: float) -> float:
    """``unexplained_trace_`` of the map over the training points (as
    :meth:`~structreg.kernels.LandmarkFeatureMap.set_explained` sets it), the kernel's trace
    summed on the workers."""
    trace = _on_blocks(edges, _trace, _Features(fmap))
    fmap.unexplained_trace_ = max(0.0, 1.0 - explained / trace) if trace > 0 else 0.0
    return fmap.unexplained_trace_
