"""GFHF, Poisson learning and LapRLSC fitted on a Dask cluster, the data partitioned across
workers.

``GFHF().fit(X, y)`` and ``PoissonLearning().fit(X, y)`` with a ``dask.array`` ``X`` run here
(:meth:`GraphInferenceClassifier.fit <structreg.models.graph_inference.
GraphInferenceClassifier.fit>` hands them over), under the current ``dask.distributed``
client; :func:`fit_on_cluster` does the same for an in-memory ``X`` split into partitions.

- The kNN graph is built on the workers, one block of rows per partition of ``X``
  (:func:`~structreg.structure.distributed_graphs.partitioned_knn_graph`): the same exact
  neighbours, edges and weights as the in-memory graph.
- The system of the estimator (GFHF's harmonic system, Poisson learning's Laplacian system)
  is solved by the one conjugate-gradient routine
  (:func:`~structreg.solvers.cg.conjugate_gradient`), Jacobi-scaled as in memory, whose
  products with the graph run on the workers: each iteration sends the search directions
  (n x columns) to every worker and gathers each block's rows of ``W p``.  The client holds
  vectors of length n; the rows of ``W`` never leave their worker.
- Everything after the solve (the class prior of points no label reaches, class mass
  normalisation, Poisson learning's class-size correction, the tie rule, ``transduction_``)
  is the in-memory estimator's own code, run on those vectors.

What the in-memory fit handles and this one refuses: a precomputed ``graph``; edges so weak
next to their ends' degrees that the in-memory solvers merge or cut them (self-tuning weights
where a tight cluster meets sparse points;
:data:`~structreg.structure.labeled_graph.WEAK_LINK`); a point with ``n_neighbors``
exact copies under self-tuning weights.  Each is a ``ValueError`` that names it.  The solve is
always conjugate gradients (in memory, small or slow systems are factorised instead): the
scores agree to the solve's tolerance.  The fitted estimator holds ``X_`` gathered on the
client (the out-of-sample rule needs it); ``graph_`` is None (the rows of ``W`` were on the
workers and are released after the fit).

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

from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import column_or_1d

from .._numerics import check_representable, far_power_of_two
from ..kernels import LandmarkFeatureMap, internal_map, kernel_diagonal
from ..solvers.cg import conjugate_gradient
from ..solvers.design import ProjectedPenalty, RowDesign
from ..structure.distributed_graphs import (
    PartitionedGraph,
    _client,
    neighbor_scale_on_cluster,
    partitioned_knn_graph,
)
from ..structure.graphs import HEAT_FLOOR
from ..structure.labeled_graph import WEAK_LINK
from ..structure.penalties import checked_terms
from ._base import (
    DEGENERATE_HINT,
    is_dask_collection,
    missing_as_unlabeled,
)
from ._degenerate import warn_if_degenerate
from ._losses import loss_for
from .problem import Problem, string_weights

__all__ = ["fit_manifold_on_cluster", "fit_on_cluster", "is_dask_collection"]


def fit_on_cluster(estimator, X, y, unlabeled=None, *, client=None, n_partitions: int = 2):
    """Fit a GFHF or PoissonLearning ``estimator`` with the graph and its solve on a Dask
    cluster; what ``estimator.fit(X, y, unlabeled)`` does for a ``dask.array`` ``X``.

    Parameters
    ----------
    estimator : GFHF or PoissonLearning
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
        Fitted, with the attributes of the in-memory fit (``graph_`` None, ``solver_``
        ``"cg"``); the warning of unreachable points is the caller's
        (:meth:`~structreg.models.graph_inference.GraphInferenceClassifier.fit` issues it).
    """
    client = _client(client)
    X = _as_dask_array(X, n_partitions)
    estimator._validate_params()
    _check_cluster_fit(estimator)
    X, _ = _checked(estimator, X.astype(float))
    y = _labels(estimator, X, y, unlabeled)
    estimator.classes_, y_codes, labeled = estimator._encode_labels(y, unlabeled)

    edges = partitioned_knn_graph(X, estimator.n_neighbors, client=client)
    fits, graphs = [], []
    with _solving_on_cluster(estimator):
        for weights in estimator._weightings(X.shape[0]):
            for name in ("t_", "local_scale_"):  # a refit with other weights
                estimator.__dict__.pop(name, None)
            estimator.weights_, estimator.X_ = weights, X
            estimator.knn_algorithm_ = "exact"  # every block pair searched exactly
            floor = HEAT_FLOOR if weights == "heat" else 0.0  # as the in-memory graph
            graph = edges.weighted(weights, estimator.t, floor)
            if weights == "self-tuning":
                estimator.local_scale_ = graph.local_scale
            elif weights == "heat":
                estimator.t_ = float(graph.t)
            estimator.graph_ = graph
            estimator._infer(labeled, y_codes, estimator.tol)
            estimator.graph_ = None
            names = estimator._fitted_names()
            fits.append({k: estimator.__dict__[k] for k in names if k in estimator.__dict__})
            graphs.append(graph)
    if len(fits) > 1:  # weights="auto": the labeling that cuts the kNN graph least
        cuts = [graphs[0].normalized_cut(fit["transduction_"]) for fit in fits]
        for name in estimator._fitted_names():
            estimator.__dict__.pop(name, None)
        estimator.__dict__.update(fits[int(np.argmin(cuts))])
    for graph in graphs:
        graph.release()
    estimator.X_ = X.compute()
    estimator.neighbors_ = NearestNeighbors(n_neighbors=min(estimator.n_neighbors, X.shape[0])).fit(
        estimator.X_
    )
    scores = getattr(estimator, estimator._scores_attribute)
    warn_if_degenerate(estimator, scores, labeled, y_codes, estimator._degenerate_hint)
    return estimator


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
    """Refuse what the cluster fit does not do: a precomputed graph, other estimators."""
    if estimator._scores_attribute not in _SYSTEMS:
        raise ValueError(
            f"{type(estimator).__name__} cannot be fitted on a Dask cluster (GFHF and "
            "PoissonLearning can)"
        )
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
# the systems, solved with the products on the workers


@contextmanager
def _solving_on_cluster(estimator):
    """Within the block the estimator's own ``_infer`` solves its system on the cluster:
    ``graph_`` is a :class:`PartitionedGraph` and ``_solve_system`` is this module's."""
    solve = _SYSTEMS[estimator._scores_attribute]
    estimator.__dict__["_solve_system"] = lambda W, labeled, targets, tol: solve(
        estimator, W, labeled, targets
    )  # (the cluster's solve is CG to the estimator's tol)
    try:
        yield
    finally:
        estimator.__dict__.pop("_solve_system", None)
        estimator.graph_ = None


