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

Built with ``keep_blocks=True`` the graph also keeps every block's points beside its rows, for
what a design needs from the graph: :meth:`PartitionedGraph.laplacian_gram` sums ``Phi^T L
Phi`` for features ``Phi = features(X)`` over the blocks (each block reading the points of its
neighbours in other blocks, :meth:`PartitionedGraph.neighbour_points`), and
:func:`neighbor_scale_on_cluster` measures the graph's length scale as
``structreg.structure.graphs.neighbor_scale`` does in memory (LapRLSC's fit on a cluster).

What reaches the client: vectors of length n (the local scales, degrees, products), a few
numbers per block and, from :meth:`PartitionedGraph.laplacian_gram`, one p x p matrix.  The
points stay where Dask put them, and the rows of ``W`` on the worker that built them.

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

from .. import _chunks
from .graphs import (
    SCALE_MAX_QUERIES,
    _drop_self,
    _edge_weights,
    _exact_indices,
    _nearest_first,
    _pair_distances,
    _row_hashes,
    _squared_length,
    self_tuning_weights,
)
from .labeled_graph import (
    WEAK_LINK,
    block_product,
    cut_ratio,
    cut_terms,
    part_terms,
    strong_edges,
    weak_parts,
)

__all__ = ["PartitionedGraph", "neighbor_scale_on_cluster", "partitioned_knn_graph"]


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


def _weigh(
    rows: _Rows, weights: str, t: float | None, sigma: np.ndarray | None, floor: float = 0.0
):
    """The block's rows of ``W`` (CSR, n_rows x n): weights below ``floor`` raised to it,
    weights that underflowed (with no floor) dropped."""
    if weights == "self-tuning":
        r, c = rows.rows(), rows.indices
        data = self_tuning_weights(rows.length**2, sigma[r], sigma[c])
    else:
        data = _edge_weights(None, rows.indices, rows.indices, rows.length, weights, t)
        # (_edge_weights reads the pairs only for their count with these weightings)
    if floor:
        np.maximum(data, floor, out=data)
    W = rows.matrix(data)
    W.eliminate_zeros()
    return W


def _product(W: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
    return W @ V


def _row_sums(W: sp.csr_matrix) -> np.ndarray:
    return np.asarray(W.sum(axis=1)).ravel()


def _neighbour_min(W: sp.csr_matrix, start: int, label: np.ndarray, degree, fraction):
    """The smallest ``label`` among each row's neighbours (the largest integer for a row
    without any); with a ``fraction``, over the strong edges only
    (:func:`~structreg.structure.labeled_graph.strong_edges`)."""
    if fraction is not None:
        W = strong_edges(W, start, degree, fraction)
    out = np.full(W.shape[0], np.iinfo(label.dtype).max, dtype=label.dtype)
    filled = np.diff(W.indptr) > 0
    if W.nnz:
        out[filled] = np.minimum.reduceat(label[W.indices], W.indptr[:-1][filled])
    return out


def _weak_edges(W: sp.csr_matrix, start: int, degree: np.ndarray, fraction: float) -> int:
    """How many edges :func:`~structreg.structure.labeled_graph.strong_edges` drops."""
    return W.nnz - strong_edges(W, start, degree, fraction).nnz


def _wanted(rows: _Rows, bounds: np.ndarray) -> list:
    """The block's neighbours in other blocks (global indices, sorted), by owner block."""
    stop = rows.start + rows.indptr.size - 1
    cols = np.unique(rows.indices)
    cols = cols[(cols < rows.start) | (cols >= stop)]
    owner = np.searchsorted(bounds, cols, side="right") - 1
    return [cols[owner == b] for b in range(len(bounds) - 1)]


def _take(points: np.ndarray, wanted: list, owner: int, start: int):
    """``(indices, rows)``: the rows of the owner's ``points`` that a block wants."""
    idx = wanted[owner]
    return idx, points[idx - start]


def _point_rows(points: np.ndarray, local: np.ndarray) -> np.ndarray:
    return points[local]


def _laplacian_rows(W: sp.csr_matrix, start: int, degree: np.ndarray | None, normalized: bool):
    """The block's rows of :func:`~structreg.structure.graphs.laplacian` of the whole graph,
    entry by entry as it forms them (``D - W``; ``diag(d > 0) - D^{-1/2} W D^{-1/2}`` with
    the ``degree`` of every vertex): a block of rows of W with the diagonal at
    ``start + i``."""
    n_rows = W.shape[0]
    own = np.arange(n_rows)
    deg = np.asarray(W.sum(axis=1)).ravel()
    if not normalized:
        D = sp.csr_matrix((deg, (own, start + own)), shape=W.shape)
        return (D - W).tocsr()
    with np.errstate(divide="ignore"):
        inv_sqrt = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    scaled = W.copy()
    row = start + np.repeat(own, np.diff(W.indptr))
    scaled.data = (inv_sqrt[row] * W.data) * inv_sqrt[W.indices]  # (D^-1/2 W) D^-1/2
    D = sp.csr_matrix(((deg > 0).astype(float), (own, start + own)), shape=W.shape)
    return (D - scaled).tocsr()


def _laplacian_gram_block(
    rows: _Rows, points: np.ndarray, features: Callable, spec: tuple, *taken
) -> tuple[np.ndarray, float]:
    """``(S_b, ||Phi_b||_F^2)`` of one block, the blocks' ``S_b`` summing to ``Phi^T M Phi``:
    ``Phi = features(X)``, ``M`` the Laplacian of ``spec = (weights, t, sigma, degree,
    normalized, volume)`` (divided by ``volume`` unless None), and

        S_b = Phi_b^T M_bb Phi_b + C_b + C_b^T,   C_b = Phi_b^T M_{b,>b} Phi_{>b},

    the block's rows of M formed here from its edges; M being symmetric, the terms of the
    blocks before it are the transposes of theirs (``C_a``), so only the features of its
    neighbours in later blocks are formed here, from their points (``taken``, each sorted).
    They are formed, used and dropped a run of rows at a time: the memory is two n_b x p
    arrays and one run's features (:func:`~structreg._chunks.rows_per_block`, the memory
    budget), however many of the block's neighbours lie in other blocks (nearly all of them
    when the partitions are not spatial)."""
    weights, t, sigma, degree, normalized, volume = spec
    W = _weigh(rows, weights, t, sigma)
    L = _laplacian_rows(W, rows.start, degree, normalized)
    del W
    if volume is not None:
        L = L / volume  # as scaled_laplacian divides the whole Laplacian
    size = points.shape[0]
    later = np.concatenate([idx for idx, _ in taken]) if taken else np.zeros(0, np.intp)
    later_points = np.vstack([r for _, r in taken]) if later.size else points[:0]
    cols = np.concatenate([rows.start + np.arange(size), later])
    L = L.tocoo()
    kept = L.col >= rows.start  # the columns of earlier blocks: their blocks' C_a^T
    L = sp.csc_matrix(
        (L.data[kept], (L.row[kept], np.searchsorted(cols, L.col[kept]))),
        shape=(L.shape[0], cols.size),
    )
    own = features(points)
    S = own.T @ (L[:, :size] @ own)
    if later.size:
        LF = np.zeros_like(own)
        step = _chunks.rows_per_block(own.shape[1])
        for a in range(0, later.size, step):
            b = min(later.size, a + step)
            LF += L[:, size + a : size + b] @ features(later_points[a:b])
        C = own.T @ LF
        S += C + C.T
    return S, float(np.einsum("ij,ij->", own, own))


def _scaled_candidates(points, local, s: float, offset: int, queries, m: int):
    """:func:`_candidates` among the block's points ``local`` (None: all), divided by ``s``."""
    points = points if local is None else points[local]
    return _candidates(points / s if s != 1.0 else points, offset, queries, m)


def _summed(*parts):
    """The sum of tuples of arrays (or numbers), entry by entry."""
    return tuple(sum(values) for values in zip(*parts, strict=True))


class _Blocks:
    """A Dask actor on a worker that holds the blocks of that worker (their edges,
    ``_Rows``, and their weightings): the client's calls reach it directly, without the
    scheduler (a round trip several times shorter than a task's), and one call serves all of
    the worker's blocks, so a vector sent to it travels once per worker."""

    def __init__(self, *rows: _Rows):
        self.rows = list(rows)
        self.weighted: dict = {}

    def weigh(
        self, weights: str, t: float | None, sigma: np.ndarray | None, floor: float = 0.0
    ) -> None:
        self.weighted[weights] = [_weigh(r, weights, t, sigma, floor) for r in self.rows]

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
    rows, points : list of distributed.Future or None
        Kept by ``partitioned_knn_graph(..., keep_blocks=True)``: every block's edges
        (``_Rows``, the objects its holder keeps, on the same worker) and its points (the
        block of X), for tasks that read a block beside its rows of the graph
        (:meth:`neighbour_points`, :meth:`laplacian_gram`, :func:`neighbor_scale_on_cluster`).
    """

    client: Any
    bounds: np.ndarray
    blocks: list
    local_scale: np.ndarray
    weights: str | None = None
    t: float | None = None
    rows: list | None = None
    points: list | None = None

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

    def weighted(
        self, weights: str, t: float | None = None, floor: float = 0.0
    ) -> PartitionedGraph:
        """The graph with ``weights`` on its edges, as
        :func:`~structreg.structure.graphs.self_tuning_graph` (``"self-tuning"``) and
        :func:`~structreg.structure.graphs.knn_graph`
        (``"heat"``, ``"connectivity"``) weigh them; weights below ``floor`` are raised to
        it, weights that underflow to 0 (with no floor) are dropped.
        ``t``: the heat width (None: the mean of the positive squared edge lengths)."""
        edges = self._with(None, None)
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
        for call in [h.weigh(weights, t, sigma, floor) for h in self.blocks]:
            call.result()
        return self._with(weights, t)

    def _with(self, weights: str | None, t: float | None) -> PartitionedGraph:
        """This graph with another weighting (its blocks, rows and points shared)."""
        return PartitionedGraph(
            self.client,
            self.bounds,
            self.blocks,
            self.local_scale,
            weights,
            t,
            self.rows,
            self.points,
        )

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
        vertices, joined to the rest by a total weight above 0 and at most the lightest
        strong edge inside, none of them sending more than ``fraction`` of its degree out --
        and how many labeled vertices each part holds, both indexed by the part's smallest
        vertex; and how many weak edges join two parts that both hold labeled vertices.
        (What ``structreg.structure.labeled_graph.LabeledGraph`` finds in memory.)"""
        part = self.components(degree, fraction)
        labels = np.bincount(part[labeled], minlength=self.n)
        found = self.map_rows(part_terms, part, self.n, degree, fraction, labels > 0)
        cut = sum(f[0] for f in found)
        leaky = np.logical_or.reduce([f[1] for f in found])
        lightest = np.minimum.reduce([f[2] for f in found])
        size = np.bincount(part, minlength=self.n)
        return weak_parts(size, cut, leaky, lightest), labels, sum(f[3] for f in found)

    def count_weak_edges(self, degree: np.ndarray, fraction: float) -> int:
        """Edges of weight below ``fraction`` times the larger ``degree`` of their ends."""
        return sum(self.map_rows(_weak_edges, degree, fraction))

    def normalized_cut(self, labels: np.ndarray) -> float:
        """:func:`~structreg.structure.labeled_graph.normalized_cut` of the graph's edge
        pattern for the labeling ``labels`` (one per vertex)."""
        _, codes = np.unique(labels, return_inverse=True)
        codes = codes.ravel()
        counts = self.map_rows(cut_terms, codes, int(codes.max()) + 1)
        return cut_ratio(sum(c for c, _ in counts), sum(v for _, v in counts))

    def _kept(self) -> tuple[list, list]:
        if self.points is None or self.rows is None:
            raise ValueError("build the graph with partitioned_knn_graph(..., keep_blocks=True)")
        return self.points, self.rows

    def point_rows(self, idx) -> np.ndarray:
        """The points at the global indices ``idx`` (in that order), gathered from the blocks
        that hold them (the kept ``points``)."""
        points, _ = self._kept()
        idx = np.asarray(idx, dtype=np.intp).ravel()
        order = np.argsort(idx, kind="stable")
        owner = np.searchsorted(self.bounds, idx[order], side="right") - 1
        calls = [
            self.client.submit(
                _point_rows, points[b], idx[order][owner == b] - self.bounds[b], pure=False
            )
            for b in np.unique(owner)
        ]
        found = np.vstack(self.client.gather(calls))
        out = np.empty_like(found)
        out[order] = found
        return out

    def neighbour_points(self, later: bool = False) -> list[list]:
        """For every block, the futures of ``(indices, points)`` of its neighbours held by
        each other block (``later``: by the blocks after it only): each block names the rows
        it wants and their owners send them (what a product with the graph reads besides the
        block's own points)."""
        points, rows = self._kept()
        submit, P = self.client.submit, len(points)
        wanted = [submit(_wanted, r, self.bounds, pure=False) for r in rows]
        return [
            [
                submit(_take, points[o], wanted[b], o, int(self.bounds[o]), pure=False)
                for o in range(b + 1 if later else 0, P)
                if o != b
            ]
            for b in range(P)
        ]

    def laplacian_gram(
        self,
        features: Callable,
        degree: np.ndarray,
        *,
        normalized: bool = False,
        volume: float | None = None,
    ) -> tuple[np.ndarray, float]:
        """``(Phi^T M Phi, ||Phi||_F^2)`` for the rows ``Phi = features(X)`` of the kept
        points and ``M`` this weighting's Laplacian (``normalized``: ``I - D^{-1/2} W
        D^{-1/2}``; divided by ``volume`` unless None), summed over the blocks on the
        workers: every block forms its rows of M from its edges and the features of its own
        points and of its neighbours in the blocks after it (:meth:`neighbour_points`; M is
        symmetric, so each pair of blocks is met once), and only the p x p sums reach the
        client.  ``degree``: ``W 1`` (:meth:`degree`), sent once to every worker for the
        normalised Laplacian."""
        points, rows = self._kept()
        if self.weights is None:
            raise ValueError("weigh the graph first (PartitionedGraph.weighted)")
        client = self.client
        spread = (self.local_scale if self.weights == "self-tuning" else None,)
        spread += (degree if normalized else None,)
        sigma, degree = (
            client.scatter(v, broadcast=True, hash=False) if v is not None else None for v in spread
        )
        spec = (self.weights, self.t, sigma, degree, normalized, volume)  # futures resolved
        taken = self.neighbour_points(later=True)
        parts = [
            client.submit(_laplacian_gram_block, r, x, features, spec, *t, pure=False)
            for r, x, t in zip(rows, points, taken, strict=True)
        ]
        while len(parts) > 1:  # summed on the workers, pairwise
            parts = [
                client.submit(_summed, *parts[i : i + 2], pure=False)
                for i in range(0, len(parts), 2)
            ]
        G, squared_norm = parts[0].result()
        return 0.5 * (G + G.T), float(squared_norm)

    def gather(self) -> sp.csr_matrix:
        """The whole ``W`` on the client (small graphs: tests, inspection)."""
        return sp.csr_matrix(sp.vstack(self.map(_itself)))

    def release(self) -> None:
        """Let the workers drop this weighting's rows of ``W``."""
        if self.weights is not None:
            for call in [h.forget(self.weights) for h in self.blocks]:
                call.result()

    def labeled_graph(self, labeled: np.ndarray, targets: np.ndarray) -> PartitionedLabeledGraph:
        """This graph with the vertices of the mask ``labeled`` holding ``targets``: what a
        Laplace solve asks of it (:func:`~structreg.structure.labeled_graph.label_graph`)."""
        return PartitionedLabeledGraph.build(self, labeled, targets)


WEAK_EDGES_REFUSED = (
    "the graph has edges lighter than {fraction:.2g} times the degree of their ends that join "
    "sets of points weakly (self-tuning weights where a tight cluster meets sparse points): "
    "the in-memory fit merges or cuts them, the cluster fit does not; use "
    "weights='connectivity' or 'heat', another n_neighbors, or fit in memory"
)


class PartitionedLabeledGraph:
    """A :class:`PartitionedGraph` with some vertices labeled: the interface of
    :class:`~structreg.structure.labeled_graph.LabeledGraph` that the Laplace solves
    (:mod:`structreg.solvers.laplace`) use, answered by the workers.

    The Laplacian blocks are operators (:class:`PartitionedLaplacian`: products on the
    workers), so the solves run conjugate gradients.  What the in-memory graph merges or cuts
    -- weakly joined sets (:meth:`without_weak_sets`, :meth:`weakly_joined`) and weak edges
    between labeled parts (:meth:`apart_labeled_parts`) -- is refused here with a
    ``ValueError``; graphs without weak edges (the usual case) are not searched for them.
    """

    def __init__(self, graph: PartitionedGraph, labeled, targets, degree, component):
        self.graph, self.labeled, self.targets = graph, labeled, targets
        self.degree, self.component = degree, component
        self.labels_in_component = np.bincount(component[labeled], minlength=graph.n)
        self._weak: tuple | None = None
        if graph.count_weak_edges(degree, WEAK_LINK):
            self._weak = graph.weakly_joined(degree, WEAK_LINK, labeled)

    @classmethod
    def build(cls, graph: PartitionedGraph, labeled, targets) -> PartitionedLabeledGraph:
        labeled = np.asarray(labeled, dtype=bool)
        targets = np.asarray(targets, dtype=float).reshape(int(labeled.sum()), -1)
        return cls(graph, labeled, targets, graph.degree(), graph.components())

    @property
    def n(self) -> int:
        return self.graph.n

    @property
    def unreachable(self) -> np.ndarray:
        """Unlabeled vertices whose connected component holds no labeled vertex."""
        return ~self.labeled & (self.labels_in_component[self.component] == 0)

    def _refuse(self, sets: np.ndarray | None, apart: bool) -> None:
        if (sets is not None and sets.any()) or apart:
            raise ValueError(WEAK_EDGES_REFUSED.format(fraction=WEAK_LINK))

    def without_weak_sets(self, volume=None):
        """``(self, None, volume)``; weakly joined sets without labels (which the in-memory
        graph merges) are refused."""
        if self._weak is not None:
            weak_sets, labels, _ = self._weak
            self._refuse(weak_sets & (labels == 0), False)
        return self, None, volume

    def weakly_joined(self) -> tuple[np.ndarray, bool]:
        """No vertex in a weakly joined set: any such set is refused."""
        if self._weak is not None:
            self._refuse(self._weak[0], False)
        return np.zeros(self.n, dtype=bool), False

    def apart_labeled_parts(self) -> PartitionedLabeledGraph:
        """This graph; weak edges between parts with labels (cut in memory) are refused."""
        if self._weak is not None:
            self._refuse(None, bool(self._weak[2]))
        return self

    def laplacian(self, rows: np.ndarray) -> PartitionedLaplacian:
        """``D_rr - W_rr`` as an operator (``rows``: a mask or indices)."""
        return PartitionedLaplacian(self.graph, self.degree, rows)

    def coupled(self, rows: np.ndarray, cols: np.ndarray, V: np.ndarray) -> np.ndarray:
        """``W_rc V``, the product on the workers."""
        return block_product(self.graph.product, self.n, rows, cols, V)


class PartitionedLaplacian:
    """``D_rr - W_rr`` of a :class:`PartitionedGraph` for the vertices ``rows``, as an
    operator: ``shape``, ``diagonal()`` and ``@`` (one product of ``W`` on the workers)."""

    def __init__(self, graph: PartitionedGraph, degree: np.ndarray, rows: np.ndarray):
        self.graph, self.degree = graph, degree
        self.rows = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows)
        self.shape = (self.rows.size, self.rows.size)

    def diagonal(self) -> np.ndarray:
        return self.degree[self.rows]

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        diagonal = self.degree[self.rows]
        scaled = diagonal[:, None] * V if V.ndim == 2 else diagonal * V
        return scaled - block_product(self.graph.product, self.graph.n, self.rows, self.rows, V)


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


def partitioned_knn_graph(
    X, n_neighbors: int = 7, *, client=None, keep_blocks: bool = False
) -> PartitionedGraph:
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
    keep_blocks : bool, default=False
        Keep the futures of every block's points and edges on the graph (``points``,
        ``rows``), for the products of a design with the graph
        (:meth:`~PartitionedGraph.laplacian_gram`); else the points are released once the
        graph is built.

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
    workers = sorted(client.scheduler_info()["workers"])
    groups = np.array_split(np.arange(len(parts)), min(len(workers), len(parts)))
    home = {int(b): w for g, w in zip(groups, workers, strict=False) for b in g}
    rows = [  # built on the worker of their holder, which then shares them (no copy)
        client.submit(
            _assemble, knn[b], n, int(bounds[b + 1]), *pieces[b], workers=[home[b]], pure=False
        )
        for b in range(len(parts))
    ]
    holders = [
        client.submit(_Blocks, *(rows[b] for b in g), actor=True, workers=[w], pure=False)
        for g, w in zip(groups, workers, strict=False)
    ]
    blocks = [h.result() for h in holders]
    if not keep_blocks:
        return PartitionedGraph(client, bounds, blocks, sigma)
    return PartitionedGraph(client, bounds, blocks, sigma, rows=rows, points=parts)


