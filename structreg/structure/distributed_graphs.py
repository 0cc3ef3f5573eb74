"""The kNN graph of a Dask array, built and kept row block by row block on the workers.

:func:`partitioned_knn_graph` takes a ``dask.array`` whose rows are split into P blocks and,
under a ``dask.distributed`` client, finds every point's ``n_neighbors`` nearest other points
exactly: each block's points are searched for among each block's points (P x P tasks, each
the search :func:`~structreg.structure.graphs.knn_graph` runs in memory, on the two blocks
only), and the P candidate lists of a block are merged by distance, ties by global index, as
the in-memory search orders them.  The directed edges are then sent to the blocks that own
their other end, so every block holds its rows of the symmetric graph (``i ~ j`` when either
is among the other's nearest) with the length of every edge.  The edge weights are computed
from those lengths on the workers (:meth:`PartitionedGraph.weighted`).

What reaches the client: vectors of length n (the local scales, degrees, products) and a few
numbers per block.  The points stay where Dask put them, and the rows of ``W`` on the worker
that built them.

Dask is an optional dependency (``pip install "structreg[dask]"``); it is imported when a
function here is called.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .graphs import (
    _drop_self,
    _edge_weights,
    _exact_indices,
    _nearest_first,
    _pair_distances,
    self_tuning_weights,
)

__all__ = ["PartitionedGraph", "partitioned_knn_graph"]


def _client(client=None):
    """``client``, or the current ``dask.distributed`` client (a clear error when none)."""
    if client is not None:
        return client
    try:
        from distributed import get_client
    except ImportError as exc:  # pragma: no cover - dask is installed with the extra
        raise ImportError(
            'a Dask fit needs dask.distributed: pip install "structreg[dask]"'
        ) from exc
    try:
        return get_client()
    except ValueError as exc:
        raise ValueError(
            "a fit on a dask array runs on a dask.distributed cluster: start a client first "
            "(from distributed import Client; client = Client(...)), or fit X.compute() in memory"
        ) from exc


# ---------------------------------------------------------------------------------------------
# the tasks (module-level functions: the workers import them)


@dataclass
class _Rows:
    """A block's rows of the graph, on its worker: rows ``start .. start + indptr.size - 2``,
    the columns (global indices, sorted per row) and the length of every edge."""

    start: int
    n: int
    indptr: np.ndarray
    indices: np.ndarray
    length: np.ndarray

    def rows(self) -> np.ndarray:
        """The global row of every stored edge."""
        return self.start + np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))

    def matrix(self, data: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((data, self.indices, self.indptr), (self.indptr.size - 1, self.n))


def _candidates(points: np.ndarray, offset: int, queries: np.ndarray, m: int):
    """The ``m`` nearest of ``points`` (global indices from ``offset``) of every query: their
    indices, the search's distances (which order them) and the edge lengths as the
    in-memory graph computes them (:func:`~structreg.structure.graphs._pair_distances`,
    query first)."""
    m = min(m, points.shape[0])
    ind, dist = _exact_indices(points, queries, m, return_distance=True)
    both = np.vstack([queries, points])
    rows = np.repeat(np.arange(queries.shape[0]), m)
    length = _pair_distances(both, rows, queries.shape[0] + ind.ravel()).reshape(ind.shape)
    return ind + offset, dist, length


def _best(m: int, *found):
    """The ``m`` nearest of several candidate lists ``(indices, distances, lengths)`` of the
    same queries: nearest first, ties by global index."""
    ind, dist, length = (np.hstack(parts) for parts in zip(*found, strict=True))
    pick = _nearest_first(ind, dist, m)
    return tuple(np.take_along_axis(a, pick, axis=1) for a in (ind, dist, length))


def _without_self(start: int, n_neighbors: int, found):
    """``(start, (indices, lengths))``: the ``n_neighbors`` nearest other points of the
    block's points, the point itself dropped by index (or, hidden behind copies, the
    farthest; as the in-memory search)."""
    ind, _, length = found
    own = start + np.arange(ind.shape[0])
    kept = _drop_self(ind, own, n_neighbors)
    return start, (kept, _drop_self_values(ind, own, length, n_neighbors))


def _drop_self_values(ind, own, values, n_neighbors):
    """``values`` (aligned with ``ind``) at the positions :func:`_drop_self` keeps: it drops
    ``own`` where found, else each row's last entry; the kept entries keep their order."""
    positions = np.broadcast_to(np.arange(ind.shape[1]), ind.shape)
    keep = _drop_self(
        np.where(ind == own[:, None], -1, positions), np.full(len(own), -1), n_neighbors
    )
    return np.take_along_axis(values, keep, axis=1)


