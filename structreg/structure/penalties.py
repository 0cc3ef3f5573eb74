"""Structure penalties: objects that turn training data into a matrix ``M``.

A penalty is ``f^T M f`` on the vector ``f`` of model outputs at the n training points
(one column per output for one-of-c models: ``trace(F^T M F)``).  ``M`` is symmetric and
may be a ``scipy.sparse`` matrix, a dense array or a ``scipy.sparse.linalg.LinearOperator``
(e.g. a low-rank factor): the solvers only multiply by it.  It may be indefinite (DRLSC's
between-class term is subtracted); only the square loss accepts indefinite penalties.

Every penalty implements ``build(X, y, labeled) -> M`` where ``X`` is the training input
(labeled and unlabeled rows), ``y`` the integer class codes (arbitrary where unlabeled)
and ``labeled`` a boolean mask.  Weighted sums are formed with :func:`combine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, aslinearoperator, eigsh
from sklearn.base import BaseEstimator

from .._params import GRAPH_CHOICES
from .graphs import (
    _check_algorithm,
    check_graph,
    check_metric,
    class_wise_graph,
    heat_reweight,
    knn_graph,
    laplacian,
    other_class_graph,
    split_by_labels,
    unit_rows,
)


class Penalty(BaseEstimator):
    """Base class: ``build(X, y, labeled)`` returns the symmetric penalty matrix M.

    Subclasses set ``psd`` to say whether M is always positive semi-definite.
    """

    psd: bool = False

    def build(self, X: np.ndarray, y: np.ndarray, labeled: np.ndarray):  # pragma: no cover
        raise NotImplementedError

    def reads_labels(self) -> bool:
        """Whether ``build`` uses ``y`` or ``labeled`` (True unless a subclass knows it does
        not): a matrix that reads only X can be reused for other labels of the same X."""
        return True


class LaplacianPenalty(Penalty):
    """Graph-Laplacian smoothness ``f^T L f = 1/2 sum_ij W_ij (f_i - f_j)^2``.

    Parameters
    ----------
    graph : {"knn", "class-wise", "other-class", "within-class", "between-class"} or sparse
        ``"knn"``: one kNN graph over all training points, labeled and unlabeled
        (semi-supervised manifold regularisation).  ``"class-wise"``: a kNN graph inside each
        class of the labeled points (supervised MR; LDR's homogeneous neighbourhoods).
        ``"other-class"``: each labeled point joined to its k nearest labeled points of the
        other classes (LDR's heterogeneous neighbourhoods).
        ``"within-class"`` / ``"between-class"``:
        the edges of the kNN graph joining labeled points of the same / different classes
        (DRLSC's G_w and G_b).  A sparse (n_samples, n_samples) symmetric non-negative matrix
        is used as the adjacency over the training points as given.
    n_neighbors : int, default=6
        Neighbours per point (not counting itself).
    weights : {"connectivity", "heat", "dot"}, default="heat"
        Edge weights, see :mod:`structreg.structure.graphs`.
    t : float or None, default=None
        Heat-kernel width; ``None`` uses the mean squared length of the graph's edges.
    normalized : bool, default=False
        Use ``I - D^{-1/2} W D^{-1/2}`` instead of ``D - W``.
    scale : {None, "volume"}, default=None
        ``"volume"``: divide the Laplacian by its trace, the graph's volume
        ``vol(W) = sum_ij W_ij`` (``scaled_laplacian``).
    algorithm : {"auto", "exact", "approximate"}, default="auto"
        Neighbour search of the kNN graphs (``"knn"``, ``"class-wise"``, ``"within-class"``,
        ``"between-class"``), see :func:`~structreg.structure.graphs.knn_graph`:
        ``"approximate"`` uses NN-descent (``pip install "structreg[ann]"``), ``"auto"`` only
        for large high-dimensional data.  ``"other-class"`` graphs are always searched exactly.
    metric : {"euclidean", "cosine"}, default="euclidean"
        Distance of the kNN graphs; ``"cosine"``: the graphs of the rows scaled to unit norm
        (:func:`~structreg.structure.graphs.unit_rows`), e.g. for TF-IDF rows.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.structure import LaplacianPenalty
    >>> X = np.random.default_rng(0).normal(size=(10, 2))
    >>> M = LaplacianPenalty(n_neighbors=3).build(X, np.zeros(10, int), np.ones(10, bool))
    >>> bool(np.allclose(M @ np.ones(10), 0))
    True
    """

    def __init__(
        self,
        graph="knn",
        n_neighbors=6,
        weights="heat",
        t=None,
        normalized=False,
        scale=None,
        algorithm="auto",
        metric="euclidean",
    ):
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.t = t
        self.normalized = normalized
        self.scale = scale
        self.algorithm = algorithm
        self.metric = metric

    @property
    def psd(self) -> bool:
        """PSD unless dot-product weights (which may be negative) are used."""
        return self.weights != "dot"

    def adjacency(self, X: np.ndarray, y: np.ndarray, labeled: np.ndarray) -> sp.csr_matrix:
        """The graph W over the training points."""
        n = X.shape[0]
        if sp.issparse(self.graph) or isinstance(self.graph, np.ndarray):
            return check_graph(self.graph, n)
        if self.graph not in GRAPH_CHOICES:
            raise ValueError(
                f"graph must be one of {GRAPH_CHOICES} or a sparse matrix, got {self.graph!r}"
            )
        if not isinstance(self.n_neighbors, Integral) or self.n_neighbors < 1:
            raise ValueError(f"n_neighbors must be a positive integer, got {self.n_neighbors!r}")
        _check_algorithm(self.algorithm)
        if check_metric(self.metric) == "cosine":
            X = unit_rows(X)
        kw = dict(weights=self.weights, t=self.t)
        if self.graph == "other-class":  # queries labeled points only: always exact
            return other_class_graph(X, y, labeled, self.n_neighbors, **kw)
        kw["algorithm"] = self.algorithm
        if self.graph == "class-wise":
            if self.weights == "heat" and self.t is None:  # one width for all classes
                kw["weights"] = "connectivity"
                W = class_wise_graph(X, y, labeled, self.n_neighbors, **kw)
                return heat_reweight(W, X)
            return class_wise_graph(X, y, labeled, self.n_neighbors, **kw)
        W = knn_graph(X, self.n_neighbors, **kw)
        if self.graph == "knn":
            return W
        within, between = split_by_labels(W, y, labeled)
        return within if self.graph == "within-class" else between

    def build(self, X, y, labeled):
        L = laplacian(self.adjacency(X, y, labeled), normalized=self.normalized)
        return scaled_laplacian(L, self.scale)

    def reads_labels(self) -> bool:
        return isinstance(self.graph, str) and self.graph != "knn"


def scaled_laplacian(L, scale: str | None):
    """``L``, or for ``scale="volume"`` ``L / trace(L)``.

    For ``L = D - W`` (and the signed ``D - W o S``) the trace is the graph's volume
    ``vol(W) = sum_ij |W_ij|``, so ``f^T L f / vol`` is the weighted mean over the edges of
    ``(f_i -+ f_j)^2 / 2``: of order one whatever the number of points, of neighbours or the
    edge weights.  (A normalised Laplacian's trace is its number of non-isolated points.)
    """
    if scale is None:
        return L
    if scale != "volume":
        raise ValueError(f"scale must be None or 'volume', got {scale!r}")
    volume = float(L.diagonal().sum())
    if not volume > 0:
        raise ValueError("scale='volume' needs a graph with at least one weighted edge")
    return L / volume


class PrecomputedPenalty(Penalty):
    """A user-supplied symmetric matrix M over the training points (sparse or dense).

    Parameters
    ----------
    matrix : array-like or sparse matrix of shape (n_samples, n_samples)
    psd : bool, default=False
        Declare M positive semi-definite (required to use it with the hinge loss; checked).
    """

    def __init__(self, matrix=None, psd=False):
        self.matrix = matrix
        self.psd = psd

    def reads_labels(self) -> bool:
        return False

    def build(self, X, y, labeled):
        n = X.shape[0]
        M = self.matrix
        if M is None:
            raise ValueError("PrecomputedPenalty needs a matrix")
        M = sp.csr_matrix(M, dtype=float) if sp.issparse(M) else np.asarray(M, dtype=float)
        if M.shape != (n, n):
            raise ValueError(
                f"precomputed penalty has shape {M.shape}; it must be ({n}, {n}) over the "
                "training points"
            )
        data = M.data if sp.issparse(M) else M
        if not np.all(np.isfinite(data)):
            raise ValueError("precomputed penalty contains NaN or infinite entries")
        if abs(M - M.T).max() > 1e-10 * max(1.0, abs(M).max()):
            raise ValueError("precomputed penalty must be symmetric")
        return M


def _check_weight(weight) -> float:
    if not isinstance(weight, Real) or not np.isfinite(weight):
        raise ValueError(f"penalty weight must be a finite real number, got {weight!r}")
    return float(weight)


def combine(terms: Sequence[tuple[float, object]], n: int):
    """Weighted sum ``sum_k w_k M_k`` of penalty matrices of size ``n``.

    Sparse and dense terms are added as matrices (sparse when all are sparse); a
    :class:`~scipy.sparse.linalg.LinearOperator` term turns the sum into an operator.
    Returns None when there is no term with a nonzero weight.
    """
    terms = [(_check_weight(w), M) for w, M in terms if w != 0]
    if not terms:
        return None
    if any(isinstance(M, LinearOperator) for _, M in terms):
        ops = [w * aslinearoperator(M) for w, M in terms]
        total = ops[0]
        for op in ops[1:]:
            total = total + op
        return total
    if all(sp.issparse(M) for _, M in terms):
        return sp.csr_matrix(sum(w * M for w, M in terms))
    total = np.zeros((n, n))
    for w, M in terms:
        total += w * (M.toarray() if sp.issparse(M) else M)
    return total


def checked_terms(penalties) -> list[tuple[float, object]]:
    """A list of ``(weight, Penalty)`` pairs checked: each a pair whose penalty has a
    ``build`` method and whose weight is a finite real number (as a float)."""
    checked = []
    for item in penalties or ():
        if not (isinstance(item, tuple) and len(item) == 2 and hasattr(item[1], "build")):
            raise ValueError(
                f"each penalty must be a (weight, penalty) pair with a .build method; got {item!r}"
            )
        weight, penalty = item
        checked.append((_check_weight(weight), penalty))
    return checked


def weighted_psd(weights: Sequence[float], psd: Sequence[bool]) -> bool:
    """Whether ``sum_k w_k M_k`` is PSD by construction: every term with a nonzero weight is
    a PSD penalty (``psd[k]``) with a positive weight."""
    return all(flag and w > 0 for w, flag in zip(weights, psd, strict=True) if w != 0)


def build_penalties(penalties, X, y, labeled) -> tuple[object, bool]:
    """Build and combine a list of ``(weight, Penalty)`` pairs on the training data.

    Returns ``(M, psd)`` where ``psd`` is True when every term with a nonzero weight is a
    PSD penalty with a non-negative weight (so the sum is PSD).
    """
    terms = [(w, p) for w, p in checked_terms(penalties) if w != 0]
    matrices = [(w, penalty.build(X, y, labeled)) for w, penalty in terms]
    flags = [bool(getattr(penalty, "psd", False)) for _, penalty in terms]
    return combine(matrices, X.shape[0]), weighted_psd([w for w, _ in terms], flags)


DENSE_SPECTRUM_MAX = 2000
"""Up to this size :func:`smallest_eigenvalue` forms the matrix and calls LAPACK's ``eigvalsh``."""


def smallest_eigenvalue(M, n: int) -> float:
    """The smallest eigenvalue of a symmetric penalty ``M`` of size ``n`` (sparse, dense or a
    :class:`~scipy.sparse.linalg.LinearOperator`; None is the zero matrix).

    Dense ``eigvalsh`` up to ``DENSE_SPECTRUM_MAX``, else Lanczos (``eigsh``, which="SA",
    relative tolerance 1e-6): its Ritz value can only lie above the true eigenvalue, by far
    less than the margin the callers keep (e.g. half of a convexity bound).
    """
    if M is None:
        return 0.0
    if n <= DENSE_SPECTRUM_MAX:
        if isinstance(M, LinearOperator):
            dense = M @ np.eye(n)
        else:
            dense = M.toarray() if sp.issparse(M) else np.asarray(M)
        return float(np.linalg.eigvalsh(0.5 * (dense + dense.T))[0])
    return float(eigsh(aslinearoperator(M), k=1, which="SA", tol=1e-6)[0][0])


class DiagonalPlusLowRank(LinearOperator):
    """The symmetric operator ``diag(d) + U diag(s) U^T`` (O(n r) per product; picklable)."""

    def __init__(self, d: np.ndarray, U: np.ndarray, s: np.ndarray):
        self.d, self.U, self.s = np.asarray(d, float), np.asarray(U, float), np.asarray(s, float)
        super().__init__(dtype=np.dtype(float), shape=(len(d), len(d)))

    def _matmat(self, V):
        V = np.asarray(V, dtype=float)
        return self.d[:, None] * V + self.U @ (self.s[:, None] * (self.U.T @ V))

    def _matvec(self, v):
        return self._matmat(np.reshape(v, (-1, 1))).ravel()

    def _adjoint(self):
        return self


def group_scatter(groups: np.ndarray, member: np.ndarray, kind: str, definition: str):
    """Scatter of the outputs over groups (classes or clusters) as a diagonal-plus-rank-g
    operator; see :class:`ClassScatterPenalty` for the definitions.  Rows outside ``member``
    are zero."""
    y, labeled = np.asarray(groups), np.asarray(member, dtype=bool)
    n = y.shape[0]
    rows = np.flatnonzero(labeled)
    classes, code = np.unique(y[rows], return_inverse=True)
    code = code.ravel()
    counts = np.bincount(code, minlength=len(classes)).astype(float)
    # E[:, c] = indicator of class c / n_c, so E^T f are the class means
    E = np.zeros((n, len(classes)))
    E[rows, code] = 1.0 / counts[code]
    mean = labeled / labeled.sum()  # f^T mean = overall mean over labeled points
    if definition == "variance":
        if kind == "within":  # diag(1/n_c) - sum_c e_c e_c^T
            d = np.zeros(n)
            d[rows] = 1.0 / counts[code]
            return DiagonalPlusLowRank(d, E, -np.ones(len(classes)))
        k = len(classes)  # 2 (k E E^T - (E 1)(E 1)^T)
        U = np.hstack([E, E.sum(axis=1, keepdims=True)])
        return DiagonalPlusLowRank(np.zeros(n), U, np.r_[np.full(k, 2.0 * k), -2.0])
    within_d, within_s = labeled.astype(float), -counts  # I_c - n_c e_c e_c^T per class
    if kind == "within":
        return DiagonalPlusLowRank(within_d, E, within_s)
    N = labeled.sum()
    if kind == "total":  # I - N mean mean^T on the labeled points
        return DiagonalPlusLowRank(within_d, mean[:, None], np.array([-float(N)]))
    # between = total - within = sum_c n_c e_c e_c^T - N mean mean^T
    U = np.hstack([E, mean[:, None]])
    return DiagonalPlusLowRank(np.zeros(n), U, np.r_[counts, -float(N)])


class ClassScatterPenalty(Penalty):
    """Within- or between-class scatter of the outputs, as ``f^T M f`` over labeled points.

    With ``m_c`` the mean output of class c (``n_c`` labeled points) and ``m`` the overall mean:

    ``definition="scatter"`` (maximum-margin-criterion style, GDR of Zhang et al. 2008)
        within ``W(f) = sum_c sum_{i in c} ||f_i - m_c||^2``,
        between ``B(f) = sum_c n_c ||m_c - m||^2``, total ``T = W + B = sum_i ||f_i - m||^2``.
    ``definition="variance"`` (generalized variances, DRGV of Xue et al. 2009, eqs. 11-12)
        within ``S_w(f) = sum_c 1/n_c sum_{i in c} ||f_i - m_c||^2``,
        between ``S_b(f) = sum_c sum_{k != c} ||m_c - m_k||^2``.

    ``M`` is returned as a diagonal-plus-rank-c :class:`~scipy.sparse.linalg.LinearOperator`
    (never an n x n dense matrix).  Unlabeled points get zero rows.  PSD.

    Parameters
    ----------
    kind : {"within", "between", "total"}, default="within"
    definition : {"scatter", "variance"}, default="scatter"
    """

    psd = True

    def __init__(self, kind="within", definition="scatter"):
        self.kind = kind
        self.definition = definition

    def build(self, X, y, labeled):
        if self.kind not in ("within", "between", "total"):
            raise ValueError(f"kind must be 'within', 'between' or 'total', got {self.kind!r}")
        if self.definition not in ("scatter", "variance"):
            raise ValueError(f"definition must be 'scatter' or 'variance', got {self.definition!r}")
        if self.definition == "variance" and self.kind == "total":
            raise ValueError("kind='total' is only defined for definition='scatter'")
        return group_scatter(y, labeled, self.kind, self.definition)


class ClusterScatterPenalty(Penalty):
    """Sum of the cluster covariances of the outputs: ``f^T Psi f`` with
    ``Psi = blockdiag_C (I / |C| - 1 1^T / |C|^2)`` (SRSVM, Xue, Chen & Yang 2011, eqs. 10, 19).

    For a linear model ``f = Z w + b`` this is ``w^T Sigma w`` with ``Sigma`` the sum over all
    clusters of ``1/|C| sum_{i in C} (z_i - mu_C)(z_i - mu_C)^T``; the bias cancels.

    Parameters
    ----------
    clusters : array-like of int, shape (n_samples,)
        Cluster id of every training point (-1: in no cluster, e.g. unlabeled).  Models compute
        it (e.g. SRSVM with Ward's linkage and the knee point) and pass it here.
    """

    psd = True

    def __init__(self, clusters=None):
        self.clusters = clusters

    def _ids(self, n: int) -> np.ndarray:
        if self.clusters is None:
            raise ValueError("ClusterScatterPenalty needs cluster ids")
        ids = np.asarray(self.clusters)
        if ids.shape != (n,):
            raise ValueError(
                f"clusters has shape {ids.shape}; expected ({n},) over the training points"
            )
        return ids

    def build(self, X, y, labeled):
        ids = self._ids(X.shape[0])
        return group_scatter(ids, ids >= 0, "within", "variance")

    def root(self, n: int, rows: np.ndarray | None = None) -> ClusterScatterRoot:
        """The symmetric square root ``S`` of ``Psi`` (``S S = Psi``) over ``n`` training points,
        for factored solvers (e.g. the hinge loss's deformed kernel).

        ``rows`` (a boolean mask over the ``n`` points, e.g. the labeled ones): the root of
        ``Psi`` restricted to them, which must hold every clustered point (``Psi`` is zero
        outside them, so nothing of the penalty is lost)."""
        ids = self._ids(n)
        if rows is None:
            return ClusterScatterRoot(ids)
        rows = np.asarray(rows, dtype=bool)
        if np.any(ids[~rows] >= 0):
            raise ValueError(
                "ClusterScatterPenalty.root: clustered points lie outside the rows asked for"
            )
        return ClusterScatterRoot(ids[rows])


class ClusterScatterRoot(LinearOperator):
    """Symmetric square root of the cluster scatter ``Psi`` of :class:`ClusterScatterPenalty`.

    ``S = blockdiag_C (I - 1 1^T / |C|) / sqrt(|C|)``: ``S S = Psi`` because the centring
    projection is idempotent.  ``S A`` centres the rows of ``A`` inside every cluster and
    scales them by ``1 / sqrt(|C|)``, O(n m) for ``A`` of shape (n, m); rows and columns of
    points in no cluster (id -1) are zero.

    Parameters
    ----------
    clusters : array-like of int, shape (n_samples,)
        Cluster id of every training point (-1: in no cluster).
    """

    def __init__(self, clusters):
        ids = np.asarray(clusters)
        n = ids.shape[0]
        member = ids >= 0
        self.outside = np.flatnonzero(~member)
        _, code, counts = np.unique(ids[member], return_inverse=True, return_counts=True)
        self.code = np.zeros(n, dtype=np.intp)
        self.code[member] = code.ravel()
        self.scale = np.zeros(n)
        self.scale[member] = 1.0 / np.sqrt(counts[code.ravel()])
        # cluster means as one product: row c holds 1/|C| on the members of cluster c
        self.means = np.zeros((len(counts), n))
        self.means[self.code[member], np.flatnonzero(member)] = 1.0 / counts[code.ravel()]
        super().__init__(dtype=np.dtype(float), shape=(n, n))

    def _matmat(self, A):
        A = np.asarray(A, dtype=float)
        if self.means.shape[0] == 0:
            return np.zeros_like(A)
        if A.flags.f_contiguous and not A.flags.c_contiguous:  # (A^T S)^T: contiguous access
            out = np.take(A.T @ self.means.T, self.code, axis=1)
            np.subtract(A.T, out, out=out)
            out *= self.scale
            out[:, self.outside] = 0.0
            return out.T
        out = np.take(self.means @ A, self.code, axis=0)  # the one (n, m) array allocated
        np.subtract(A, out, out=out)
        out *= self.scale[:, None]
        out[self.outside] = 0.0
        return out

    def _matvec(self, v):
        return self._matmat(np.reshape(v, (-1, 1))).ravel()

    def _adjoint(self):
        return self

    def _transpose(self):
        return self