class _ClusterSystem:
    """The checked inputs of a solve on a :class:`PartitionedGraph`: the degrees, the
    connected components and the unlabeled points no label reaches."""

    def __init__(self, graph: PartitionedGraph, labeled: np.ndarray, estimator):
        self.graph, self.labeled = graph, labeled
        self.tol, self.max_iter = estimator.tol, estimator.max_iter
        self.degree = graph.degree()
        if graph.count_weak_edges(self.degree, WEAK_LINK):
            self._check_weak_edges(estimator._scores_attribute == "scores_")
        self.component = graph.components()
        counts = np.bincount(self.component[labeled], minlength=graph.n)
        self.unreachable = ~labeled & (counts[self.component] == 0)

    def _check_weak_edges(self, poisson: bool) -> None:
        """Refuse the weak edges that the in-memory solvers treat apart: weakly joined sets
        without labels (merged into one vertex by GFHF and Poisson learning), and for
        Poisson learning any weakly joined set and weak edges between labeled parts (cut)."""
        weak_sets, labels, apart = self.graph.weakly_joined(self.degree, WEAK_LINK, self.labeled)
        refused = weak_sets if poisson else weak_sets & (labels == 0)
        if refused.any() or (poisson and apart):
            raise ValueError(
                "the graph has edges lighter than "
                f"{WEAK_LINK:.2g} times the degree of their ends that join sets of points "
                "weakly (self-tuning weights where a tight cluster meets sparse points): the "
                "in-memory fit merges or cuts them, the cluster fit does not; use "
                "weights='connectivity' or 'heat', another n_neighbors, or fit in memory"
            )

    def solve(self, rows: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, int]:
        """``X`` with ``(D - W) X = C`` on the vertices ``rows`` (X is 0 on the others), by
        conjugate gradients on the Jacobi-scaled system, the products on the workers; and the
        iterations summed over the columns.  Singular consistent systems (a Laplacian on whole
        components) are solved as in memory: CG stays in the range."""
        n = self.graph.n
        diagonal = self.degree[rows]
        s = (1.0 / np.sqrt(np.where(diagonal > 0, diagonal, 1.0)))[:, None]

        def apply(V: np.ndarray, _) -> np.ndarray:
            full = np.zeros((n, V.shape[1]))
            full[rows] = s * V
            return s * (diagonal[:, None] * full[rows] - self.graph.product(full)[rows])

        cap = 10 * int(rows.sum()) if self.max_iter is None else int(self.max_iter)
        result = conjugate_gradient(apply, s * C, tol=self.tol, max_iter=cap)
        return s * result.x, int(result.column_iter.sum())


def _harmonic_on_cluster(estimator, graph, labeled, targets):
    """GFHF's system (``structreg.models.harmonic``): the harmonic scores of the points
    with a label in their component, the labeled rows clamped; one column fewer solved, as
    the one-of-c rows sum to 1."""
    system = _ClusterSystem(graph, labeled, estimator)
    F, iterations = _harmonic_scores(system, targets)
    return F, system.unreachable, {"method": "cg", "n_iter": iterations}