def _outgoing(knn, bounds: np.ndarray) -> list:
    """The block's directed edges ``(i, j, length)`` reversed, ``(j, i, length)``, grouped by
    the block that owns ``j``."""
    start, (ind, length) = knn
    i = start + np.repeat(np.arange(ind.shape[0]), ind.shape[1])
    j, length = ind.ravel(), length.ravel()
    owner = np.searchsorted(bounds, j, side="right") - 1
    return [(j[owner == b], i[owner == b], length[owner == b]) for b in range(len(bounds) - 1)]


def _assemble(knn, n: int, stop: int, *incoming) -> _Rows:
    """The block's rows of the symmetric graph: its own edges and the reversed edges of the
    others that end in it, each pair once."""
    start, (ind, length) = knn
    i = start + np.repeat(np.arange(ind.shape[0]), ind.shape[1])
    rows = np.concatenate([i, *(e[0] for e in incoming)])
    cols = np.concatenate([ind.ravel(), *(e[1] for e in incoming)])
    lengths = np.concatenate([length.ravel(), *(e[2] for e in incoming)])
    key, first = np.unique((rows - start).astype(np.int64) * n + cols, return_index=True)
    local, cols = np.divmod(key, n)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(local, minlength=stop - start))])
    return _Rows(start, n, indptr, cols.astype(np.intp), lengths[first])


def _k_scale(knn) -> np.ndarray:
    """Every point's distance to its ``n_neighbors``-th nearest other point."""
    return knn[1][1][:, -1]


def _positive_squares(rows: _Rows) -> tuple[float, int]:
    """The sum and count of the positive squared edge lengths."""
    squared = rows.length**2
    positive = squared[squared > 0]
    return float(positive.sum()), int(positive.size)


def _weigh(rows: _Rows, weights: str, t: float | None, sigma: np.ndarray | None):
    """The block's rows of ``W`` (CSR, n_rows x n), weights that underflowed dropped."""
    if weights == "self-tuning":
        r, c = rows.rows(), rows.indices
        data = self_tuning_weights(rows.length**2, sigma[r], sigma[c])
    else:
        data = _edge_weights(None, rows.indices, rows.indices, rows.length, weights, t)
        # (_edge_weights reads the pairs only for their count with these weightings)
    W = rows.matrix(data)
    W.eliminate_zeros()
    return W


