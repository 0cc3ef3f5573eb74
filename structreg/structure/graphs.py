"""k-nearest-neighbour graphs and their Laplacians (scipy.sparse throughout).

A graph here is a symmetric sparse adjacency matrix ``W`` (CSR, float64, zero diagonal)
over the training points.  Edges follow the usual manifold-regularisation convention:
``i ~ j`` when ``j`` is among the k nearest neighbours of ``i`` *or* ``i`` among those of
``j`` (so ``W = max(W_knn, W_knn^T)``).

Edge weights (``weights=``):

* ``"connectivity"``: 1 on every edge;
* ``"heat"``: ``exp(-||x_i - x_j||^2 / t)`` (heat kernel of width ``t``);
* ``"dot"``: ``<x_i, x_j>`` (use on unit-norm data for cosine similarity; may be negative
  for general data, which a Laplacian penalty then does not keep PSD).

Label-aware variants split a kNN graph into its *within-class* part (both ends labeled
with the same class) and *between-class* part (both ends labeled, different classes), as
DRLSC/LDR do; :func:`class_wise_graph` instead connects each labeled point to its k nearest
neighbours *of its own class* (the supervised "MR" construction).

Scale: neighbours, connectivity and heat weights with ``t=None`` do not depend on the scale of
X.  Data far from unit scale (:func:`~structreg._numerics.far_scale`) are searched and
weighted divided by a power of two ``s`` (exact), with a given heat width ``t`` read as
``t / s^2`` and dot weights multiplied by ``s^2``; the graphs are those of the data at unit
scale, also where the squared distances of X itself would over- or underflow.  A width or dot
weight float64 cannot represent is a ValueError.

Neighbour search (``algorithm=``) and cost
------------------------------------------
No function here forms an n x n array; memory is O(n k) plus the search structure.  The
timings and recalls behind the choices below are on the benchmarks page of the documentation
(``docs/benchmarks.md``, "Neighbour search").

``"exact"``
    Dense data with fewer than 16 features: scipy's :class:`~scipy.spatial.cKDTree` (ties put
    in index order); from 8 features and 20,000 points on, first the cell search below.
    Otherwise :class:`sklearn.neighbors.NearestNeighbors` with its own ``algorithm="auto"``
    (brute force from 16 features; a k-d tree for sparse input of fewer).

    *Cell search* (:func:`_cell_indices`, dense data with 8-63 features and at least
    ``CELL_MIN_SAMPLES`` points): the points are split among about ``n / 256`` k-means
    centres; the queries of one cell are searched exactly (:func:`_gemm_indices`) among the
    cells nearest its centre, and the distance of their k-th neighbour there rules out, by
    the triangle inequality, every cell whose ball lies beyond it; the cells left are
    searched next.  Clustered data are searched within their own cluster, a small share of
    the pairs of brute force; where a pilot of ``CELL_PILOT`` cells would keep more than
    ``CELL_GIVE_UP`` of the pairs (uniform data, one blob), the tree or brute-force search
    takes the rest.

    scikit-learn's own search, for the record: brute force never holds the n x n
    distance matrix either (read in scikit-learn 1.9, ``KNeighborsMixin.kneighbors`` in
    ``sklearn/neighbors/_base.py``): for Euclidean distances on dense or CSR float data it runs
    ``ArgKmin`` (``sklearn/metrics/_pairwise_distances_reduction``), which computes distances
    in tiles of ``pairwise_dist_chunk_size`` (default 256) queries x 256 points with OpenMP
    threads and keeps a running k-smallest heap per query; the other cases go through
    :func:`sklearn.metrics.pairwise_distances_chunked`, whose chunks are bounded by
    ``working_memory`` (default 1024 MiB).  Its time is still O(n^2 d).

    Dense data with at least ``GEMM_MIN_FEATURES`` (64) features and ``GEMM_MIN_PAIRS``
    (9e6) query-point pairs are instead ranked by float32 matrix products
    (:func:`_gemm_indices`, BLAS-3 tiles on all cores): each query keeps its
    ``k + 1 + GEMM_EXTRA`` best candidates by a float32 value whose rounding error is bounded,
    the result stands where that bound separates the kept neighbours from each other and
    from the rest, and the other queries are decided by exact float64 distances or, at exact
    ties across the cut, by scikit-learn's search: the same neighbours as an exact search
    (ties by index), faster than scikit-learn's from 64 features on.  Below 64 features the
    per-candidate selection costs about as much as the product and scikit-learn is as fast
    or faster, so it keeps those.  The thresholds of ``"auto"`` below were measured against
    this search.
``"approximate"``
    With faiss (``faiss-cpu``, optional extra ``pip install "structreg[ann]"``): an inverted
    file (``faiss.IndexIVFFlat``, about ``4 sqrt(n)`` k-means cells, float32) whose number of
    probed cells is *calibrated*: a seeded sample of ``IVF_SAMPLE`` points is searched
    exactly, and ``nprobe`` grows until the sample's recall reaches ``IVF_RECALL`` (0.99)
    with a margin of three standard errors, and so does that of a second sample, which did
    not take part in the choice; the rest is searched with that ``nprobe``
    (:func:`_ivf_indices`).  Where the recall needs more than a quarter of the cells, the
    exact search runs instead.  Without faiss, NN-descent (``pynndescent.NNDescent``) with a
    working graph of ``max(k + 1, NNDESCENT_MIN_NEIGHBORS)`` neighbours,
    ``random_state=NNDESCENT_RANDOM_STATE`` and numba's thread count
    (:func:`_nndescent_indices`): no recall target (0.94-0.96 on the 64-d mixtures below), and
    a one-off numba JIT compilation per process, over a minute of CPU.
``"auto"``
    ``"approximate"`` iff the input is dense, faiss or pynndescent imports and either
    ``n_samples >= APPROX_MIN_SAMPLES`` (100 000) with ``n_features >= APPROX_MIN_FEATURES``
    (16; brute-force regime), or ``n_samples >= TREE_APPROX_MIN_SAMPLES`` (200 000) with
    ``n_features >= TREE_APPROX_MIN_FEATURES`` (8; k-d tree regime); else ``"exact"``.

Why these thresholds: from 16 features on the exact search is a brute force, O(n^2), while
the calibrated inverted file scans a share of the points that falls with n: at 1e5 points
it was several times faster than the exact search at recall 0.996-0.999 (64-d Gaussian
mixture, 8-d latent mixture in 64-d, replicated USPS digits in 256-d), at 1e6 points tens of
times on the latent and USPS data, but not on the full-rank 64-d mixture, where recall 0.99
takes 243 of 4000 cells and faiss' float32 scan costs more per pair than the exact search's
BLAS product.  Below 16 features the k-d tree wins at every size in 2-D; from about 8
dimensions on its search time grows much faster than n, hence the second rule (12-blob
mixtures at 2e5 points, 10-d and 32-d: the approximate search slightly faster than the exact
cell search).  The measurements, by ``benchmarks/knn_recall.py``, are in the scale guide
(:doc:`/user_guide/scale`, "Approximate neighbour search: measured recall").  Gaussian
clusters of full rank are the hardest case for every approximate search (the calibration
probes about two thirds of a cluster's cells for recall 0.99 in 64-d); data of low intrinsic
dimension need few cells.

Edges: the union of both directions is formed as the pattern of ``A + A^T`` for the directed
CSR graph ``A`` (under a tenth of the time and a quarter of the memory of the earlier
``np.unique`` over ``2 n k`` int64 pair keys), and weights are computed exactly in float64
from ``X`` for every edge, in chunks under the memory budget.  Neighbour distances returned
by the search are not reused: faiss' and pynndescent's are float32 and scikit-learn's brute force
expands ``|x|^2 - 2 x.y + |y|^2``, so recomputing keeps the weights exact, identical for both
algorithms and bit-for-bit those of earlier releases.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy.cluster.vq import kmeans2
from scipy.spatial import cKDTree
from sklearn.neighbors import NearestNeighbors

from .. import _chunks, _resources
from .._numerics import unit_scaled
from .._resources import blas_threads, block_bytes, gemm_tile_columns

Weights = Literal["connectivity", "heat", "dot"]
Algorithm = Literal["auto", "exact", "approximate"]
Metric = Literal["euclidean", "cosine"]

ALGORITHMS = ("auto", "exact", "approximate")

# ``algorithm="auto"`` searches approximately (faiss, else pynndescent) when the input is
# dense, one of them imports and one (samples, features) pair of thresholds is met; see the
# module docstring for the measurements.  Brute-force regime (exact search by brute force
# from 16 features on): the calibrated inverted file wins from ~1e5 points.
APPROX_MIN_SAMPLES = 100_000
APPROX_MIN_FEATURES = 16
# k-d tree regime, whose search degrades from about 8 dimensions on
TREE_APPROX_MIN_SAMPLES = 200_000
TREE_APPROX_MIN_FEATURES = 8

# exact tree searches of at least this many queries run threaded over the cores structreg may
# use (_resources.loop_threads(), set_config(threads=...)): 1e5 points of a 10-d Gaussian
# mixture, k-d tree, 2 cores: 62 s -> 35 s
PARALLEL_MIN_QUERIES = 20_000
TREE_MAX_FEATURES = 16  # scikit-learn's own k-d tree limit (brute force from 16 on)

# exact searches of dense data with at least GEMM_MIN_FEATURES features (scikit-learn's
# brute-force regime) and GEMM_MIN_PAIRS query-point pairs rank by float32 GEMMs and certify
# the result (_gemm_indices); see the module docstring for the timings.
GEMM_MIN_FEATURES = 64
GEMM_MIN_PAIRS = 9_000_000
GEMM_EXTRA = 4  # candidates kept per query beyond those asked for (at least 1)
GEMM_SAMPLE_STRIDE = 16  # _top_m's largest sampling stride of wide rows
SELF_SAMPLE = 8  # _self_candidates' thresholds: products with every 8th point
SELF_MAX_KEPT = 2  # ... and the products it keeps, at most in blocks of memory
SELF_GROUPS = 4  # ... the m-th largest of the maxima of this many sample columns
SELF_MERGE_ROWS = 64  # ... grouped into the m largest of each point this many at a time

# exact searches of dense data with CELL_MIN_FEATURES to GEMM_MIN_FEATURES - 1 features and
# at least CELL_MIN_SAMPLES points run cell by cell (_cell_indices); see the module docstring.
CELL_MIN_FEATURES = 8
CELL_MIN_SAMPLES = 20_000
CELL_POINTS = 256  # mean points per cell
CELL_SAMPLE = 8  # k-means sample points per cell
CELL_KMEANS_ITER = 5
CELL_FIRST = 4  # the first pass searches at least this many times n_query points
CELL_PILOT = 8  # blocks searched before deciding whether the cells prune
CELL_GIVE_UP = 0.25  # ... and the share of brute-force pairs beyond which they do not

# pynndescent.NNDescent settings (see _nndescent_indices): a fixed seed, and a working graph of
# at least 30 neighbours (pynndescent's default n_neighbors).  Recall of the 10-NN of a 64-d
# Gaussian mixture, 1e5 points: 0.69 / 0.82 / 0.94 / 0.98 with 15 / 20 / 30 / 40 neighbours
# (search 5-10 / 13 / 16-22 / 40 s on the loaded 2-core machine); 0.63 with k + 1 = 11 at 5e4.
NNDESCENT_RANDOM_STATE = 0
NNDESCENT_MIN_NEIGHBORS = 30

# faiss inverted-file settings (see _ivf_indices): nlist = IVF_LISTS sqrt(n) cells, k-means on
# IVF_TRAIN_PER_LIST sample points per cell for IVF_KMEANS_ITER iterations, nprobe raised from
# IVF_FIRST_PROBE by 1.5x until IVF_SAMPLE sampled queries reach recall IVF_RECALL (a lower
# bound), at most IVF_MAX_SHARE of the cells (beyond it the exact search is faster).
IVF_LISTS = 4
IVF_TRAIN_PER_LIST = 16
IVF_KMEANS_ITER = 10
IVF_SAMPLE = 1000
IVF_RECALL = 0.99
IVF_FIRST_PROBE = 4
IVF_MAX_SHARE = 0.25
IVF_RANDOM_STATE = 0
IVF_LAST: dict = {}
"""The last calibrated :func:`_ivf_indices` search of this process: ``nlist``, ``nprobe``,
``sample`` (queries searched exactly) and ``sample_recall`` (their recall, ties counted)."""

SEARCH_AHEAD = 3
"""Inside :func:`reusing_knn_graphs`, an exact search on a new array of fewer than
``PARALLEL_MIN_QUERIES`` points asks for this many times the neighbours requested (at least
``SEARCH_AHEAD_MIN``), so that the graphs of the other neighbourhood sizes of a grid (DRLSC's
``n_neighbors`` in {3, 5, 8}) are cut from it: on such data a search costs about the same for
4 or 12 neighbours (on 140-280 points scikit-learn's overhead dominates; measured in the
scale guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings"), on larger
data its cost grows with k and every size is searched for as asked."""
SEARCH_AHEAD_MIN = 12

CUT_TOLERANCE = 16
"""A cut of a kept search after its k-th nearest point is taken only when every point's k-th
and (k+1)-th squared distances differ by more than ``CUT_TOLERANCE (d + 1) eps s^2`` (d
features, s the largest norm of a point): more than twice the rounding of a squared distance
by either exact search (scikit-learn's brute force forms ``|x|^2 - 2 x.y + |y|^2``, each dot
product off by at most ``d eps`` times the norms' product; a tree search sums the squared
differences), so that a search for k neighbours of its own, by either method, finds the same
sets.  Exact ties (duplicates, points on a lattice) fall back to that search."""

_GRAPH_STORE: ContextVar[dict | None] = ContextVar("structreg_knn_graphs", default=None)


@contextmanager
def reusing_knn_graphs(store: dict) -> Iterator[dict]:
    """Within the block, :func:`knn_graph` keeps the graphs it builds in ``store`` and gives
    a copy of a kept one when called again on the same array object with the same arguments;
    the exact neighbour searches look a little further ahead (:data:`SEARCH_AHEAD`) and the
    later requests on that array for fewer neighbours are cut from them when no distance ties
    (up to :data:`CUT_TOLERANCE`) straddle the cut.  The graphs are the ones a search of
    their own gives.

    For callers that build several penalties on one X: DRLSC's within- and between-class
    Laplacians split one kNN graph, which each would otherwise search for again, and a grid
    over ``n_neighbors`` needs one search.  ``store`` holds the arrays it keys by identity, so
    an id is not reused while it lives.
    """
    token = _GRAPH_STORE.set(store)
    try:
        yield store
    finally:
        _GRAPH_STORE.reset(token)


def _check_weights(weights: str, t: float | None) -> None:
    if weights not in ("connectivity", "heat", "dot"):
        raise ValueError(f"weights must be 'connectivity', 'heat' or 'dot', got {weights!r}")
    if weights == "heat" and t is not None and not (np.isfinite(t) and t > 0):
        raise ValueError(f"heat-kernel width t must be a positive finite number, got {t!r}")


def _check_algorithm(algorithm) -> None:
    if not (isinstance(algorithm, str) and algorithm in ALGORITHMS):
        raise ValueError(
            f"algorithm must be one of 'auto', 'exact' or 'approximate', got {algorithm!r}"
        )


_ANN_MISSING = (
    'algorithm="approximate" needs one of the optional dependencies faiss-cpu or pynndescent; '
    'install them with pip install "structreg[ann]" (or pip install faiss-cpu)'
)


def _import_faiss():
    """The ``faiss`` module, or None when it cannot be imported."""
    try:
        import faiss
    except ImportError:
        return None
    if not _FAISS_SEEN:  # faiss brings its own BLAS: structreg's thread limits must see it
        _FAISS_SEEN.append(True)
        _resources.libraries_loaded()
    return faiss


_FAISS_SEEN: list[bool] = []


def _import_nndescent():
    """pynndescent's NNDescent class, or an ImportError naming the optional extra."""
    try:
        from pynndescent import NNDescent
    except ImportError as exc:
        raise ImportError(_ANN_MISSING) from exc
    return NNDescent


def _approximate_engine() -> str | None:
    """The library of the approximate search: ``"faiss"`` (preferred: a calibrated inverted
    file, no JIT), else ``"pynndescent"``, else None."""
    if _import_faiss() is not None:
        return "faiss"
    try:
        _import_nndescent()
    except ImportError:
        return None
    return "pynndescent"


def resolve_algorithm(X, algorithm: Algorithm = "auto") -> str:
    """The search ``knn_graph`` runs for ``X``: ``"exact"`` or ``"approximate"``.

    ``"auto"`` is ``"approximate"`` iff ``X`` is dense, faiss or pynndescent can be imported
    (``_approximate_engine``) and ``n_samples >= APPROX_MIN_SAMPLES`` with ``n_features
    >= APPROX_MIN_FEATURES`` (brute-force regime) or ``n_samples >= TREE_APPROX_MIN_SAMPLES``
    with ``n_features >= TREE_APPROX_MIN_FEATURES`` (k-d tree regime); else ``"exact"``.
    """
    _check_algorithm(algorithm)
    if algorithm != "auto":
        return algorithm
    n, d = X.shape
    large = (n >= APPROX_MIN_SAMPLES and d >= APPROX_MIN_FEATURES) or (
        n >= TREE_APPROX_MIN_SAMPLES and d >= TREE_APPROX_MIN_FEATURES
    )
    if sp.issparse(X) or not large or _approximate_engine() is None:
        return "exact"
    return "approximate"


def knn_indices(X, n_neighbors: int, *, algorithm: Algorithm = "auto") -> np.ndarray:
    """Indices ``(n_samples, n_neighbors)`` of the nearest *other* rows of ``X``, nearest first.

    The point itself is excluded by index; when duplicates hide it from the ``k + 1`` nearest
    (all at distance 0), the farthest of those is dropped instead.  ``algorithm`` as in
    :func:`knn_graph`.
    """
    return _knn_indices(
        unit_scaled(_as_points(X), far_only=True)[1], n_neighbors, algorithm, cut=False
    )


def _knn_indices(X, n_neighbors: int, algorithm, cut: bool) -> np.ndarray:
    """:func:`knn_indices` of the points ``X``; ``cut``: the caller takes each row as a set
    (a graph), so inside :func:`reusing_knn_graphs` it may be cut from a longer search."""
    n = X.shape[0]
    if not (isinstance(n_neighbors, (int, np.integer)) and n_neighbors >= 1):
        raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    if n_neighbors >= n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of points in the "
            f"graph (n_samples = {n})"
        )
    if resolve_algorithm(X, algorithm) == "approximate":
        ind = _approximate_indices(X, n_neighbors + 1)
    else:
        store = _GRAPH_STORE.get() if cut else None
        if store is None:
            ind = _exact_indices(X, X, n_neighbors + 1)
        else:
            ind = _cut_search(X, n_neighbors + 1, store)
    return _drop_self(ind, np.arange(n), n_neighbors)


