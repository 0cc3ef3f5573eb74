"""A weighted graph with some vertices labeled: what a Laplace-type solve needs to know of it.

:class:`LabeledGraph` holds the checked inputs of the harmonic and Poisson solves
(:mod:`structreg.solvers.laplace`): affinities without self-loops, the labeled mask and
values, the connected components, and the *weakly joined sets* whose systems are numerically
singular (:meth:`LabeledGraph.weak_sets`), merged by :func:`contract`.  :func:`normalized_cut`
measures how many of a graph's edges a labeling cuts (``GFHF(weights="auto")``).

The Dask-partitioned graph (:mod:`structreg.structure.distributed_graphs`) answers the same
questions of a graph held in pieces.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["LabeledGraph", "contract", "label_graph", "normalized_cut"]
# block_product, part_terms, cut_terms, strong_edges: the per-block terms that the partitioned
# graph (structure.distributed_graphs) shares


WEAK_LINK = float(np.sqrt(np.finfo(float).eps))
"""A set of unlabeled vertices each of which sends at most this fraction of its degree out of
the set is solved as one vertex (:meth:`LabeledGraph.weak_sets`): below it, the
factorisation's error on the set (about ``eps / WEAK_LINK``) would exceed that of taking the
solution constant there (about ``WEAK_LINK``).  Self-tuning weights give such
sets where a tight cluster (or a point with ``n_neighbors`` copies) meets sparser points:
``exp(-4 d^2 / (sigma_i sigma_j))`` of 1e-18 next to weights near 1."""


@dataclass
class LabeledGraph:
    """A weighted graph with some vertices labeled: the checked inputs of a Laplace-type solve.

    Attributes
    ----------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric non-negative affinities without self-loops (they cancel in ``D - W``).
    labeled : ndarray of bool, shape (n,)
    targets : ndarray of shape (n_labeled, n_outputs)
        Values at the labeled vertices, in the order of ``np.flatnonzero(labeled)``.
    component : ndarray of int, shape (n,)
        The connected component of every vertex.
    labels_in_component : ndarray of int, shape (n_components,)
        Labeled vertices per component.
    """

    W: sp.csr_matrix
    labeled: np.ndarray
    targets: np.ndarray
    component: np.ndarray
    labels_in_component: np.ndarray

    @classmethod
    def build(
        cls, W: sp.spmatrix | np.ndarray, labeled: np.ndarray, targets: np.ndarray
    ) -> LabeledGraph:
        """The graph of affinities ``W`` (sparse or dense; the diagonal is ignored) with the
        vertices of the boolean mask ``labeled`` holding ``targets``."""
        W = sp.csr_matrix(W, dtype=float)
        # self-loops cancel in D - W; an explicit zero (a weight that underflowed) joins
        # nothing, but scipy's component analysis counts it as an edge: a component "reached"
        # only through it would make the system singular.  A graph with neither is used as
        # given (not copied); otherwise one new matrix without them
        if W.diagonal().any() or not W.data.all():
            W = sp.csr_matrix(W - sp.diags(W.diagonal()))
            W.eliminate_zeros()
        labeled = np.asarray(labeled, dtype=bool)
        targets = np.asarray(targets, dtype=float).reshape(int(labeled.sum()), -1)
        n_components, component = connected_components(W, directed=False)
        count = np.bincount(component[labeled], minlength=n_components)
        return cls(W, labeled, targets, component, count)

    @property
    def n(self) -> int:
        return self.W.shape[0]

    @functools.cached_property
    def degree(self) -> np.ndarray:
        """``d = W 1``."""
        return np.asarray(self.W.sum(axis=1)).ravel()

    @property
    def unreachable(self) -> np.ndarray:
        """Unlabeled vertices whose connected component holds no labeled vertex."""
        return ~self.labeled & (self.labels_in_component[self.component] == 0)

    def laplacian(self, rows: np.ndarray) -> sp.csr_matrix:
        """``D_rr - W_rr``: the graph Laplacian's block of the vertices ``rows`` (a mask or
        indices), its diagonal the degrees in the whole graph."""
        return (sp.diags(self.degree[rows]) - self.W[rows][:, rows]).tocsr()

    def coupled(self, rows: np.ndarray, cols: np.ndarray, V: np.ndarray) -> np.ndarray:
        """``W_rc V``: what the values ``V`` at the vertices ``cols`` send to ``rows`` (one
        product with ``W``, no column slicing)."""
        return block_product(self.W.__matmul__, self.n, rows, cols, V)

    def weak_sets(self) -> np.ndarray | None:
        """The vertices' places in the graph with every *weakly joined set* merged into one
        vertex (:func:`contract`), or None when there is no such set.

        A weakly joined set is a connected set ``S`` of two or more unlabeled vertices, none
        of which sends more than ``WEAK_LINK`` of its degree out of ``S``, joined to the
        rest of its component by edges of total weight ``cut(S)`` at most the lightest edge
        inside ``S`` (and not 0: a component without labels is left alone).  In ``D - W``
        such a set's rows sum to ``cut(S)``, which rounding to float64 can lose next to its
        degrees: the system is numerically singular (a factorisation fails or gives a
        solution off by any constant on ``S``; a multigrid hierarchy divides by a coarse
        diagonal that rounded to 0 or below), though the harmonic and Poisson problems are
        well posed.  Their solution on ``S`` is constant up to ``O(cut(S) / lambda_2(S))``
        (``lambda_2`` of ``S``'s own Laplacian), so the solvers take it constant there: the
        minimiser of the energy over functions constant on ``S``, the weighted mean of the
        values across ``S``'s edges.  The sets are the label-free components of the graph of
        the edges of weight at least ``WEAK_LINK`` times the larger degree of their ends.
        The test is per vertex, not on ``cut(S)`` against the smallest degree: heat weights
        on millions of points give tight pairs with sparse points hanging off them, whose
        light edges into the pair (more than ``WEAK_LINK`` times the smallest degree of the
        pair's set, less than ``WEAK_LINK`` times the pair's degree) would hide the set.
        """
        found = self._weakly_joined()
        if found is None:
            return None
        part, weak, labels = found
        weak &= labels == 0
        if not weak.any():
            return None
        # a merged set takes the place of its first vertex; the others keep their order
        first = np.full(weak.size, self.n)
        np.minimum.at(first, part, np.arange(self.n))
        key = np.where(weak[part], first[part], np.arange(self.n))
        return np.unique(key, return_inverse=True)[1].ravel()

    def without_weak_sets(
        self, volume: np.ndarray | None = None
    ) -> tuple[LabeledGraph, np.ndarray | None, np.ndarray | None]:
        """``(graph, place, volume)``: this graph with every weakly joined set merged into
        one vertex (:meth:`weak_sets`, :func:`contract`), and so again on the merged graph
        until none is left (a merged set's few, light edges can leave its neighbours weakly
        joined in turn); ``place`` maps every vertex to its vertex of ``graph`` (None when
        nothing merged) and ``volume``, per-vertex weights, is summed over each merged set.
        Labeled vertices keep their order.  One merged graph at a time is held: on large
        graphs each is a copy of the edges."""
        graph, place = self, None
        while (step := graph.weak_sets()) is not None:
            merged = np.zeros(step.max() + 1, dtype=bool)
            merged[step[graph.labeled]] = True
            if volume is not None:
                volume = np.bincount(step, weights=volume, minlength=merged.size)
            graph = LabeledGraph.build(contract(graph.W, step), merged, graph.targets)
            place = step if place is None else step[place]
        return graph, place, volume

    def weakly_joined(self) -> tuple[np.ndarray, bool]:
        """``(inside, crowded)``: the vertices of weakly joined sets (:meth:`weak_sets`, labeled
        or not), and whether a connected component holds two or more of them.

        A Laplacian with one vertex of each component held at 0 (Poisson learning) is
        numerically singular on every weakly joined set that does not hold that vertex: fine
        when a component has at most one such set and the vertex is taken inside it, not when
        it has two (then :func:`~structreg.solvers.laplace.excess_solve` solves it)."""
        found = self._weakly_joined()
        if found is None:
            return np.zeros(self.n, dtype=bool), False
        part, weak, _ = found
        inside = weak[part]
        first = np.unique(part[inside], return_index=True)[1]  # a vertex of every set
        sets = np.bincount(self.component[np.flatnonzero(inside)[first]])
        return inside, bool((sets > 1).any())

    def apart_labeled_parts(self) -> LabeledGraph:
        """This graph without its weak edges (weight below ``WEAK_LINK`` times the larger
        degree of their ends) that join two parts of the strong-edge graph which both hold
        labeled vertices: each such part becomes a component of its own.

        The harmonic solution barely feels such an edge, but the Poisson solution does:
        across an edge of weight ``w`` it steps by about the net source that flows through,
        divided by ``w``, so the two parts' scores are offset by ``1 / WEAK_LINK`` (1e8) or
        more times their variation inside the parts -- beyond what float64 resolves there --
        and the offset, set by the parts' label counts rather than by the points, would
        decide their labels."""
        found = self._strong_parts()
        if found is None:
            return self
        C, strong, part = found
        labels = np.bincount(part[self.labeled], minlength=int(part.max()) + 1)
        between = (part[C.row] != part[C.col]) & (labels[part[C.row]] > 0)
        drop = ~strong & between & (labels[part[C.col]] > 0)
        if not drop.any():
            return self
        keep = ~drop
        W = sp.csr_matrix((C.data[keep], (C.row[keep], C.col[keep])), shape=self.W.shape)
        return LabeledGraph.build(W, self.labeled, self.targets)

    def _strong_parts(self) -> tuple[sp.coo_matrix, np.ndarray, np.ndarray] | None:
        """``(C, strong, part)``: the edges, which are strong (at least ``WEAK_LINK``
        times the larger degree of their ends) and every vertex's component in the graph of
        the strong edges; None when every edge is strong.  Computed once per graph."""
        return self._strong

    @functools.cached_property
    def _strong(self) -> tuple[sp.coo_matrix, np.ndarray, np.ndarray] | None:
        if not self.W.nnz:
            return None
        W, degree = self.W, self.degree
        row = np.repeat(np.arange(self.n, dtype=W.indices.dtype), np.diff(W.indptr))
        strong = W.data >= WEAK_LINK * np.maximum(degree[row], degree[W.indices])
        if strong.all():
            return None
        C = sp.coo_matrix((W.data, (row, W.indices)), shape=W.shape)
        S = _kept_entries(W, row, strong)
        return C, strong, connected_components(S, directed=False)[1]

    def _weakly_joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(part, weak, labels)``: every vertex's component in the graph of the strong
        edges, which of these parts are weakly joined sets (labeled or not), and the labeled
        vertices in each part; None when every edge is strong."""
        found = self._strong_parts()
        if found is None:
            return None
        _, _, part = found
        n_sets = int(part.max()) + 1
        size = np.bincount(part, minlength=n_sets)
        labels = np.bincount(part[self.labeled], minlength=n_sets)
        cut, leaky, lightest, _ = part_terms(
            self.W, 0, part, n_sets, self.degree, WEAK_LINK, labels > 0
        )
        return part, weak_parts(size, cut, leaky, lightest), labels


# ---------------------------------------------------------------------------------------------
# terms over a block of rows: a whole graph in memory is one block, a partitioned graph sums
# its blocks' terms (structure.distributed_graphs)


def block_product(product, n: int, rows, cols, V: np.ndarray) -> np.ndarray:
    """``W_rc V`` from ``product``, a function giving ``W U`` for (n, ...) arrays ``U``: ``V``
    put at the vertices ``cols`` (0 elsewhere), multiplied, read at ``rows``.  The same
    terms as a product with the block, in the same order (the zeros add nothing)."""
    full = np.zeros((n,) + V.shape[1:])
    full[cols] = V
    return product(full)[rows]


def strong_edges(W: sp.csr_matrix, start: int, degree: np.ndarray, fraction: float):
    """The rows ``start, start + 1, ...`` held in ``W`` without their weak edges: those
    lighter than ``fraction`` times the larger ``degree`` of their ends."""
    row = np.repeat(np.arange(W.shape[0], dtype=W.indices.dtype), np.diff(W.indptr))
    keep = W.data >= fraction * np.maximum(degree[start + row], degree[W.indices])
    return _kept_entries(W, row, keep)


def _kept_entries(W: sp.csr_matrix, row: np.ndarray, keep: np.ndarray) -> sp.csr_matrix:
    """The CSR matrix ``W`` with only the entries of the mask ``keep`` (``row``: every
    entry's row), in their order: no sorting."""
    indptr = np.zeros(W.shape[0] + 1, dtype=W.indptr.dtype)
    np.cumsum(np.bincount(row[keep], minlength=W.shape[0]), out=indptr[1:])
    return sp.csr_matrix((W.data[keep], W.indices[keep], indptr), shape=W.shape)


def part_terms(
    W: sp.csr_matrix,
    start: int,
    part: np.ndarray,
    n_parts: int,
    degree: np.ndarray,
    fraction: float,
    labeled_part: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The terms of the weakly joined sets (:meth:`LabeledGraph.weak_sets`) over the rows
    ``start, start + 1, ...`` of a graph, held in ``W`` (those rows, global columns): per
    part of ``part`` (numbered below ``n_parts``), the weight of the edges that leave it,
    whether a vertex of it sends more than ``fraction`` of its ``degree`` out, and its
    lightest strong edge (at least ``fraction`` times the larger degree of its ends); and
    how many weak edges join two parts that both hold labeled vertices (``labeled_part``).
    Summed (the cuts and counts), or-ed and min-ed over blocks, they are the whole graph's."""
    C = W.tocoo()
    r = start + C.row
    leaving = part[r] != part[C.col]
    out = np.bincount(C.row[leaving], weights=C.data[leaving], minlength=W.shape[0])
    own = part[start : start + W.shape[0]]
    cut = np.bincount(own, weights=out, minlength=n_parts)
    leaky = np.zeros(n_parts, dtype=bool)
    leaky[own[out > fraction * degree[start : start + W.shape[0]]]] = True
    weak = C.data < fraction * np.maximum(degree[r], degree[C.col])
    lightest = np.full(n_parts, np.inf)
    np.minimum.at(lightest, part[r[~weak]], C.data[~weak])
    between = weak & leaving & labeled_part[part[r]] & labeled_part[part[C.col]]
    return cut, leaky, lightest, int(between.sum())


def weak_parts(
    size: np.ndarray, cut: np.ndarray, leaky: np.ndarray, lightest: np.ndarray
) -> np.ndarray:
    """Which parts are weakly joined sets: two or more vertices, joined to the rest by a
    total weight above 0 and at most their lightest strong edge, none leaking
    (:func:`part_terms`)."""
    return (size > 1) & (cut > 0) & ~leaky & (cut <= lightest)


def cut_terms(
    W: sp.csr_matrix, start: int, codes: np.ndarray, n_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """The terms of :func:`normalized_cut` over the rows ``start, start + 1, ...`` held in
    ``W``: per class of ``codes``, the edges that leave it and the edges of its vertices
    (self-loops not counted)."""
    C = W.tocoo()
    r = start + C.row
    off = r != C.col
    own = codes[r[off]]
    cut = own != codes[C.col[off]]
    return np.bincount(own[cut], minlength=n_classes), np.bincount(own, minlength=n_classes)


def cut_ratio(cut: np.ndarray, volume: np.ndarray) -> float:
    """``sum_k cut_k / vol_k`` (a class without edges counts 0)."""
    return float(np.sum(cut / np.where(volume > 0, volume, 1.0)))


def contract(W: sp.spmatrix, place: np.ndarray) -> sp.csr_matrix:
    """The graph ``W`` (symmetric) with the vertices that share a ``place`` merged: the weight
    between two places is the sum of the weights between their vertices, a place has no
    self-loop.  Its Laplacian is ``P^T (D - W) P`` (``P`` the places' indicator matrix), the
    harmonic energy of the functions constant on every place.

    Each edge is read once (the upper triangle) and the result is that sum plus its
    transpose, so it is exactly symmetric; one pass over the edges, where ``P^T W P`` took
    two sparse products."""
    m = int(place.max()) + 1
    edges = sp.triu(W, k=1, format="coo")
    a, b = place[edges.row], place[edges.col]
    apart = a != b
    a, b = a[apart], b[apart]
    upper = sp.csr_matrix((edges.data[apart], (np.minimum(a, b), np.maximum(a, b))), shape=(m, m))
    upper.sum_duplicates()
    Wc = sp.csr_matrix(upper + upper.T)
    Wc.eliminate_zeros()
    return Wc


def label_graph(W, labeled: np.ndarray, targets: np.ndarray):
    """The labeled graph of a Laplace solve on ``W``: ``W`` itself when it is one already;
    the holder's own when ``W`` is a graph held elsewhere (one with a ``labeled_graph``
    method, e.g. :class:`~structreg.structure.distributed_graphs.PartitionedGraph`, whose
    rows live on Dask workers); else :meth:`LabeledGraph.build` of the affinities ``W``.
    Every labeled graph answers the same questions (components, unreachable vertices, weakly
    joined sets, Laplacian blocks and the products that couple them)."""
    if hasattr(W, "labels_in_component"):
        return W
    if hasattr(W, "labeled_graph"):
        return W.labeled_graph(labeled, targets)
    return LabeledGraph.build(W, labeled, targets)


def normalized_cut(W: sp.spmatrix, labels: np.ndarray) -> float:
    """``sum_k cut(S_k) / vol(S_k)`` of the partition of the vertices by ``labels``, on the
    edges of ``W`` counted once each (weights ignored): how many kNN edges a labeling cuts,
    relative to the size of each class.  A labeling that follows the data's clusters cuts
    few.

    Examples
    --------
    >>> W = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0.5]]))
    >>> normalized_cut(W, np.array([0, 0, 1, 1]))  # one edge cut; volumes 3 and 3
    0.6666666666666666

    A graph held elsewhere (with a ``normalized_cut`` method of its own, e.g. a
    :class:`~structreg.structure.distributed_graphs.PartitionedGraph`) counts its own edges.
    """
    if hasattr(W, "normalized_cut"):
        return W.normalized_cut(labels)
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.ravel()
    return cut_ratio(*cut_terms(sp.csr_matrix(W), 0, codes, int(codes.max()) + 1))