def _product(W: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
    return W @ V


def _row_sums(W: sp.csr_matrix) -> np.ndarray:
    return np.asarray(W.sum(axis=1)).ravel()


def _strong_edges(W: sp.csr_matrix, start: int, degree: np.ndarray, fraction: float):
    """The block's rows of ``W`` without its weak edges: those lighter than ``fraction``
    times the larger degree of their ends."""
    C = W.tocoo()
    keep = C.data >= fraction * np.maximum(degree[start + C.row], degree[C.col])
    return sp.csr_matrix((C.data[keep], (C.row[keep], C.col[keep])), shape=W.shape)


def _neighbour_min(W: sp.csr_matrix, start: int, label: np.ndarray, degree, fraction):
    """The smallest ``label`` among each row's neighbours (the largest integer for a row
    without any); with a ``fraction``, over the strong edges only (:func:`_strong_edges`)."""
    if fraction is not None:
        W = _strong_edges(W, start, degree, fraction)
    out = np.full(W.shape[0], np.iinfo(label.dtype).max, dtype=label.dtype)
    filled = np.diff(W.indptr) > 0
    if W.nnz:
        out[filled] = np.minimum.reduceat(label[W.indices], W.indptr[:-1][filled])
    return out


def _weak_edges(W: sp.csr_matrix, start: int, degree: np.ndarray, fraction: float) -> int:
    """How many edges :func:`_strong_edges` drops."""
    return W.nnz - _strong_edges(W, start, degree, fraction).nnz


def _part_cuts(W, start, part, degree, fraction, labeled_part):
    """The weight of the block's edges that leave each part of ``part``, and how many weak
    edges join two different parts that both hold labeled vertices."""
    C = W.tocoo()
    r = start + C.row
    leaving = part[r] != part[C.col]
    cut = np.bincount(part[r[leaving]], weights=C.data[leaving], minlength=part.size)
    weak = C.data < fraction * np.maximum(degree[r], degree[C.col])
    between = weak & leaving & labeled_part[part[r]] & labeled_part[part[C.col]]
    return cut, int(between.sum())


def _cut_counts(W: sp.csr_matrix, start: int, codes: np.ndarray, n_classes: int):
    """Per class: the block's edges that leave the class, and the degrees (edge counts) of
    its points in the class (the terms of ``normalized_cut``)."""
    C = W.tocoo()
    own = codes[start + C.row]
    cut = own != codes[C.col]
    return (
        np.bincount(own[cut], minlength=n_classes),
        np.bincount(own, minlength=n_classes),
    )


class _Blocks:
    """A Dask actor on a worker that holds the blocks of that worker (their edges,
    :class:`_Rows`, and their weightings): the client's calls reach it directly, without the
    scheduler (a round trip several times shorter than a task's), and one call serves all of
    the worker's blocks, so a vector sent to it travels once per worker."""

    def __init__(self, *rows: _Rows):
        self.rows = list(rows)
        self.weighted: dict = {}

    def weigh(self, weights: str, t: float | None, sigma: np.ndarray | None) -> None:
        self.weighted[weights] = [_weigh(r, weights, t, sigma) for r in self.rows]

    def call(self, func: Callable, weights: str | None, with_start: bool, *args, **kwargs):
        """``[func(block, *args, **kwargs)]`` over the worker's blocks (their edges when
        ``weights`` is None, else their rows of ``W`` of that weighting), each block's first
        row passed after it when ``with_start``."""
        blocks = self.rows if weights is None else self.weighted[weights]
        return [
            func(b, r.start, *args, **kwargs) if with_start else func(b, *args, **kwargs)
            for b, r in zip(blocks, self.rows, strict=True)
        ]

    def forget(self, weights: str) -> None:
        self.weighted.pop(weights, None)


# ---------------------------------------------------------------------------------------------
# the graph, as the client sees it


@dataclass
class PartitionedGraph:
    """A symmetric weighted graph over n points whose rows live on the Dask workers, one
    block of consecutive rows per partition of the data.

    Built by :func:`partitioned_knn_graph` (the edges and their lengths) and
    :meth:`weighted` (the weights).  The blocks of a worker are held by one actor there; only
    vectors of length n and per-block numbers travel between the client and the workers.

    Attributes
    ----------
    client : distributed.Client
    bounds : ndarray of int, shape (P + 1,)
        Block ``b`` holds rows ``bounds[b]`` to ``bounds[b + 1] - 1``.
    blocks : list of distributed.Actor
        One holder per worker, of a run of consecutive blocks.
    local_scale : ndarray of shape (n,)
        Every point's distance to its ``n_neighbors``-th nearest other point.
    weights : str or None
        The weighting this graph reads (None: the unweighted edges and their lengths).
    t : float or None
        The width of heat weights (``weights="heat"``).
    """

    client: Any
    bounds: np.ndarray
    blocks: list
    local_scale: np.ndarray
    weights: str | None = None
    t: float | None = None

    @property
    def n(self) -> int:
        return int(self.bounds[-1])

    def map(self, func: Callable, *args, **kwargs) -> list:
        """``func(block, *args, **kwargs)`` on every block's worker (the block being its rows
        of ``W``, or its edges before weighting); the results, in block order.  The
        arguments travel once to every worker."""
        return self._call(func, False, args, kwargs)

    def map_rows(self, func: Callable, *args, **kwargs) -> list:
        """As :meth:`map`, with each block's first row passed after the block."""
        return self._call(func, True, args, kwargs)

    def _call(self, func: Callable, with_start: bool, args, kwargs) -> list:
        calls = [h.call(func, self.weights, with_start, *args, **kwargs) for h in self.blocks]
        return [out for c in calls for out in c.result()]

    def weighted(self, weights: str, t: float | None = None) -> PartitionedGraph:
        """The graph with ``weights`` on its edges, as
        :func:`~structreg.structure.graphs.self_tuning_graph` (``"self-tuning"``) and
        :func:`~structreg.structure.graphs.knn_graph`
        (``"heat"``, ``"connectivity"``) weigh them; weights that underflow to 0 are dropped.
        ``t``: the heat width (None: the mean of the positive squared edge lengths)."""
        edges = PartitionedGraph(self.client, self.bounds, self.blocks, self.local_scale)
        if weights == "heat" and t is None:
            sums = edges.map(_positive_squares)
            count = sum(c for _, c in sums)
            if not count:
                raise ValueError(
                    "every edge of the kNN graph has length 0 (each point has n_neighbors "
                    "copies), so heat weights have no width; deduplicate X or pass t"
                )
            t = sum(s for s, _ in sums) / count
        sigma = self.local_scale if weights == "self-tuning" else None
        if sigma is not None and not np.all(sigma > 0):
            raise ValueError(
                f"{int(np.sum(~(sigma > 0)))} point(s) have n_neighbors or more exact copies "
                "(distance 0 to their n_neighbors-th neighbour); the distributed fit does not "
                "give them the in-memory scale (the distance to the nearest point that is not "
                "a copy): deduplicate X, raise n_neighbors, or fit in memory"
            )
        for call in [h.weigh(weights, t, sigma) for h in self.blocks]:
            call.result()
        return PartitionedGraph(self.client, self.bounds, self.blocks, self.local_scale, weights, t)

    def product(self, V: np.ndarray) -> np.ndarray:
        """``W @ V`` (V of shape (n,) or (n, k)): V sent to every worker, each block's rows
        multiplied there, the results stacked."""
        return np.concatenate(self.map(_product, np.ascontiguousarray(V)))

    def degree(self) -> np.ndarray:
        """``W 1``."""
        return np.concatenate(self.map(_row_sums))

    def components(self, degree=None, fraction: float | None = None) -> np.ndarray:
        """The connected component of every vertex, numbered by its smallest vertex; with a
        ``fraction`` (and the ``degree`` vector), of the graph of the edges at least that
        fraction of the larger degree of their ends.

        Hooking and pointer jumping (Shiloach & Vishkin): each round the workers give every
        vertex the smallest label among its neighbours (one vector out and back), and the
        client hooks each label's root to the smallest label it touches and shortens every
        path of labels to its root.  It stops when a round changes nothing: then adjacent
        vertices share a label, the smallest vertex of their component.  A few rounds on kNN
        graphs (each at least halves the distance of most vertices to their root)."""
        label = np.arange(self.n)
        while True:
            found = self.map_rows(_neighbour_min, label, degree, fraction)
            reached = np.minimum(np.concatenate(found), label)
            hooked = label.copy()
            np.minimum.at(hooked, label, reached)
            hooked = np.minimum(hooked, reached)
            while True:  # pointer jumping
                jumped = hooked[hooked]
                if np.array_equal(jumped, hooked):
                    break
                hooked = jumped
            if np.array_equal(hooked, label):
                return label
            label = hooked

    def weakly_joined(self, degree, fraction: float, labeled: np.ndarray):
        """``(weak_sets, labels, apart)``: which parts of the strong-edge graph
        (:meth:`components` with ``fraction``) are weakly joined sets -- two or more
        vertices, joined to the rest by a total weight above 0 and at most ``fraction``
        times their smallest degree -- and how many labeled vertices each part holds, both
        indexed by the part's smallest vertex; and how many weak edges join two parts that
        both hold labeled vertices.  (What ``structreg.models.graph_inference.LabeledGraph``
        finds in memory.)"""
        part = self.components(degree, fraction)
        labels = np.bincount(part[labeled], minlength=self.n)
        found = self.map_rows(_part_cuts, part, degree, fraction, labels > 0)
        cut = sum(c for c, _ in found)
        smallest = np.full(self.n, np.inf)
        np.minimum.at(smallest, part, degree)
        size = np.bincount(part, minlength=self.n)
        weak_sets = (size > 1) & (cut > 0) & (cut <= fraction * smallest)
        return weak_sets, labels, sum(a for _, a in found)

    def count_weak_edges(self, degree: np.ndarray, fraction: float) -> int:
        """Edges of weight below ``fraction`` times the larger ``degree`` of their ends."""
        return sum(self.map_rows(_weak_edges, degree, fraction))

    def normalized_cut(self, labels: np.ndarray) -> float:
        """:func:`~structreg.models.graph_inference.normalized_cut` of the graph's edge
        pattern for the labeling ``labels`` (one per vertex)."""
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.ravel()
        counts = self.map_rows(_cut_counts, codes, int(codes.max()) + 1)
        cut = sum(c for c, _ in counts)
        volume = sum(v for _, v in counts)
        return float(np.sum(cut / np.where(volume > 0, volume, 1.0)))

    def gather(self) -> sp.csr_matrix:
        """The whole ``W`` on the client (small graphs: tests, inspection)."""
        return sp.csr_matrix(sp.vstack(self.map(_itself)))

    def release(self) -> None:
        """Let the workers drop this weighting's rows of ``W``."""
        if self.weights is not None:
            for call in [h.forget(self.weights) for h in self.blocks]:
                call.result()


def _itself(block):
    return block


def _row_blocks(X) -> tuple[list, np.ndarray]:
    """The futures of the row blocks of the dask array ``X`` (all columns in each), computed
    on the workers, and the blocks' row bounds."""
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
    X = X.rechunk({1: -1})
    sizes = np.asarray(X.chunks[0], dtype=np.int64)
    if np.isnan(sizes.astype(float)).any():
        raise ValueError("X has rows of unknown sizes; call X.compute_chunk_sizes() first")
    blocks = [b for b, size in zip(X.to_delayed().ravel(), sizes, strict=True) if size > 0]
    return blocks, np.concatenate([[0], np.cumsum(sizes[sizes > 0])])


def partitioned_knn_graph(X, n_neighbors: int = 7, *, client=None) -> PartitionedGraph:
    """The exact symmetric kNN graph of the rows of the dask array ``X``, its rows kept on
    the workers, block by block as ``X``'s rows are chunked.

    The neighbours are those of :func:`~structreg.structure.graphs.knn_graph` with
    ``algorithm="exact"`` (nearest first, ties by index; the point itself dropped by index),
    found by searching every block's points among every block's points (P^2 tasks: each
    block's points travel to every worker once) and merging each point's P candidate lists.
    The edge set is the union of both directions; every edge carries its length, computed
    as the in-memory graphs compute it, from which :meth:`PartitionedGraph.weighted` weighs
    it.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Its row chunks are the blocks (columns are merged into one chunk).
    n_neighbors : int, default=7
    client : distributed.Client or None
        None: the current client.

    Returns
    -------
    PartitionedGraph
        Unweighted: call :meth:`~PartitionedGraph.weighted`.
    """
    client = _client(client)
    parts, bounds = _row_blocks(X)
    n = int(bounds[-1])
    if not (isinstance(n_neighbors, (int, np.integer)) and 1 <= n_neighbors < n):
        raise ValueError(
            f"n_neighbors must be a positive integer smaller than the number of points "
            f"(n_samples = {n}), got {n_neighbors!r}"
        )
    parts = client.compute(parts)
    m = int(n_neighbors) + 1
    knn = []
    for i, queries in enumerate(parts):
        # merged one block at a time: a worker holds two candidate lists, not P
        found = client.submit(_candidates, parts[0], 0, queries, m, pure=False)
        for j in range(1, len(parts)):
            more = client.submit(_candidates, parts[j], int(bounds[j]), queries, m, pure=False)
            found = client.submit(_best, m, found, more, pure=False)
        knn.append(
            client.submit(_without_self, int(bounds[i]), int(n_neighbors), found, pure=False)
        )
    sigma = np.concatenate(client.gather([client.submit(_k_scale, k, pure=False) for k in knn]))
    out = [client.submit(_outgoing, k, bounds, pure=False) for k in knn]
    pieces = [
        [client.submit(operator.getitem, o, b, pure=False) for o in out] for b in range(len(parts))
    ]
    rows = [
        client.submit(_assemble, knn[b], n, int(bounds[b + 1]), *pieces[b], pure=False)
        for b in range(len(parts))
    ]
    workers = sorted(client.scheduler_info()["workers"])
    groups = np.array_split(np.arange(len(rows)), min(len(workers), len(rows)))
    holders = [
        client.submit(_Blocks, *(rows[b] for b in g), actor=True, workers=[w], pure=False)
        for g, w in zip(groups, workers, strict=False)
    ]
    blocks = [h.result() for h in holders]
    return PartitionedGraph(client, bounds, blocks, sigma)