def neighbor_scale_on_cluster(
    graph: PartitionedGraph,
    n_neighbors: int,
    scale: float = 1.0,
    max_queries: int = SCALE_MAX_QUERIES,
) -> float:
    """``structreg.structure.graphs.neighbor_scale`` of the graph's kept points (built
    with ``keep_blocks=True``): the mean squared distance of a point to its ``n_neighbors``
    nearest other points, copies of a point counted once, over all distinct points up to
    ``max_queries`` of them, else over that many drawn with the same fixed seed.

    The same number as in memory: the distinct points found by their row hashes (an n-vector
    on the client) and, where hashes repeat, by comparing those rows exactly; the queries'
    neighbours searched block by block and merged as :func:`partitioned_knn_graph` merges
    them.  ``scale``: the power of two the in-memory function divides X by
    (``structreg._numerics.unit_scaled`` with ``far_only``), from X's largest value.
    """
    points, _ = graph._kept()
    client, bounds, s = graph.client, graph.bounds, float(scale)
    hashes = np.concatenate(
        client.gather([client.submit(_row_hashes, p, pure=False) for p in points])
    )
    first = _distinct_rows_on_cluster(graph, hashes)
    n_distinct = graph.n if first is None else first.size
    if n_distinct < 2:
        raise ValueError(
            f"a neighbour scale needs at least 2 distinct points: all {graph.n} rows of "
            "X are identical (no distance between neighbours)"
        )
    k = min(int(n_neighbors), n_distinct - 1)
    queries = np.arange(n_distinct)
    if n_distinct > max_queries:
        queries = np.sort(np.random.default_rng(0).choice(n_distinct, max_queries, replace=False))
    Q = graph.point_rows(queries if first is None else first[queries])
    Q = client.scatter(Q / s if s != 1.0 else Q, broadcast=True, hash=False)
    found = None
    for b, block in enumerate(points):
        lo, hi = int(bounds[b]), int(bounds[b + 1])
        local, offset = None, lo
        if first is not None:
            a, z = np.searchsorted(first, [lo, hi])
            local, offset = first[a:z] - lo, int(a)
            if not local.size:
                continue
        more = client.submit(_scaled_candidates, block, local, s, offset, Q, k + 1, pure=False)
        found = more if found is None else client.submit(_best, k + 1, found, more, pure=False)
    ind, _, length = found.result()
    kept = _drop_self_values(ind, queries, length, k)
    mean = float(np.mean(kept.ravel() ** 2))
    return _squared_length(mean, s, "the mean squared neighbour distance")


def _distinct_rows_on_cluster(graph: PartitionedGraph, hashes: np.ndarray):
    """The first row of every distinct point, increasing (None when all rows differ), as
    :func:`~structreg.structure.graphs._distinct_rows` finds them: equal rows hash alike, so a
    row whose hash no other row has is distinct; the rows whose hashes repeat are gathered
    and compared exactly (``-0.0`` as ``0.0``)."""
    if np.unique(hashes).size == hashes.size:
        return None
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    repeated = np.flatnonzero(counts[inverse.ravel()] > 1)
    _, first = np.unique(graph.point_rows(repeated) + 0.0, axis=0, return_index=True)
    if first.size == repeated.size:
        return None
    single = np.flatnonzero(counts[inverse.ravel()] == 1)
    return np.sort(np.concatenate([single, repeated[first]]))