SCALE_MAX_QUERIES = 1000
""":func:`neighbor_scale` averages over at most this many query points."""


def neighbor_scale(X, n_neighbors=6, max_queries: int = SCALE_MAX_QUERIES) -> float:
    """Mean squared distance from a point to its ``n_neighbors`` nearest other points: the
    length scale of a kNN graph (the heat weights' default width, up to symmetrisation).

    Copies of a point count once (the mean is over the distinct rows of X), so duplicated
    rows do not shrink the scale to 0; it is positive unless all rows of X are identical,
    which is a ValueError.  Exact over all (distinct) points up to ``max_queries`` of them,
    else over that many points drawn with a fixed seed (their neighbours searched among all
    points), so the cost is O(max_queries n d) and the value does not depend on a global
    random state.  ``n_neighbors`` may instead be a graph (sparse adjacency over the rows of
    X): then the mean squared length of its edges of positive length (0 when it has none).
    """
    s, X = unit_scaled(_as_points(X), far_only=True)
    if sp.issparse(n_neighbors):
        W = sp.coo_matrix(check_graph(n_neighbors, X.shape[0]))
        squared = _pair_distances(X, W.row, W.col) ** 2
        squared = squared[squared > 0]  # edges between copies of a point have no length
        mean = float(np.mean(squared)) if squared.size else 0.0
        return _squared_length(mean, s, "the mean squared edge length")
    if X.shape[0] < 2:
        raise ValueError(f"a neighbour scale needs at least 2 points, got {X.shape[0]}")
    first, _ = _distinct_rows(X)
    if first is not None:
        if first.size < 2:
            raise ValueError(
                f"a neighbour scale needs at least 2 distinct points: all {X.shape[0]} rows of "
                "X are identical (no distance between neighbours)"
            )
        X = X[first]
    n = X.shape[0]
    k = min(int(n_neighbors), n - 1)
    if k < 1:
        raise ValueError(f"a neighbour scale needs at least 2 points, got {n}")
    queries = np.arange(n)
    if n > max_queries:
        queries = np.sort(np.random.default_rng(0).choice(n, max_queries, replace=False))
    ind = _drop_self(_exact_indices(X, X[queries], k + 1), queries, k)
    rows = np.repeat(queries, k)
    mean = float(np.mean(_pair_distances(X, rows, ind.ravel()) ** 2))
    return _squared_length(mean, s, "the mean squared neighbour distance")