def _harmonic_scores(system: _ClusterSystem, targets: np.ndarray) -> tuple[np.ndarray, int]:
    labeled, n = system.labeled, system.graph.n
    free = ~labeled & ~system.unreachable
    F = np.full((n, targets.shape[1]), np.nan)
    F[labeled] = targets
    iterations = 0
    if free.any():
        clamped = np.zeros((n, targets.shape[1] - 1))
        clamped[labeled] = targets[:, :-1]
        U, iterations = system.solve(free, system.graph.product(clamped)[free])
        rest = np.clip(1.0 - U.sum(axis=1), 0.0, 1.0)  # in [0, 1], as harmonic functions
        F[free] = np.column_stack([U, rest])
    return F, iterations


def _poisson_on_cluster(estimator, graph, labeled, targets):
    """Poisson learning's system (``structreg.models.poisson``): ``L u = b`` with the
    labeled values minus their component's mean as sources, ``u`` of zero degree-weighted
    mean on every component, one column fewer solved (the rows of ``u`` sum to 0).  With
    ``class_prior="auto"`` also GFHF's scores, which the class-size correction matches."""
    system = _ClusterSystem(graph, labeled, estimator)
    n, comp = graph.n, system.component
    reach = ~system.unreachable
    per_component = sp.csr_matrix(
        (np.ones(int(labeled.sum())), (comp[labeled], np.arange(int(labeled.sum())))),
        shape=(n, int(labeled.sum())),
    )
    label_means = (per_component @ targets) / np.maximum(per_component.sum(axis=1).A, 1)
    sources = np.zeros((n, targets.shape[1]))
    sources[labeled] = targets - label_means[comp[labeled]]
    u, iterations = system.solve(reach, sources[reach][:, :-1])
    volume = np.bincount(comp[reach], weights=system.degree[reach], minlength=n)
    for j in range(u.shape[1]):  # the zero degree-weighted mean of every component
        mass = np.bincount(comp[reach], weights=system.degree[reach] * u[:, j], minlength=n)
        u[:, j] -= (mass / np.where(volume > 0, volume, 1.0))[comp[reach]]
    U = np.full((n, targets.shape[1]), np.nan)
    U[reach] = np.column_stack([u, -u.sum(axis=1)])
    if isinstance(estimator.class_prior, str):  # "auto": matched to Laplace learning's masses
        F, more = _harmonic_scores(system, targets)
        estimator.graph_ = _graph_of_scores(F, labeled, targets)
        iterations += more
    info = {"method": "cg", "n_iter": iterations, "component": comp}
    return U, system.unreachable, info


def _graph_of_scores(F: np.ndarray, labeled: np.ndarray, targets: np.ndarray) -> sp.csr_matrix:
    """A graph whose harmonic scores are ``F``: each unlabeled point joined to one labeled
    point of every class with weight ``F[i, class]`` (its harmonic value is the weighted
    mean of their one-of-c labels, ``F[i]``, as its row sums to 1; a NaN row joins
    nothing).  Poisson learning's class-size correction reads GFHF's scores as
    ``harmonic_function(graph_, ...)``: given this graph it reads those of the cluster."""
    n = F.shape[0]
    present, first = np.unique(np.argmax(targets, axis=1), return_index=True)
    owner = np.flatnonzero(labeled)[first]  # the first labeled point of every class
    rows = np.flatnonzero(~labeled & np.all(np.isfinite(F), axis=1))
    data = F[rows][:, present]
    cols = np.broadcast_to(owner, data.shape)
    r = np.broadcast_to(rows[:, None], data.shape)
    A = sp.csr_matrix((data.ravel(), (r.ravel(), cols.ravel())), shape=(n, n))
    return sp.csr_matrix(A + A.T)


_SYSTEMS = {"label_distributions_": _harmonic_on_cluster, "scores_": _poisson_on_cluster}
"""The system of each estimator, by the attribute of its scores (GFHF, PoissonLearning)."""


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
    estimator._warn_nystroem(unexplained, p)

    Z = RowDesign(
        n,
        p,
        rows=lambda idx: features(edges.point_rows(idx)),
        product=lambda V: np.vstack(_on_blocks(edges, _features_times, features, V, total=False)),
    )
    Z.squared_norm_ = explained
    problem = Problem(
        X=X,
        Z=Z,
        y_codes=y_codes,
        labeled=labeled,
        loss_weights=estimator._fit_weights(labeled, y_codes),
        Y=estimator._targets(y, y_codes, labeled),
        # the projections Phi^T M_k Phi, summed on the workers, stand for the penalties
        penalties=[ProjectedPenalty(n, P) for P in parts],
        psd=[bool(getattr(terms[k][1], "psd", False)) for k in built],
        terms=[penalty for _, penalty in terms],
        built=built,
        fit_intercept=False,
        loo_rows=estimator._loo_rows(y_codes, labeled),
        unexplained=unexplained,
        strict_kinds=string_weights(estimator),
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
