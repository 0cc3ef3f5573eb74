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
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

Weights = Literal["connectivity", "heat", "dot"]


def _check_weights(weights: str, t: float | None) -> None:
    if weights not in ("connectivity", "heat", "dot"):
        raise ValueError(f"weights must be 'connectivity', 'heat' or 'dot', got {weights!r}")
    if weights == "heat" and t is not None and not (np.isfinite(t) and t > 0):
        raise ValueError(f"heat-kernel width t must be a positive finite number, got {t!r}")


def knn_graph(
    X: np.ndarray,
    n_neighbors: int = 6,
    *,
    weights: Weights = "connectivity",
    t: float | None = None,
    symmetrize: bool = True,
) -> sp.csr_matrix:
    """Symmetric kNN adjacency matrix of the rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int
        Neighbours per point, not counting the point itself; must be < n_samples.
    weights : {"connectivity", "heat", "dot"}
    t : float or None
        Heat-kernel width, used when ``weights="heat"``; None (default) takes the mean
        squared length of the graph's edges.
    symmetrize : bool
        If True (default) ``i ~ j`` iff ``j in kNN(i)`` or ``i in kNN(j)``.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
    """
    X = _as_points(X)
    n = X.shape[0]
    _check_weights(weights, t)
    if not (isinstance(n_neighbors, (int, np.integer)) and n_neighbors >= 1):
        raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    if n_neighbors >= n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of points in the "
            f"graph ({n})"
        )
    # Ask for k+1 and drop self; with duplicate points 'self' may not come first, so
    # remove the diagonal explicitly and keep the k nearest others.
    nn = NearestNeighbors(n_neighbors=n_neighbors + 1).fit(X)
    ind = nn.kneighbors(X, return_distance=False)
    rows = np.repeat(np.arange(n), n_neighbors + 1)
    cols = ind.ravel()
    not_self = rows != cols
    # keep exactly k non-self neighbours per row
    order = np.cumsum(not_self.reshape(n, -1), axis=1).ravel()
    keep = not_self & (order <= n_neighbors)
    rows, cols = rows[keep], cols[keep]
    if symmetrize:  # union of both directions; every weight is a symmetric function of (i, j)
        pairs = np.unique(np.concatenate([rows * n + cols, cols * n + rows]))
        rows, cols = pairs // n, pairs % n
    dist = _pair_distances(X, rows, cols)
    data = _edge_weights(X, rows, cols, dist, weights, t)
    return sp.csr_matrix((data, (rows, cols)), shape=(n, n))


def _edge_weights(X, rows, cols, dist, weights, t):
    if weights == "connectivity":
        return np.ones(rows.shape[0])
    if weights == "heat":
        if t is None:
            t = float(np.mean(dist**2)) if dist.size else 1.0
        return np.exp(-(dist**2) / (t if t > 0 else 1.0))
    return _pair_dots(X, rows, cols)


def heat_reweight(W: sp.spmatrix, X, t: float | None = None) -> sp.csr_matrix:
    """The edges of ``W`` with heat weights ``exp(-||x_i - x_j||^2 / t)``; ``t=None`` is the mean
    squared edge length of ``W`` (one width for the whole graph)."""
    W = sp.coo_matrix(W)
    rows, cols = W.row, W.col
    dist = _pair_distances(_as_points(X), rows, cols)
    data = _edge_weights(None, rows, cols, dist, "heat", t)
    return sp.csr_matrix((data, (rows, cols)), shape=W.shape)


def _as_points(X):
    """Dense float array, or CSR for sparse input (distances are computed pairwise)."""
    return sp.csr_matrix(X, dtype=float) if sp.issparse(X) else np.asarray(X, dtype=float)


def _pair_dots(X, rows, cols) -> np.ndarray:
    """``<x_i, x_j>`` for the given pairs, dense or sparse X, O(nnz) per pair."""
    if sp.issparse(X):
        return np.asarray(X[rows].multiply(X[cols]).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X[rows], X[cols])


def _pair_distances(X, rows, cols) -> np.ndarray:
    """``||x_i - x_j||`` for the given pairs, dense or sparse X."""
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        d2 = sq[rows] + sq[cols] - 2.0 * _pair_dots(X, rows, cols)
        return np.sqrt(np.maximum(d2, 0.0))
    return np.sqrt(np.sum((X[rows] - X[cols]) ** 2, axis=1))


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
    W = W.copy()
    W.setdiag(0)
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
    """Edges of the kNN graph of ``X`` whose two ends share a label (DRLSC's G_w)."""
    labeled = np.ones(len(y), bool) if labeled is None else np.asarray(labeled, bool)
    return split_by_labels(knn_graph(X, n_neighbors, **kw), np.asarray(y), labeled)[0]


def between_class_graph(X, y, labeled=None, n_neighbors=6, **kw) -> sp.csr_matrix:
    """Edges of the kNN graph of ``X`` whose two ends have different labels (DRLSC's G_b)."""
    labeled = np.ones(len(y), bool) if labeled is None else np.asarray(labeled, bool)
    return split_by_labels(knn_graph(X, n_neighbors, **kw), np.asarray(y), labeled)[1]


def other_class_graph(
    X: np.ndarray, y: np.ndarray, labeled: np.ndarray, n_neighbors: int = 6, **kw
) -> sp.csr_matrix:
    """Heterogeneous neighbourhoods: each labeled point joined to its k nearest labeled points
    of *other* classes (pooled), symmetrised by union (LDR's zeta-neighbourhood graph).

    Only ``weights="connectivity"`` and ``"heat"`` are meaningful here; ``t=None`` takes the mean
    squared edge length.
    """
    X = _as_points(X)
    n = X.shape[0]
    weights, t = kw.get("weights", "connectivity"), kw.get("t")
    _check_weights(weights, t)
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
        (_edge_weights(X, rows, cols, dist, weights, t), (rows, cols)), shape=(n, n)
    )


def class_wise_graph(
    X: np.ndarray, y: np.ndarray, labeled: np.ndarray, n_neighbors: int = 6, **kw
) -> sp.csr_matrix:
    """Block-diagonal graph: one kNN graph inside each class of the labeled points.

    This is the supervised manifold-regularisation ("MR") construction: every class gets
    its own graph, and unlabeled points stay isolated.  Each class needs more than
    ``n_neighbors`` labeled points.
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