def _distinct_rows(X) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(first, inverse)``: the indices of the first row of every distinct point of X, in
    increasing order, and the position in ``first`` of every row's point; ``(None, None)``
    when all rows differ (the common case, which the callers then leave untouched).  Dense
    rows compare as numbers (``-0.0 == 0.0``), sparse ones by their nonzero entries."""
    n = X.shape[0]
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
        seen: dict = {}
        inverse = np.empty(n, dtype=np.intp)
        for i in range(n):
            a, b = X.indptr[i], X.indptr[i + 1]
            key = (X.indices[a:b].tobytes(), X.data[a:b].tobytes())
            inverse[i] = seen.setdefault(key, len(seen))
        if len(seen) == n:
            return None, None
        first = np.full(len(seen), n, dtype=np.intp)
        np.minimum.at(first, inverse, np.arange(n))  # already in increasing order
        return first, inverse
    if n == 0:
        return None, None
    X = np.asarray(X, dtype=float).reshape(n, -1)
    if np.unique(_row_hashes(X)).size == n:  # copies hash alike: no copies (the common case)
        return None, None
    _, first, inverse = np.unique(X + 0.0, axis=0, return_index=True, return_inverse=True)
    if first.size == n:
        return None, None
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[np.asarray(inverse).ravel()]


def _squared_length(value: float, s: float, what: str) -> float:
    """A mean squared length measured on X / s, in X's units (``value s^2``); a ValueError
    when float64 cannot represent it."""
    if s == 1.0:
        return value
    out = value * s * s
    if value > 0 and not (0 < out < np.inf):
        raise ValueError(
            f"{what} of X (about {value:.3g} * {s:.3g}^2, X's largest absolute value being "
            f"near {s:.3g}) is not representable in float64; rescale X"
        )
    return out


def _width(t: float | None, s: float) -> float | None:
    """A heat width ``t`` for distances measured on X / s: ``t / s^2`` (None stays None); a
    ValueError when float64 cannot represent it."""
    if t is None or s == 1.0:
        return t
    out = t / s / s
    if not (0 < out < np.inf):
        raise ValueError(
            f"heat-kernel width t={t!r} is not representable relative to X's scale "
            f"({s:.3g}): t / max|X|^2 over- or underflows float64; rescale X or t"
        )
    return out


def _cut_search(X, n_query: int, store: dict) -> np.ndarray:
    """``_exact_indices(X, X, n_query)`` as sets: the first ``n_query`` columns of a longer
    search on this X kept in ``store``, when they are unambiguous (:func:`reusing_knn_graphs`)."""
    key = ("knn_search", id(X))
    held = store.get(key)
    if held is not None and held[0] is X and held[1].shape[1] == n_query:
        return held[1]  # the same search again
    if held is None or held[0] is not X or held[1].shape[1] <= n_query:
        m = n_query
        if X.shape[0] < PARALLEL_MIN_QUERIES:
            m = min(X.shape[0], max(SEARCH_AHEAD * n_query, SEARCH_AHEAD_MIN))
        ind, dist = _exact_indices(X, X, m, return_distance=True)
        held = store[key] = (X, ind, dist**2, _cut_tolerance(X))
        if m == n_query:
            return ind
    _, ind, squared, tol = held
    if np.all(squared[:, n_query] - squared[:, n_query - 1] > tol):
        return ind[:, :n_query]
    return _exact_indices(X, X, n_query)  # a tie at the cut: the search of its own decides


def _cut_tolerance(X) -> float:
    """:data:`CUT_TOLERANCE` in squared distances for the points ``X``."""
    if sp.issparse(X):  # (a row sum of a sparse matrix is an np.matrix: made an array)
        squares = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    else:
        squares = np.einsum("ij,ij->i", X, X)
    largest = float(np.max(squares, initial=0.0))
    return CUT_TOLERANCE * (X.shape[1] + 1) * np.finfo(float).eps * largest


def _exact_indices(X, queries, n_query: int, return_distance: bool = False):
    """Exact ``n_query`` nearest rows of ``X`` for every row of ``queries`` (self included),
    nearest first; with ``return_distance``, ``(indices, distances)``.

    Dense data with at least ``GEMM_MIN_FEATURES`` features and ``GEMM_MIN_PAIRS`` query-point
    pairs: :func:`_gemm_indices` (float32 ranking, certified, float64 where it is not).
    Otherwise scikit-learn's ``NearestNeighbors``; from ``PARALLEL_MIN_QUERIES`` queries on,
    its tree searches run on :func:`~structreg._resources.loop_threads` threads (joblib
    threads, ``n_jobs``; its brute-force search is OpenMP-threaded either way, limited to
    ``threads`` where :func:`~structreg.set_config` sets it).
    """
    if _gemm_applies(X, queries):
        return _gemm_indices(X, queries, n_query, return_distance=return_distance)
    if _cells_apply(X, queries, n_query):
        return _cell_indices(X, queries, n_query, return_distance=return_distance)
    return _library_indices(X, queries, n_query, return_distance)


def _library_indices(X, queries, n_query: int, return_distance: bool = False):
    """:func:`_exact_indices` by a tree or brute force: dense data with fewer than
    ``TREE_MAX_FEATURES`` features by scipy's ``cKDTree`` (faster than scikit-learn's k-d tree
    on 5-10-d mixtures and uniform data of 2e4-1e5 points; measured in the scale guide,
    :doc:`/user_guide/scale`, "Measurements behind the solvers' settings"), the rest by
    scikit-learn's
    ``NearestNeighbors``.  The tree's answer is put in (distance, index) order, and a row
    whose ``n_query``-th distance ties with the next one is searched again for twice as many
    neighbours until the tie is inside, so that ties at the cut go by index too.  When the
    queries are the points themselves they are searched in the tree's leaf order, so that
    consecutive queries walk the same branches (less than half the time on two moons of 1e7
    points; measured in the scale guide, :doc:`/user_guide/scale`, "Graph solves on large
    graphs")."""
    parallel = queries.shape[0] >= PARALLEL_MIN_QUERIES
    if sp.issparse(X) or sp.issparse(queries) or X.shape[1] >= TREE_MAX_FEATURES:
        ind, dist = _sklearn_search(X, queries, n_query, parallel)
        return (ind, dist) if return_distance else ind
    tree, n = cKDTree(X), X.shape[0]
    ind = np.empty((queries.shape[0], n_query), dtype=np.intp)
    dist = np.empty(ind.shape)
    rows, m = np.arange(queries.shape[0]), n_query
    if queries is X:
        rows = np.asarray(tree.indices, dtype=np.intp)
    while rows.size:
        m = min(2 * m if m > n_query else m + 1, n)
        workers = _resources.loop_threads() if rows.size >= PARALLEL_MIN_QUERIES else 1
        d, i = tree.query(queries[rows], m, workers=workers)
        d, i = d.reshape(-1, m), i.reshape(-1, m)
        pick = _nearest_first(i, d, m)
        d, i = np.take_along_axis(d, pick, axis=1), np.take_along_axis(i, pick, axis=1)
        done = (d[:, n_query - 1] < d[:, -1]) | (m == n) if m > n_query else np.ones(len(d), bool)
        ind[rows[done]], dist[rows[done]] = i[done, :n_query], d[done, :n_query]
        rows = rows[~done]
    return (ind, dist) if return_distance else ind


def _sklearn_search(X, queries, n_query: int, parallel: bool):
    """``(indices, distances)`` by scikit-learn's ``NearestNeighbors``: ``n_jobs`` from
    :func:`~structreg._resources.loop_threads` when ``parallel``, its OpenMP (and BLAS)
    threads limited to the ``threads`` setting where one is set."""
    n_jobs = _resources.loop_threads() if parallel else None
    with blas_threads(_resources.threads_limit(), user_api=None):
        search = NearestNeighbors(n_neighbors=n_query, n_jobs=n_jobs).fit(X)
        dist, ind = search.kneighbors(queries)
    return ind, dist


def _gemm_applies(X, queries) -> bool:
    """Whether :func:`_exact_indices` ranks by float32 GEMMs (:func:`_gemm_indices`)."""
    return (
        not sp.issparse(X)
        and not sp.issparse(queries)
        and X.shape[1] >= GEMM_MIN_FEATURES
        and X.shape[0] * queries.shape[0] >= GEMM_MIN_PAIRS
    )


def _loop_threads() -> int:
    """Worker threads of :func:`_gemm_indices` and :func:`_cell_indices`: the one limiter's
    (:func:`structreg._resources.loop_threads`, ``set_config(threads=...)``)."""
    return _resources.loop_threads()


def _gemm_indices(
    X, queries, n_query: int, return_distance: bool = False, threads: int | None = None
):
    """Exact ``n_query`` nearest rows of dense ``X`` for every row of ``queries``, nearest
    first (ties by index), ranked by float32 matrix products and certified.

    Both sides are centred on the mean of ``X`` (distances do not change; the rounding, which
    scales with the norms, shrinks) and rounded to float32.  Float32 GEMMs give
    ``v_ij = q_i . x_j - |x_j|^2 / 2``, which ranks the points as ``||q_i - x_j||^2 = |q_i|^2
    - 2 v_ij`` does, and each query keeps the ``m = n_query + GEMM_EXTRA`` largest.  A
    self-search (``queries is X``) computes each pair once (:func:`_self_candidates`: the
    tiles on and above the diagonal, each product serving its row and its column, selected
    against thresholds from a sample rather than transposed; a third less time on USPS,
    measured in the scale guide, :doc:`/user_guide/scale`, "Measurements behind the solvers'
    settings"), with the bound below for ``d + 2`` terms and
    ``|q_i|^2 / 2`` added.  The
    computed ``v_ij`` is within

        e_i = 1.01 c (|q_i| R + R^2 / 2),   c = gamma_{d+1} + 3.01 u,   gamma_p = p u / (1 - p u),

    of its exact value (u = 2^-24 the float32 unit roundoff, R the largest centred norm of a
    point: the standard bound of a float32 dot product of d (+1) terms, whatever order the
    BLAS sums in, plus the rounding of the inputs and of the subtraction to float32).  A
    query is done when its kept values are more than ``2 e_i`` apart up to and including the
    first one it drops: then the ``n_query`` nearest points and their order are those of
    exact arithmetic.  Otherwise its ``m`` candidates get exact float64 distances
    (``sum (q - x)^2``), and they stand when the ``n_query``-th is below the lower bound
    ``|q_i|^2 - 2 (v_m + e_i)`` of every point not kept; the few queries left over (exact
    ties at the cut, duplicates) are searched by scikit-learn.  Returned distances are exact
    float64 ``||q - x||``.

    Work: ``2 n_queries n_points (d + 1)`` float32 flops in BLAS-3 blocks of about
    ``block_bytes() / 8`` elements per worker thread (one per available CPU, BLAS held
    to one thread each), and a selection that touches each product a few times.
    """
    n, d = X.shape
    m = min(n, n_query + max(1, GEMM_EXTRA))  # one more than asked certifies the cut
    mean = X.mean(axis=0)
    # the points as float32 rows x - mean, and -|x - mean|^2 / 2
    Z = np.empty((n, d), dtype=np.float32)
    sq = np.empty(n)
    for rows in _chunks.row_blocks(n, d):
        centred = X[rows] - mean
        sq[rows] = np.einsum("ij,ij->i", centred, centred)
        Z[rows] = centred
    half = (-0.5 * sq).astype(np.float32)
    radius = float(np.sqrt(sq.max()))
    u = float(np.finfo(np.float32).eps) / 2
    c = (d + 1) * u / (1 - (d + 1) * u) + 3.01 * u
    threads = _loop_threads() if threads is None else threads
    elements = max(1, block_bytes() // (8 * threads))

    # the search threads share the cores; one search thread: the BLAS under the limiter
    with blas_threads(1 if threads > 1 else _resources.threads_limit()):
        found = None
        if queries is X and m < n:  # a self-search: each pair's product once
            # d + 2 terms of at most |z_i| R, |z_i|^2 / 2 and R^2 / 2 (see _self_candidates)
            c2 = (d + 2) * u / (1 - (d + 2) * u) + 3.01 * u
            norm = np.sqrt(sq)
            error = 1.01 * c2 * (norm * radius + sq / 2 + radius**2 / 2)
            found = _self_candidates(Z, sq, m, error, elements, threads)
            q_sq = sq
        if found is None:
            idx, val, q_sq = _query_candidates(Z, half, queries, mean, m, elements, threads)
            error = 1.01 * c * (np.sqrt(q_sq) * radius + radius**2 / 2)
        else:
            idx, val = found
        order = np.argsort(-val, axis=1, kind="stable")
        idx = np.take_along_axis(idx, order, axis=1)
        val = np.take_along_axis(val, order, axis=1).astype(float)
        step = max(1, elements // (2 * m * d))  # the float64 candidates and differences
        ok = np.empty(idx.shape[0], dtype=bool)

        def certify(start: int) -> None:
            rows = slice(start, start + step)
            ok[rows] = _certify(
                X, queries[rows], idx[rows], val[rows], q_sq[rows], error[rows], n_query, n
            )

        _run(certify, range(0, idx.shape[0], step), threads)
    ind = idx[:, :n_query].astype(np.intp, copy=False)
    left = np.flatnonzero(~ok)
    if left.size:
        ind[left] = _library_indices(X, queries[left], n_query)
    if not return_distance:
        return ind
    dist = np.empty(ind.shape)
    for rows in _chunks.row_blocks(ind.shape[0], 2 * n_query * d):
        diff = X[ind[rows]] - queries[rows][:, None, :]
        dist[rows] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return ind, dist


def _cells_apply(X, queries, n_query: int) -> bool:
    """Whether :func:`_exact_indices` searches cell by cell (:func:`_cell_indices`)."""
    return (
        not sp.issparse(X)
        and not sp.issparse(queries)
        and CELL_MIN_FEATURES <= X.shape[1] < GEMM_MIN_FEATURES
        and X.shape[0] >= CELL_MIN_SAMPLES
        and n_query * CELL_FIRST <= CELL_POINTS
    )


def _cell_indices(X, queries, n_query: int, return_distance: bool = False):
    """Exact ``n_query`` nearest rows of dense ``X`` for every row of ``queries``, nearest
    first (ties by index), searched a cell at a time.

    The points are split into cells (nearest of about ``n / CELL_POINTS`` k-means centres
    ``c``, fitted on a seeded sample), each with its radius ``r_c`` (largest distance of its
    points to ``c``).  The queries nearest to one centre form a block, searched by
    :func:`_gemm_indices` (exact, certified) against the points of the cells nearest that
    centre, at least ``CELL_FIRST n_query`` of them; each query's ``n_query``-th distance
    ``u`` there bounds its true one from above.  A point of a cell with ``||q - c|| - r_c >
    u`` is farther from ``q`` than ``u`` (triangle inequality), so only the cells that fail
    this test for some query of the block are searched next, and the two candidate lists are
    merged by exact distance (the rounding of ``||q - c||`` is added to ``u``).  Clustered
    data prune to the query's own cluster; data that do not prune (uniform in many
    dimensions) give up after a sample of blocks has cost more than ``CELL_GIVE_UP`` of a
    brute-force search, and the tree search takes the rest.
    """
    n, d = X.shape
    mean = X.mean(axis=0)
    Xc = X - mean
    n_cells = max(2, n // CELL_POINTS)
    rng = np.random.default_rng(0)
    sample = Xc[np.sort(rng.choice(n, min(n, CELL_SAMPLE * n_cells), replace=False))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "One of the clusters is empty": harmless
        centres, _ = kmeans2(sample, n_cells, iter=CELL_KMEANS_ITER, minit="++", seed=rng)
    c_sq = np.einsum("ij,ij->i", centres, centres)
    c_norm = float(np.sqrt(c_sq.max()))

    def centre_d2(P):
        return np.maximum(np.einsum("ij,ij->i", P, P)[:, None] - 2 * (P @ centres.T) + c_sq, 0)

    def nearest_centre(P):
        out = np.empty(P.shape[0], dtype=np.intp)
        for rows in _chunks.row_blocks(P.shape[0], n_cells):
            out[rows] = centre_d2(P[rows]).argmin(axis=1)
        return out

    cell = nearest_centre(Xc)
    order = np.argsort(cell, kind="stable")  # points of each cell, by index
    counts = np.bincount(cell, minlength=n_cells)
    starts = np.concatenate([[0], np.cumsum(counts)])
    radius = np.zeros(n_cells)
    for rows in _chunks.row_blocks(n, d):
        np.maximum.at(radius, cell[rows], np.linalg.norm(Xc[rows] - centres[cell[rows]], axis=1))
    Q = queries - mean
    q_cell = nearest_centre(Q)
    q_order = np.argsort(q_cell, kind="stable")
    q_starts = np.concatenate([[0], np.cumsum(np.bincount(q_cell, minlength=n_cells))])
    gamma = (d + 3) * np.finfo(float).eps
    blocks = [c for c in range(n_cells) if q_starts[c + 1] > q_starts[c]]
    ind = np.empty((Q.shape[0], n_query), dtype=np.intp)
    dist = np.empty((Q.shape[0], n_query))
    pairs = np.zeros(n_cells)

    def points(cells):
        return np.sort(np.concatenate([order[starts[c] : starts[c + 1]] for c in cells]))

    def search(c: int) -> None:
        qs = q_order[q_starts[c] : q_starts[c + 1]]
        near = np.argsort(np.linalg.norm(centres - centres[c], axis=1), kind="stable")
        first = near[: np.searchsorted(np.cumsum(counts[near]), CELL_FIRST * n_query) + 1]
        pts = points(first)
        i, u = _gemm_indices(X[pts], queries[qs], n_query, return_distance=True, threads=1)
        i = pts[i]
        D = np.sqrt(centre_d2(Q[qs]))
        slack = 4 * np.sqrt(gamma) * (np.linalg.norm(Q[qs], axis=1) + c_norm)
        need = D - radius <= (u[:, -1] * (1 + gamma) + slack)[:, None]
        need[:, first] = False
        more = np.flatnonzero(need.any(axis=0))
        pairs[c] = qs.size * pts.size
        if more.size:
            pts = points(more)
            i2, u2 = _gemm_indices(X[pts], queries[qs], n_query, return_distance=True, threads=1)
            pairs[c] += qs.size * pts.size
            i, u = np.hstack([i, pts[i2]]), np.hstack([u, u2])
            pick = _nearest_first(i, u, n_query)
            i, u = np.take_along_axis(i, pick, axis=1), np.take_along_axis(u, pick, axis=1)
        ind[qs], dist[qs] = i, u

    threads = _loop_threads()
    pilot = blocks[:: max(1, len(blocks) // CELL_PILOT)]
    with blas_threads(1):  # the blocks share the cores
        _run(search, pilot, threads)
        done = np.zeros(n_cells, dtype=bool)
        done[pilot] = True
        share = pairs[pilot].sum() / (n * (q_starts[np.array(pilot) + 1] - q_starts[pilot]).sum())
        rest = [c for c in blocks if not done[c]]
        if share <= CELL_GIVE_UP:
            _run(search, rest, threads)
    if share > CELL_GIVE_UP and rest:
        qs = np.concatenate([q_order[q_starts[c] : q_starts[c + 1]] for c in rest])
        ind[qs], dist[qs] = _library_indices(X, queries[qs], n_query, return_distance=True)
    return (ind, dist) if return_distance else ind


def _nearest_first(ind: np.ndarray, dist: np.ndarray, n_query: int) -> np.ndarray:
    """Column positions of each row's ``n_query`` smallest ``dist``, nearest first, ties by
    ``ind``."""
    keys = np.argsort(ind, axis=1, kind="stable")
    by_dist = np.argsort(np.take_along_axis(dist, keys, axis=1), axis=1, kind="stable")
    return np.take_along_axis(keys, by_dist, axis=1)[:, :n_query]


def _certify(X, Q, idx, val, q_sq, error, n_query: int, n: int) -> np.ndarray:
    """:func:`_gemm_indices`' certificate for the queries ``Q`` with candidates ``idx``
    sorted by decreasing float32 value ``val``: True where the first ``n_query`` are the
    nearest points (``idx`` rewritten in place, by exact float64 distances, where the float32
    values could not tell)."""
    m = idx.shape[1]
    last = n_query + 1 if m > n_query else n_query  # the values that decide set and order
    gaps = val[:, : last - 1] - val[:, 1:last]
    ok = np.all(gaps > 2 * error[:, None], axis=1)
    unsure = np.flatnonzero(~ok)
    if unsure.size:
        cand = np.sort(idx[unsure], axis=1)  # ties by index after the stable sort below
        diff = X[cand] - Q[unsure][:, None, :]
        d2 = np.einsum("ijk,ijk->ij", diff, diff)
        order = np.argsort(d2, axis=1, kind="stable")
        idx[unsure] = np.take_along_axis(cand, order, axis=1)
        d2 = np.take_along_axis(d2, order, axis=1)
        if m == n:  # every point is a candidate
            ok[unsure] = True
        else:
            eps = np.finfo(float).eps
            low = val[unsure, -1] + error[unsure]  # bound on every value not kept
            floor = (
                q_sq[unsure]
                - 2 * low
                - 4 * (X.shape[1] + 2) * eps * (q_sq[unsure] + 2 * np.abs(low))
            )
            ok[unsure] = d2[:, n_query - 1] * (1 + 4 * (X.shape[1] + 2) * eps) < floor
    return ok


def _query_candidates(Z, half, queries, mean, m, elements, threads):
    """Candidates of the queries: per block of queries, ``[q, 1] @ [Z, half]^T`` a tile of
    points at a time, the ``m`` largest of each row kept; and the queries' centred squared
    norms."""
    n, d = Z.shape
    Za = np.empty((n, d + 1), dtype=np.float32)
    Za[:, :d], Za[:, d] = Z, half
    tile = min(n, gemm_tile_columns())  # points per tile, from the memory budget
    step = max(1, elements // tile)
    q = queries.shape[0]
    idx = np.empty((q, min(m, n)), dtype=np.intp)
    val = np.empty((q, min(m, n)), dtype=np.float32)
    q_sq = np.empty(q)

    def search(start: int) -> None:
        rows = slice(start, start + step)
        centred = queries[rows] - mean
        q_sq[rows] = np.einsum("ij,ij->i", centred, centred)
        Qa = np.empty((centred.shape[0], d + 1), dtype=np.float32)
        Qa[:, :d], Qa[:, d] = centred, 1.0
        found_i, found_v = [], []
        for col in range(0, n, tile):
            i, v = _top_m(Qa @ Za[col : col + tile].T, m)
            found_i.append(i + col)
            found_v.append(v)
        idx[rows], val[rows] = _merge_top(found_i, found_v, m)

    _run(search, range(0, q, step), threads)
    return idx, val, q_sq


def _self_candidates(Z, sq, m: int, error, elements: int, threads: int):
    """:func:`_query_candidates` of the points themselves, each pair's product computed once.

    The float32 products ``g_ij = [z_i, -h_i, 1] . [z_j, 1, -h_j] = -||z_i - z_j||^2 / 2``
    (``h = |z|^2 / 2``) are symmetric, so the row blocks are multiplied only from their own
    first column on (the upper triangle of tiles) and each product serves its row and, as
    ``g_ji``, its column.  Every point first gets a threshold from the products with a
    sample of every ``SELF_SAMPLE``-th point: their ``m``-th largest, lowered by twice the
    point's rounding bound ``error`` (the sample's and the tiles' roundings of one pair
    differ by at most that), at most the ``m``-th largest of its row of tile products.  A
    tile keeps, for each of its rows and columns, the products at or above the threshold, a
    few times ``m`` per point; they are grouped by point and the ``m`` largest kept.

    Returns ``(idx, val)`` as :func:`_query_candidates` (``val`` the products plus ``h_i``,
    float64, ``q . x - |x|^2 / 2`` in the terms of the caller's bound), or None where the
    points kept would take more than ``SELF_MAX_KEPT`` blocks of memory (many duplicates):
    the caller searches query by query instead.
    """
    n, d = Z.shape
    h = (0.5 * sq).astype(np.float32)
    Qa = np.empty((n, d + 2), dtype=np.float32)
    Qa[:, :d], Qa[:, d], Qa[:, d + 1] = Z, -h, 1.0
    Za = np.empty((n, d + 2), dtype=np.float32)
    Za[:, :d], Za[:, d], Za[:, d + 1] = Z, 1.0, -h
    tile = min(n, gemm_tile_columns())
    # thresholds from the sample
    stride = max(1, min(SELF_SAMPLE, n // (2 * m)))
    Zs = Za[::stride]
    groups = max(1, min(SELF_GROUPS, Zs.shape[0] // (2 * m)))
    s = Zs.shape[0] // groups
    thr = np.empty(n, dtype=np.float32)
    step = max(1, elements // Zs.shape[0])

    def sample(start: int) -> None:
        rows = slice(start, start + step)
        G = Qa[rows] @ Zs[: s * groups].T
        for g in range(1, groups):  # m groups' maxima at or above t: m products too
            np.maximum(G[:, :s], G[:, g * s : (g + 1) * s], out=G[:, :s])
        t = np.partition(G[:, :s], s - m, axis=1)[:, s - m].astype(float) - 2 * error[rows]
        t32 = t.astype(np.float32)
        thr[rows] = np.where(t32 > t, np.nextafter(t32, np.float32(-np.inf)), t32)

    _run(sample, range(0, n, step), threads)
    # the upper triangle of tiles, a row block at a time
    starts, a = [], 0
    while a < n:
        starts.append(a)
        a += max(1, elements // min(tile, n - a))
    starts.append(n)
    limit = SELF_MAX_KEPT * block_bytes() // 12
    kept = []  # (points, candidates, values) of each tile
    total = [0]

    def strip(j: int) -> None:
        a, b = starts[j], starts[j + 1]
        for c0 in range(a, n, tile):
            if total[0] > limit:
                return
            c1 = min(n, c0 + tile)
            G = Qa[a:b] @ Za[c0:c1].T
            w = c1 - c0
            flat = np.flatnonzero(G >= thr[a:b, None])
            r, c = np.divmod(flat, w)
            parts = [(r + a, c + c0, G.ravel()[flat])]
            off = max(0, b - c0)  # columns beyond the row block: the transposed products
            if off < w:
                flat = np.flatnonzero(G[:, off:] >= thr[c0 + off : c1])
                r, c = np.divmod(flat, w - off)
                parts.append((c + (c0 + off), r + a, G[r, c + off]))
            for part in parts:
                total[0] += part[0].size
                kept.append(part)

    _run(strip, range(len(starts) - 1), threads)
    if total[0] > limit:
        return None
    point = np.concatenate([p[0] for p in kept])
    cand = np.concatenate([p[1] for p in kept])
    vals = np.concatenate([p[2] for p in kept])
    kept.clear()
    # grouped by point (a radix sort of 16-bit keys where they fit), the m largest of each
    order = np.argsort(point.astype(np.uint16 if n <= 2**16 else np.int32), kind="stable")
    point, cand, vals = point[order], cand[order], vals[order]
    del order
    ends = np.cumsum(np.bincount(point, minlength=n))
    idx = np.empty((n, m), dtype=np.intp)
    val = np.empty((n, m))
    rows_step = max(
        1, min(SELF_MERGE_ROWS, elements // max(1, int(np.diff(ends, prepend=0).max())))
    )

    def top(start: int) -> None:
        stop = min(n, start + rows_step)
        lo, hi = (ends[start - 1] if start else 0), ends[stop - 1]
        pt = point[lo:hi] - start
        first = np.concatenate([[lo], ends[start : stop - 1]])
        rank = np.arange(lo, hi) - first[pt]
        width = int(rank.max()) + 1
        P = np.full((stop - start, width), -np.inf, dtype=np.float32)
        C = np.zeros((stop - start, width), dtype=np.intp)
        P[pt, rank] = vals[lo:hi]
        C[pt, rank] = cand[lo:hi]
        if width > m:
            keep = np.argpartition(P, width - m, axis=1)[:, width - m :]
            P = np.take_along_axis(P, keep, axis=1)
            C = np.take_along_axis(C, keep, axis=1)
        idx[start:stop] = C
        val[start:stop] = P + 0.5 * sq[start:stop, None]

    _run(top, range(0, n, rows_step), threads)
    return idx, val


def _merge_top(idx_parts, val_parts, m: int):
    """The ``m`` largest of the concatenated candidate lists of each row."""
    idx, val = np.hstack(idx_parts), np.hstack(val_parts)
    if idx.shape[1] <= m:
        return idx, val
    keep, val = _top_m(val, m)
    return np.take_along_axis(idx, keep, axis=1), val


def _run(func, starts, threads: int) -> None:
    """``func(start)`` for every start, on ``threads`` worker threads when there are several."""
    starts = list(starts)
    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(threads) as pool:
            for _ in pool.map(func, starts):
                pass
    else:
        for start in starts:
            func(start)


def _top_m(V: np.ndarray, m: int):
    """Column indices and values of the ``m`` largest entries of each row of ``V`` (any order).

    Wide rows: a row's ``m``-th largest over every ``stride``-th column is at most its
    ``m``-th largest overall, so the entries at or above it hold the ``m`` largest; only those
    (about ``m`` times the stride per row) are partitioned.  The stride, ``sqrt(w / m) / 2``
    up to ``GEMM_SAMPLE_STRIDE`` for rows of ``w`` entries, balances the sample's partition
    against the candidates'.
    """
    b, w = V.shape
    if w <= m:
        return np.broadcast_to(np.arange(w), (b, w)).copy(), V.copy()
    stride = int(min(GEMM_SAMPLE_STRIDE, np.sqrt(w / m) / 2))
    if stride < 2:
        i = np.argpartition(V, w - m, axis=1)[:, w - m :]
        return i, np.take_along_axis(V, i, axis=1)
    sample = V[:, ::stride]
    s = sample.shape[1]
    threshold = np.partition(sample, s - m, axis=1)[:, s - m]
    flat = np.flatnonzero(V >= threshold[:, None])
    row = flat // w
    counts = np.bincount(row, minlength=b)
    pos = np.arange(flat.size) - np.repeat(np.cumsum(counts) - counts, counts)
    width = int(counts.max())
    P = np.full((b, width), -np.inf, dtype=V.dtype)
    idx = np.zeros((b, width), dtype=np.intp)
    P[row, pos] = V.ravel()[flat]
    idx[row, pos] = flat - row * w
    keep = np.argpartition(P, width - m, axis=1)[:, width - m :]
    return np.take_along_axis(idx, keep, axis=1), np.take_along_axis(P, keep, axis=1)


def _drop_self(ind: np.ndarray, self_index: np.ndarray, k: int) -> np.ndarray:
    is_self = ind == self_index[:, None]
    is_self[~is_self.any(axis=1), -1] = True  # self hidden behind duplicates: drop the farthest
    return ind[~is_self].reshape(ind.shape[0], k)


def _approximate_indices(X, n_query: int) -> np.ndarray:
    """Approximate ``n_query`` nearest rows (self included) of every row of dense ``X``: the
    calibrated inverted file of faiss (:func:`_ivf_indices`) when faiss imports, else
    NN-descent (:func:`_nndescent_indices`), else an ImportError naming the extra."""
    if _import_faiss() is not None:
        return _ivf_indices(X, n_query)
    return _nndescent_indices(X, n_query)


def _sample_recall(X, queries, found: np.ndarray, ref_dist: np.ndarray, own=None) -> np.ndarray:
    """Per query, the share of its found neighbours that are true ones, ties included: ``j``
    found for query ``q`` counts when ``||q - x_j|| <= (1 + 1e-9) r_q``, ``r_q`` the exact distance
    of ``q``'s ``m``-th nearest point (``m = ref_dist.shape[1]``; a tied point found instead
    of the one an exact search keeps by index counts too); ``-1`` (not found) never counts.
    ``own``: the queries' own row numbers in ``X``; the query itself is then not counted, as
    a found neighbour or a slot (recall of the ``m - 1`` other neighbours)."""
    m = ref_dist.shape[1]
    hits = np.zeros(found.shape[0])
    valid = found >= 0
    for rows in _chunks.row_blocks(found.shape[0], 2 * m * X.shape[1]):
        f = np.where(valid[rows], found[rows], 0)
        diff = X[f] - queries[rows][:, None, :]
        d = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        good = valid[rows] & (d <= ref_dist[rows, -1:] * (1 + 1e-9) + 1e-300)
        if own is not None:
            good &= f != np.asarray(own)[rows, None]
        hits[rows] = good.sum(axis=1)
    slots = m if own is None else m - 1
    return np.minimum(hits, slots) / slots


def _ivf_indices(X, n_query: int) -> np.ndarray:
    """Approximate ``n_query`` nearest rows (self included) of every row of dense ``X`` by
    faiss' inverted file (``IndexIVFFlat``), its ``nprobe`` calibrated to a measured recall.

    The points, centred and in float32, are split among ``nlist = IVF_LISTS sqrt(n)`` k-means
    cells (faiss' k-means, ``IVF_KMEANS_ITER`` iterations on a seeded sample of
    ``IVF_TRAIN_PER_LIST`` points per cell); a query scans the points of its ``nprobe``
    nearest cells.  ``nprobe`` is chosen by measurement: ``s = IVF_SAMPLE`` seeded sample
    points are searched exactly (:func:`_exact_indices`) and by the index with ``nprobe = 4,
    6, 9, ...`` (x1.5) until the mean ``r`` of the sample's recalls ``r_i`` of their
    ``n_query - 1`` other neighbours (:func:`_sample_recall`, ties counted) has a lower bound
    at the target,

        r - 3 std(r_i) / sqrt(s) >= IVF_RECALL   (three standard errors of the mean),

    and the same bound holds on a second seeded sample of ``s`` points (searched exactly as
    well), which did not take part in the choice: the first setting to pass on one sample is
    likely one that the sample favours (USPS replicated to 1e6 points passed at 9 probes
    with a recall of 0.9898 on fresh points).  The whole set is then searched with that
    ``nprobe``, the queries in cell order (consecutive
    queries scan the same cells: about half the time at 1e5 points in 64-d, measured in the
    scale guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings").  Where
    the
    recall needs more than ``IVF_MAX_SHARE`` of the cells, the exact search is faster and
    runs instead (a float32 scan of faiss costs several times a BLAS product per pair).
    Sample rows keep their exact neighbours; rows with too few points in their cells (index
    -1) are searched exactly.  The recall is a measured estimate, not a bound: the sample is
    random, the rest of the points are not checked.  :data:`IVF_LAST` records the choice.
    """
    faiss = _import_faiss()
    n, d = X.shape
    IVF_LAST.clear()
    nlist = int(min(IVF_LISTS * np.sqrt(n), n // (2 * n_query)))
    if nlist < 8:  # too few points for cells worth probing: exact is cheap here
        return _exact_indices(X, X, n_query)
    rng = np.random.default_rng(IVF_RANDOM_STATE)
    s = min(n // 4, IVF_SAMPLE)  # both samples at most half the points
    drawn = rng.choice(n, 2 * s, replace=False)  # the calibration sample, then the check's
    sample = np.sort(drawn)
    ref, ref_dist = _exact_indices(X, X[sample], n_query, return_distance=True)
    halves = [np.isin(sample, drawn[:s]), np.isin(sample, drawn[s:])]
    mean = X.mean(axis=0)

    def block32(rows):
        return np.ascontiguousarray(X[rows] - mean, dtype=np.float32)

    quantizer = faiss.IndexFlatL2(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist)
    index.cp.niter = IVF_KMEANS_ITER
    index.cp.seed = IVF_RANDOM_STATE
    index.cp.min_points_per_centroid = 1  # a small sample is deliberate: no warning
    index.cp.max_points_per_centroid = IVF_TRAIN_PER_LIST + 1
    train = np.sort(rng.choice(n, min(n, IVF_TRAIN_PER_LIST * nlist), replace=False))
    index.train(block32(train))
    for rows in _chunks.row_blocks(n, 4 * d):
        index.add(block32(rows))
    lists = index.invlists  # the points of each cell, in cell order: the queries' order
    order = np.concatenate(
        [faiss.rev_swig_ptr(lists.get_ids(c), lists.list_size(c)) for c in range(nlist)]
    ).astype(np.intp)
    k = n_query
    nprobe, top = IVF_FIRST_PROBE, max(1, int(IVF_MAX_SHARE * nlist))

    def recall_bound(part: np.ndarray) -> tuple[float, float]:
        """The recall of the sample points of ``part`` at the current ``nprobe``: its mean
        and the lower bound of three standard errors."""
        rows = sample[part]
        found = index.search(block32(rows), k)[1]
        per_query = _sample_recall(X, X[rows], found, ref_dist[part], own=rows)
        r = float(per_query.mean())
        return r, r - 3 * float(per_query.std()) / np.sqrt(rows.size)

    while True:
        index.nprobe = min(nprobe, nlist)
        r, bound = recall_bound(halves[0])
        if bound >= IVF_RECALL:
            # checked on points the calibration did not choose by: stopping at the first
            # setting that passes favours a sample that happens to pass
            check, check_bound = recall_bound(halves[1])
            if check_bound >= IVF_RECALL:
                break
        if nprobe >= top:  # the recall needs most cells: the exact search is faster
            IVF_LAST.update(nlist=nlist, nprobe="exact", sample=s, sample_recall=r)
            return _exact_indices(X, X, n_query)
        nprobe = min(top, int(np.ceil(nprobe * 1.5)))
    IVF_LAST.clear()
    IVF_LAST.update(nlist=nlist, nprobe=index.nprobe, sample=s, sample_recall=r, check_recall=check)
    ind = np.empty((n, k), dtype=np.intp)
    for rows in _chunks.row_blocks(n, 4 * d + 8 * k):
        ind[order[rows]] = index.search(block32(order[rows]), k)[1]
    ind[sample] = ref
    bad = np.flatnonzero((ind < 0).any(axis=1))
    if bad.size:
        ind[bad] = _exact_indices(X, X[bad], n_query)
    return ind


def _nndescent_indices(X, n_query: int) -> np.ndarray:
    """Approximate ``n_query`` nearest rows (self first) of every row of ``X`` by NN-descent.

    ``pynndescent.NNDescent`` is built with ``n_neighbors = max(n_query,
    NNDESCENT_MIN_NEIGHBORS)`` (a larger working graph raises recall; the extra columns are
    dropped), ``random_state=NNDESCENT_RANDOM_STATE`` (reproducible), ``n_jobs=None`` (numba's
    thread count: all cores unless limited by ``NUMBA_NUM_THREADS`` /
    ``numba.set_num_threads``) and pynndescent's defaults otherwise (``low_memory=True``,
    ``n_trees`` / ``n_iters`` from n_samples).  Its float32 distances are not used.  Rows where
    NN-descent found too few neighbours (index -1) are searched exactly; inputs too small for
    the working graph are searched exactly altogether.
    """
    NNDescent = _import_nndescent()
    n = X.shape[0]
    build_k = max(n_query, NNDESCENT_MIN_NEIGHBORS)
    if build_k >= n:  # NN-descent needs more points than neighbours; exact is cheap here
        return _exact_indices(X, X, n_query)
    with warnings.catch_warnings():  # rows with missing neighbours are repaired below
        warnings.filterwarnings("ignore", message="Failed to correctly find n_neighbors")
        index = NNDescent(X, n_neighbors=build_k, random_state=NNDESCENT_RANDOM_STATE, n_jobs=None)
        ind = np.asarray(index.neighbor_graph[0][:, :n_query], dtype=np.intp)
    bad = np.flatnonzero((ind < 0).any(axis=1))
    if bad.size:
        ind[bad] = _exact_indices(X, X[bad], n_query)
    return ind


HEAT_FLOOR = 1e-4
"""The smallest heat weight of the kNN graphs and out-of-sample rule of GFHF and Poisson
learning (:func:`weighted_knn_graphs` applies it; other models take :func:`knn_graph`'s heat
weights as they are): ``max(exp(-||x_i - x_j||^2 / t), HEAT_FLOOR)``, which raises the edges
longer than about 3 times the root-mean-square edge length.

Without it, one width ``t`` for all edges gives the points of sparse regions weights hundreds
of orders of magnitude below those of dense ones (1e-116 on two moons of 1e6 points): the
graph breaks into sets joined to the rest by less than rounding keeps (numerically singular
systems) and the multigrid solve needs more iterations at every size (87 at 1e6 points, 197
at 2e6).  With it every kNN edge joins (an underflowed weight no longer cuts the graph), an
edge is at most 1e4 times another, and the multigrid solve takes 16-28 iterations at 1e6-2e6
points, while a sparse gap between classes stays weak (the accuracies with and without it
are in the scale guide, :doc:`/user_guide/scale`, "Graph solves on large graphs")."""


SELF_TUNING_FLOOR = 1e-8
"""The smallest self-tuning weight of the kNN graphs of GFHF and Poisson learning
(:func:`weighted_knn_graphs` applies it; :func:`self_tuning_graph` gives the weights as they
are): ``max(exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j)), SELF_TUNING_FLOOR)``.

A kNN edge is no longer than the larger of its two ends' scales, so its self-tuning weight is
at least ``exp(-4 r)``, ``r`` the ratio of the larger scale to the smaller: above
``exp(-4) = 0.018`` between points of comparable spacing.  Where the scales of one data set
spread over orders of magnitude -- a tight cluster beside sparse points -- the edges between
them fall to ``exp(-4 r)`` for ``r`` in the thousands or millions: 1e-80 and below,
subnormal, or 0 (underflow: the edge lost).  Four points ``[-0.054, 0, 1e-6, -10]``, one
neighbour each: the edge from the cluster to its nearest point underflowed, and the far
point's only edge weighed 1e-320, and so did its degree; Poisson learning's solve divided by
it and returned infinite and NaN scores, and predicted 0 for the far point, the only label of
class 1.  With the floor every kNN edge joins, no degree is subnormal, and a weight is at most
1e8 times another, so a solve that divides by a degree stays finite.

Not :data:`HEAT_FLOOR`'s 1e-4: a small self-tuning weight is not a global width gone wrong
but what the local scales are there to show, an edge between a dense region and a sparse
one.  Raised to 1e-4, such weights carry too much: Poisson learning lost accuracy
significantly on the sets with many such edges (ionosphere, glass, automobile).  At 1e-8,
weights that small next to degrees of order 1 change no label: GFHF's and Poisson learning's
accuracies in every cell of the quick tier of ``benchmarks/defaults_suite.py`` were those
without a floor (measured in the scale guide, :doc:`/user_guide/scale`, "Measurements behind
the solvers' settings")."""


def knn_graph(
    X: np.ndarray,
    n_neighbors: int = 6,
    *,
    weights: Weights = "connectivity",
    t: float | None = None,
    symmetrize: bool = True,
    algorithm: Algorithm = "auto",
    metric: Metric = "euclidean",
) -> sp.csr_matrix:
    """Symmetric kNN adjacency matrix of the rows of ``X``.

    Memory is O(n_samples * n_neighbors) (plus the search structure); no n x n array is formed.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int
        Neighbours per point, not counting the point itself; must be < n_samples.
    weights : {"connectivity", "heat", "dot"}
    t : float or None
        Heat-kernel width, used when ``weights="heat"``; None (default) takes the mean
        squared length of the graph's edges of positive length (edges between copies of a
        point have weight 1 whatever ``t``; 1 when every edge has length 0).
    symmetrize : bool
        If True (default) ``i ~ j`` iff ``j in kNN(i)`` or ``i in kNN(j)``.
    algorithm : {"auto", "exact", "approximate"}, default="auto"
        Neighbour search.  ``"exact"``: scikit-learn ``NearestNeighbors`` (k-d tree below 16
        features, chunked brute force above).  ``"approximate"``: faiss' inverted file
        calibrated to a measured recall of 0.99 (or NN-descent when only ``pynndescent`` is
        installed; optional extra ``pip install "structreg[ann]"``).  ``"auto"``:
        approximate only for large, high-dimensional dense data, see
        :func:`resolve_algorithm` and the module docstring.  Edge weights are always
        computed exactly (float64) from ``X``.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: neighbours by cosine similarity, for text-like rows (TF-IDF, counts):
        the graph of the rows scaled to unit norm (:func:`unit_rows`), whose Euclidean
        distances ``||u - v||^2 = 2 (1 - cos(u, v))`` rank as the cosine distance; edge
        lengths (heat weights) are those chords.  Sparse rows stay sparse.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Sorted indices, zero diagonal.
    """
    store = _GRAPH_STORE.get()
    if store is None:
        return _knn_graph(X, n_neighbors, weights, t, symmetrize, algorithm, metric)
    key = ("knn_graph", id(X), n_neighbors, weights, t, symmetrize, algorithm, metric)
    if key not in store:
        store[key] = (X, _knn_graph(X, n_neighbors, weights, t, symmetrize, algorithm, metric))
    return store[key][1].copy()


def _knn_graph(X, n_neighbors, weights, t, symmetrize, algorithm, metric) -> sp.csr_matrix:
    X = unit_rows(X) if check_metric(metric) == "cosine" else _as_points(X)
    n = X.shape[0]
    _check_weights(weights, t)
    _check_algorithm(algorithm)
    s, X = unit_scaled(X, far_only=True)  # see the module docstring: Scale
    t = _width(t, s)
    k = n_neighbors
    ind = _knn_indices(X, k, algorithm, cut=True)
    indptr = np.arange(0, n * k + 1, k)
    if not symmetrize:
        rows, cols = np.repeat(np.arange(n), k), ind.ravel()
        dist = _pair_distances(X, rows, cols) if weights == "heat" else None
        data = _edge_weights(X, rows, cols, dist, weights, t, s)
        W = sp.csr_matrix((data, cols, indptr), (n, n))
        W.sort_indices()
        return W
    # union of both directions as a sparse pattern (the k neighbours of a row are distinct)
    union_indptr, cols, rows = _union_pattern(ind, n)
    # every weight is a symmetric function of (i, j) computed the same way both ways round,
    # so W is exactly symmetric
    dist = _pair_distances(X, rows, cols) if weights == "heat" else None
    data = _edge_weights(X, rows, cols, dist, weights, t, s)
    return sp.csr_matrix((data, cols, union_indptr), shape=(n, n))


def _edge_weights(X, rows, cols, dist, weights, t, s: float = 1.0):
    """Edge weights of the pairs, from the points ``X`` (divided by ``s``), their distances
    and the width ``t`` already divided by ``s^2`` (:func:`_width`)."""
    if weights == "connectivity":
        return np.ones(rows.shape[0])
    if weights == "heat":
        if t is None:
            t = _mean_positive(dist**2)
        return np.exp(-(dist**2) / (t if t > 0 else 1.0))
    dots = _pair_dots(X, rows, cols)
    if s != 1.0:
        with np.errstate(over="ignore"):
            dots = dots * (s * s)
        if not np.isfinite(dots).all():
            raise ValueError(
                f"weights='dot': the inner products of X (largest absolute value about "
                f"{s:.3g}) overflow float64; rescale X"
            )
    return dots


def _row_hashes(X: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every row's float64 bits (``-0.0`` as ``0.0``): equal rows hash alike,
    and different rows rarely do.  O(n d) integer arithmetic, a block of rows at a time."""
    n, d = X.shape
    weights = np.random.default_rng(0).integers(1, 2**63, size=d, dtype=np.uint64) | np.uint64(1)
    out = np.empty(n, dtype=np.uint64)
    for rows in _chunks.row_blocks(n, 2 * d):
        bits = np.ascontiguousarray(X[rows] + 0.0).view(np.uint64)
        out[rows] = (bits * weights).sum(axis=1)  # modulo 2^64
    return out


def _mean_positive(squared_lengths: np.ndarray) -> float:
    """The default heat width: the mean of the positive squared edge lengths (an edge between
    copies of a point has length 0 and weight 1 whatever the width, so such edges do not
    shrink it), or 1 when no edge has positive length (every weight is then 1)."""
    positive = squared_lengths[squared_lengths > 0]
    return float(np.mean(positive)) if positive.size else 1.0


def _nearest_distinct_distance(X, rows: np.ndarray) -> np.ndarray:
    """For the given rows of the points ``X``: the distance to the nearest point of ``X`` at
    a positive distance from them (the nearest point that is not a copy), or 0 where every
    point is a copy of the row."""
    first, inverse = _distinct_rows(X)
    if first is None:  # no copies at all: the nearest other point
        first, inverse = np.arange(X.shape[0]), np.arange(X.shape[0])
    out = np.zeros(rows.size)
    if first.size < 2 or rows.size == 0:
        return out
    P = X[first]
    places = np.unique(inverse[rows])
    ind = _drop_self(_exact_indices(P, P[places], 2), places, 1)[:, 0]
    nearest = np.zeros(first.size)
    nearest[places] = _pair_distances(P, places, ind)
    return nearest[inverse[rows]]


def self_tuning_graph(
    X: np.ndarray, n_neighbors: int = 7, *, algorithm: Algorithm = "auto"
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Symmetric kNN graph with locally scaled ("self-tuning") heat weights.

        w_ij = exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j)),   sigma_i = ||x_i - x_(k)(i)||,

    ``x_(k)(i)`` the ``n_neighbors``-th nearest other point of ``x_i``: each edge is measured
    against the local spacing of the data at both ends (Zelnik-Manor & Perona 2004, with the
    factor 4 of graphlearning's kNN weights, ``exp(-4 d^2 / sigma_i^2)``, Calder et al.), so
    dense and sparse regions get comparable weights where one global width ``t`` leaves the
    sparse ones nearly disconnected.  The edge set is that of :func:`knn_graph` (``i ~ j``
    when either is among the other's ``n_neighbors`` nearest), and the weights are exactly
    symmetric.  A point with ``n_neighbors`` duplicates would have ``sigma_i = 0``; it takes
    its distance to the nearest point that is not a copy of it instead (1 when all points
    are copies of one), so every edge weight is defined and copies are joined by weight 1.
    The graphs of GFHF and Poisson learning (``weighted_knn_graphs`` in this module) differ
    in two ways: their scales count copies once (``distinct_local_scales``) and their
    weights have a floor (``SELF_TUNING_FLOOR``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int, default=7
    algorithm : {"auto", "exact", "approximate"}, default="auto"
        Neighbour search, as in :func:`knn_graph`.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Sorted indices, zero diagonal.
    sigma : ndarray of shape (n_samples,)
        The local scales ``sigma_i``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> W, sigma = self_tuning_graph(X, 1)
    >>> sigma  # distance to the nearest other point
    array([1., 1., 2.])
    >>> bool(np.isclose(W[1, 2], np.exp(-4 * 2.0**2 / (1.0 * 2.0))))  # sigma_1 sigma_2 = 2
    True
    """
    X = _as_points(X)
    _check_algorithm(algorithm)
    n, k = X.shape[0], n_neighbors
    # nearest first; a search cut from a longer one keeps that order, and it is used only
    # when no tie straddles the cut, so the k-th distance and the neighbour set are exact
    ind = _knn_indices(X, k, algorithm, cut=True)
    sigma = _local_scales(X, ind)
    indptr, cols, rows = _union_pattern(ind, n)
    d2 = _pair_distances(X, rows, cols) ** 2
    data = self_tuning_weights(d2, sigma[rows], sigma[cols])
    return sp.csr_matrix((data, cols, indptr), shape=(n, n)), sigma


def _local_scales(X, ind: np.ndarray) -> np.ndarray:
    """Every point's distance to its last neighbour in ``ind`` (nearest first): the
    ``sigma_i`` of self-tuning weights (:func:`positive_scales` where that is 0)."""
    return positive_scales(_pair_distances(X, np.arange(X.shape[0]), ind[:, -1]), X)


def distinct_local_scales(X, ind: np.ndarray) -> np.ndarray:
    """Every point's distance to its k-th nearest *distinct* other location (k =
    ``ind.shape[1]``, ``ind`` the k nearest other rows of the points ``X``, nearest first):
    the ``sigma_i`` of the self-tuning weights of :func:`weighted_knn_graphs`, where copies of
    a point count once, as in :func:`neighbor_scale`.  Where X has k or fewer other distinct
    locations, the distance to the farthest of them; 1 when all rows are one point.

    A point whose k nearest rows are k distinct locations other than its own keeps the
    distance to its k-th neighbour (X without copies: every point, bit for bit
    :func:`self_tuning_graph`'s scales).  The others -- copies, and points among whose k
    nearest rows a location repeats -- are searched again among the distinct points only
    (one exact search of those locations).

    Why: counted as neighbours, copies shrink the scales around them.  c copies of a point
    are each other's nearest neighbours, so their scale is the distance to their
    ``(k - c + 1)``-th nearest other location (the nearest one, from k copies on), and so is
    that of the points beside them whose k nearest rows they fill; the weights
    ``exp(-4 d^2 / (sigma_i sigma_j))`` of the edges leaving the copies then fall by orders of
    magnitude.  Labeled copies are joined to the rest of the graph by these edges only, and
    GFHF's labels fall to chance where copies are counted (measured on two moons in the scale
    guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings").
    """
    n, k = ind.shape
    sigma = _pair_distances(X, np.arange(n), ind[:, -1])
    # a copy is its copies' nearest row (distance 0): with no nearest row at distance 0 there
    # are none, and the O(n d) check spares the search for copies on every fit
    if np.all(_pair_distances(X, np.arange(n), ind[:, 0]) > 0):
        return sigma
    first, inverse = _distinct_rows(X)
    if first is None:  # no copies: every point's k nearest rows are k distinct locations
        return sigma
    # the locations of each point and its k nearest rows: one repeated marks a point whose
    # k-th nearest row is not its k-th nearest distinct location
    places = np.sort(np.column_stack([inverse, inverse[ind]]), axis=1)
    crowded = np.flatnonzero((np.diff(places, axis=1) == 0).any(axis=1))
    m = first.size
    if m < 2:  # all rows one point: every weight is 1 whatever the scale
        sigma[crowded] = 1.0
        return sigma
    P = X[first]
    queries = np.unique(inverse[crowded])
    kk = min(k, m - 1)
    nearest = _drop_self(_exact_indices(P, P[queries], kk + 1), queries, kk)
    scale = np.zeros(m)
    scale[queries] = _pair_distances(P, queries, nearest[:, -1])
    sigma[crowded] = scale[inverse[crowded]]
    return sigma


def positive_scales(sigma: np.ndarray, X) -> np.ndarray:
    """Local scales ``sigma`` (one per row of the points ``X``) with every zero -- a point with
    ``n_neighbors`` copies -- replaced by the distance to the nearest point that is not a
    copy, or 1 when there is none: every self-tuning weight is then defined."""
    copies = np.flatnonzero(~(sigma > 0))
    if copies.size:
        sigma = sigma.copy()
        nearest = _nearest_distinct_distance(np.asarray(X, dtype=float), copies)
        sigma[copies] = np.where(nearest > 0, nearest, 1.0)
    return sigma


def heat_width(squared_lengths: np.ndarray, X, n_neighbors: int) -> float:
    """The default heat width: the mean of the positive squared edge lengths (lengths 0 join
    copies of a point, whose weight is 1 whatever the width); when there are none, the
    neighbour scale of the distinct points of ``X`` (:func:`neighbor_scale`), or 1 when all
    points are one."""
    positive = squared_lengths[squared_lengths > 0]
    if positive.size:
        return float(np.mean(positive))
    try:
        return neighbor_scale(X, n_neighbors)
    except ValueError:  # all points identical: every weight is 1 whatever the width
        return 1.0


def _union_pattern(ind: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, cols, rows)`` of the symmetric kNN pattern of the neighbour lists ``ind``
    (n x k, distinct per row): ``i ~ j`` when either is among the other's neighbours, sorted
    indices, one row index per edge.  O(nnz) CSR additions instead of sorting n k 2 keys."""
    k = ind.shape[1]
    directed = sp.csr_matrix(
        (np.ones(n * k, dtype=np.int8), ind.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
    )
    union = directed + directed.T.tocsr()
    union.sort_indices()
    rows = np.repeat(np.arange(n, dtype=union.indices.dtype), np.diff(union.indptr))
    return union.indptr, union.indices, rows


def self_tuning_weights(d2: np.ndarray, sigma_i: np.ndarray, sigma_j: np.ndarray) -> np.ndarray:
    """The self-tuning weights ``exp(-4 d_ij^2 / (sigma_i sigma_j))`` of edges of squared
    lengths ``d2`` (:func:`self_tuning_graph`; also the Dask graph's)."""
    return np.exp(-4.0 * d2 / (sigma_i * sigma_j))


@dataclass
class WeightedGraph:
    """A symmetric kNN graph with one weighting, and the scale that weighting used.

    Attributes
    ----------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Sorted indices, zero diagonal, no explicit zeros; or a graph held elsewhere with the
        same questions answered (a
        :class:`~structreg.structure.distributed_graphs.PartitionedGraph`).
    weights : {"self-tuning", "heat", "connectivity"}
    t : float or None
        ``"heat"``: the width, in the units of ``X``.
    local_scale : ndarray of shape (n,) or None
        ``"self-tuning"``: every point's ``sigma_i``.
    """

    W: sp.csr_matrix
    weights: str
    t: float | None = None
    local_scale: np.ndarray | None = None

    def release(self) -> bool:
        """Let a graph held elsewhere (one with a ``release`` method: rows on Dask workers)
        drop its rows; whether there was one."""
        release = getattr(self.W, "release", None)
        if release is None:
            return False
        release()
        return True


def weighted_knn_graphs(
    X,
    n_neighbors: int,
    weightings: tuple[str, ...],
    *,
    t: float | None = None,
    floor: float = HEAT_FLOOR,
    self_tuning_floor: float = SELF_TUNING_FLOOR,
    algorithm: Algorithm = "auto",
) -> list[WeightedGraph]:
    """The symmetric kNN graph of the rows of ``X`` with each of ``weightings``, from one
    neighbour search and one computation of the edge lengths.

    ``"self-tuning"``: ``max(exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j)), self_tuning_floor)``
    (:data:`SELF_TUNING_FLOOR` by default), ``sigma_i`` the distance from ``x_i`` to its
    ``n_neighbors``-th nearest distinct other point (:func:`distinct_local_scales`: copies
    count once); without copies and with no weight below the floor, the weights of
    :func:`self_tuning_graph`.  ``"heat"``: ``max(exp(-||x_i - x_j||^2 / t), floor)``
    (:data:`HEAT_FLOOR` by default), ``t`` the given width or the mean squared length of the
    edges of positive length (when no edge has one: the neighbour scale of the distinct
    points, :func:`neighbor_scale`, or 1 when all points are one).  ``"connectivity"``: 1 on
    every edge.  The edge set is :func:`knn_graph`'s, the same for every weighting: with the
    floors, every edge has a positive weight.
    """
    X = _as_points(X)
    _check_algorithm(algorithm)
    n, k = X.shape[0], n_neighbors
    s, Z = unit_scaled(X, far_only=True)  # lengths measured on X / s (module docstring)
    ind = _knn_indices(Z, k, algorithm, cut=True)  # nearest first
    indptr, cols, rows = _union_pattern(ind, n)
    d2 = _pair_distances(Z, rows, cols) ** 2  # squared lengths on X / s
    out = []
    for weights in weightings:
        t_used, sigma = None, None
        if weights == "self-tuning":
            sigma = distinct_local_scales(Z, ind)
            data = np.maximum(self_tuning_weights(d2, sigma[rows], sigma[cols]), self_tuning_floor)
        elif weights == "heat":
            width = _width(t, s)
            if width is None:
                width = heat_width(d2, Z, n_neighbors)
            data = np.maximum(np.exp(-d2 / width), floor)
            t_used = float(t) if t is not None else width * s * s
        elif weights == "connectivity":
            data = np.ones(cols.size)
        else:
            raise ValueError(
                f"weights must be 'self-tuning', 'heat' or 'connectivity', got {weights!r}"
            )
        W = sp.csr_matrix((data, cols.copy(), indptr.copy()), shape=(n, n))
        W.eliminate_zeros()  # weights that underflowed (with a floor of 0) join nothing
        scale = None if sigma is None else sigma * s
        out.append(WeightedGraph(W, weights, t=t_used, local_scale=scale))
    return out


def heat_reweight(W: sp.spmatrix, X, t: float | None = None) -> sp.csr_matrix:
    """The edges of ``W`` with heat weights ``exp(-||x_i - x_j||^2 / t)``; ``t=None`` is the mean
    squared edge length of ``W`` (one width for the whole graph)."""
    W = sp.coo_matrix(W)
    rows, cols = W.row, W.col
    s, X = unit_scaled(_as_points(X), far_only=True)
    dist = _pair_distances(X, rows, cols)
    data = _edge_weights(None, rows, cols, dist, "heat", _width(t, s))
    return sp.csr_matrix((data, (rows, cols)), shape=W.shape)


def check_metric(metric) -> str:
    """``metric`` if it is one the graphs know, else a ValueError."""
    if metric not in ("euclidean", "cosine"):
        raise ValueError(f"metric must be 'euclidean' or 'cosine', got {metric!r}")
    return metric


def unit_rows(X):
    """The rows of X scaled to unit Euclidean norm (float64; CSR for sparse input, never
    densified): the points whose Euclidean geometry is X's cosine geometry.  Zero rows have
    no direction and are refused.

    Examples
    --------
    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 2.0]]))
    array([[0.6, 0.8],
           [0. , 1. ]])
    """
    X = unit_scaled(_as_points(X), far_only=True)[1]  # norms neither over- nor underflow
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()) if sp.issparse(X) else None
    if norms is None:
        norms = np.linalg.norm(X, axis=1)
    zero = np.flatnonzero(~(norms > 0))
    if zero.size:
        raise ValueError(
            f"metric='cosine' needs non-zero rows: {zero.size} row(s) of X are all zero (or "
            f"not finite), e.g. row {zero[0]}; drop them or use metric='euclidean'"
        )
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    return X / norms[:, None]


def _as_points(X):
    """Dense float array, or CSR for sparse input (distances are computed pairwise)."""
    return sp.csr_matrix(X, dtype=float) if sp.issparse(X) else np.asarray(X, dtype=float)


def _pair_dots(X, rows, cols) -> np.ndarray:
    """``<x_i, x_j>`` for the given pairs, dense or sparse X (chunked: bounded temporaries)."""
    return _chunked_pairs(_pair_dots_block, X, rows, cols)


def _pair_distances(X, rows, cols) -> np.ndarray:
    """``||x_i - x_j||`` for the given pairs, dense or sparse X (chunked: bounded temporaries)."""
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()

        def block(X, r, c):
            d2 = sq[r] + sq[c] - 2.0 * _pair_dots_block(X, r, c)
            return np.sqrt(np.maximum(d2, 0.0))

        return _chunked_pairs(block, X, rows, cols)
    if X.shape[1] < 8:
        # few coordinates: gather one contiguous column at a time (about twice as fast at
        # n = 1e6 in 2-D); numpy sums fewer than 8 terms sequentially, so the result is the
        # same as np.sum(..., axis=1) bit for bit
        columns = np.ascontiguousarray(X.T)

        def by_column(X, r, c):
            acc = np.zeros(len(r))
            for xj in columns:
                dj = xj[r] - xj[c]
                dj *= dj
                acc += dj
            return np.sqrt(acc)

        return _chunked_pairs(by_column, X, rows, cols)
    return _chunked_pairs(_pair_distances_block, X, rows, cols)


def _pair_dots_block(X, rows, cols) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X[rows].multiply(X[cols]).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X[rows], X[cols])


def _pair_distances_block(X, rows, cols) -> np.ndarray:
    return np.sqrt(np.sum((X[rows] - X[cols]) ** 2, axis=1))


def _chunked_pairs(func, X, rows, cols) -> np.ndarray:
    """``func(X, rows, cols)`` over chunks of pairs; each row's value does not depend on the
    chunking, so the result equals the unchunked one bit for bit."""
    m = len(rows)
    width = X.shape[1] if not sp.issparse(X) else max(1, X.nnz // max(1, X.shape[0]))
    # a chunk holds about four chunk x width float64 temporaries (rows, cols, their
    # difference, its square): a quarter of the one memory budget each
    step = max(1024, _chunks.rows_per_block(width, block_bytes() // 4))
    if m <= step:
        return func(X, rows, cols)
    out = np.empty(m)
    for s in range(0, m, step):
        out[s : s + step] = func(X, rows[s : s + step], cols[s : s + step])
    return out


def check_graph(W, n_samples: int) -> sp.csr_matrix:
    """Validate a user-supplied adjacency matrix over ``n_samples`` training points."""
    W = sp.csr_matrix(W, dtype=float)
    if W.shape != (n_samples, n_samples):
        raise ValueError(
            f"precomputed graph has shape {W.shape}; it must be (n_samples, n_samples) = "
            f"({n_samples}, {n_samples}) over the training points"
        )
    if not np.all(np.isfinite(W.data)):
        raise ValueError("precomputed graph contains NaN or infinite weights")
    if abs(W - W.T).max() > 1e-10 * max(1.0, abs(W).max()):
        raise ValueError("precomputed graph must be symmetric (W == W.T)")
    if (W.data < 0).any():
        raise ValueError("precomputed graph has negative weights; a Laplacian needs W >= 0")
    # no self-loops: subtract the diagonal (setdiag on a CSR matrix would change its sparsity
    # structure in place, which SciPy warns about), then drop the zeros left
    W = sp.csr_matrix(W - sp.diags(W.diagonal()))
    W.eliminate_zeros()
    return W


def laplacian(W: sp.spmatrix, *, normalized: bool = False) -> sp.csr_matrix:
    """Graph Laplacian ``L = D - W``, or ``I - D^{-1/2} W D^{-1/2}`` if ``normalized``.

    Isolated vertices (degree 0) get a zero row/column in both forms, so they are simply
    not penalised.
    """
    W = sp.csr_matrix(W, dtype=float)
    deg = np.asarray(W.sum(axis=1)).ravel()
    if not normalized:
        return (sp.diags(deg) - W).tocsr()
    with np.errstate(divide="ignore"):
        inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
    Dm = sp.diags(inv_sqrt)
    return (sp.diags((deg > 0).astype(float)) - Dm @ W @ Dm).tocsr()


def split_by_labels(
    W: sp.spmatrix, y: np.ndarray, labeled: np.ndarray
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Split a graph into its within-class and between-class parts.

    ``y`` holds integer class codes; only edges with both ends labeled are kept.
    Returns ``(W_within, W_between)`` with ``W_within + W_between <= W`` entrywise.
    """
    W = sp.coo_matrix(W)
    both = labeled[W.row] & labeled[W.col]
    same = both & (y[W.row] == y[W.col])
    diff = both & (y[W.row] != y[W.col])
    shape = W.shape

    def pick(mask):
        return sp.csr_matrix((W.data[mask], (W.row[mask], W.col[mask])), shape=shape)

    return pick(same), pick(diff)


def within_class_graph(X, y, labeled=None, n_neighbors=6, **kw) -> sp.csr_matrix:
    """Edges of the kNN graph of ``X`` whose two ends share a label (DRLSC's G_w).

    ``**kw`` (``weights``, ``t``, ``symmetrize``, ``algorithm``) go to :func:`knn_graph`."""
    labeled = np.ones(len(y), bool) if labeled is None else np.asarray(labeled, bool)
    return split_by_labels(knn_graph(X, n_neighbors, **kw), np.asarray(y), labeled)[0]


def between_class_graph(X, y, labeled=None, n_neighbors=6, **kw) -> sp.csr_matrix:
    """Edges of the kNN graph of ``X`` whose two ends have different labels (DRLSC's G_b).

    ``**kw`` (``weights``, ``t``, ``symmetrize``, ``algorithm``) go to :func:`knn_graph`."""
    labeled = np.ones(len(y), bool) if labeled is None else np.asarray(labeled, bool)
    return split_by_labels(knn_graph(X, n_neighbors, **kw), np.asarray(y), labeled)[1]


def other_class_graph(
    X: np.ndarray, y: np.ndarray, labeled: np.ndarray, n_neighbors: int = 6, **kw
) -> sp.csr_matrix:
    """Heterogeneous neighbourhoods: each labeled point joined to its k nearest labeled points
    of *other* classes (pooled), symmetrised by union (LDR's zeta-neighbourhood graph).

    Only ``weights="connectivity"`` and ``"heat"`` are meaningful here; ``t=None`` takes the mean
    squared edge length.  The search is always exact (it only queries labeled points); an
    ``algorithm`` keyword is validated for symmetry with the other builders, then ignored.
    """
    X = _as_points(X)
    n = X.shape[0]
    weights, t = kw.get("weights", "connectivity"), kw.get("t")
    _check_weights(weights, t)
    _check_algorithm(kw.get("algorithm", "auto"))
    s, X = unit_scaled(X, far_only=True)
    t = _width(t, s)
    rows, cols = [], []
    for c in np.unique(y[labeled]):
        own = np.flatnonzero(labeled & (y == c))
        others = np.flatnonzero(labeled & (y != c))
        if len(others) < n_neighbors:
            raise ValueError(
                f"other-class graph: only {len(others)} labeled points outside class {c}, "
                f"fewer than n_neighbors={n_neighbors}"
            )
        nn = NearestNeighbors(n_neighbors=n_neighbors).fit(X[others])
        ind = nn.kneighbors(X[own], return_distance=False)
        rows.append(np.repeat(own, n_neighbors))
        cols.append(others[ind.ravel()])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    pairs = np.unique(np.concatenate([rows * n + cols, cols * n + rows]))
    rows, cols = pairs // n, pairs % n
    dist = _pair_distances(X, rows, cols)
    return sp.csr_matrix(
        (_edge_weights(X, rows, cols, dist, weights, t, s), (rows, cols)), shape=(n, n)
    )


def class_wise_graph(
    X: np.ndarray, y: np.ndarray, labeled: np.ndarray, n_neighbors: int = 6, **kw
) -> sp.csr_matrix:
    """Block-diagonal graph: one kNN graph inside each class of the labeled points.

    This is the supervised manifold-regularisation ("MR") construction: every class gets
    its own graph, and unlabeled points stay isolated.  Each class needs more than
    ``n_neighbors`` labeled points.  ``**kw`` (``weights``, ``t``, ``symmetrize``,
    ``algorithm``) go to :func:`knn_graph`, once per class (so ``algorithm="auto"`` applies its
    size threshold to each class).
    """
    X = _as_points(X)
    n = X.shape[0]
    blocks = []
    for c in np.unique(y[labeled]):
        idx = np.flatnonzero(labeled & (y == c))
        if len(idx) <= n_neighbors:
            raise ValueError(
                f"class-wise graph: class {c} has {len(idx)} labeled points, fewer than "
                f"n_neighbors + 1 = {n_neighbors + 1}; lower n_neighbors"
            )
        Wc = sp.coo_matrix(knn_graph(X[idx], n_neighbors, **kw))
        blocks.append((Wc.data, idx[Wc.row], idx[Wc.col]))
    data, r, c = (np.concatenate(p) for p in zip(*blocks, strict=True)) if blocks else ([], [], [])
    return sp.csr_matrix((data, (r, c)), shape=(n, n))
