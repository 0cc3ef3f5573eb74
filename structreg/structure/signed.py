"""Signed and labeled-pair Laplacian penalties (DAMR and SSDR of Wu et al.).

Two penalty families used by the discrimination-aware manifold models:

* :class:`SignedLaplacianPenalty` -- the cluster-aware signed Laplacian ``L_D = D - W o S``
  of DAMR / DA_LapRLSC (Wang, Chen, Xue & Fu, Neurocomputing 2015, eqs. 9-13), built on the
  edges of a kNN graph only (``O(n k)`` memory, never ``n x n`` dense);
* :class:`LabeledPairPenalty` -- the Laplacians of the complete within-class and
  between-class graphs over the labeled points with edge weight ``1/l`` (SSDR of Wu et al.
  2010, eqs. 4-5 of the DAMR paper), as diagonal-plus-rank-(c+1) operators.

The signed Laplacian
--------------------
For a symmetric ``W >= 0`` and a symmetric sign matrix ``S`` (entries +-1),

    1/2 sum_ij W_ij (f_i - S_ij f_j)^2 = f^T (D - W o S) f,   D_ii = sum_j W_ij,

because ``S_ij^2 = 1``.  So ``D`` is the degree matrix of ``W`` itself (equivalently of
``|W o S|``), *not* of the signed matrix ``W o S``; with that ``D`` the left-hand side shows
``L_D`` is positive semi-definite (Kunegis et al.'s signed Laplacian).  Taking the signed
degrees ``sum_j W_ij S_ij`` instead would give an indefinite matrix as soon as a negative
edge exists (the tests show both facts).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

from .graphs import _check_weights
from .penalties import DiagonalPlusLowRank, LaplacianPenalty, Penalty, scaled_laplacian

__all__ = [
    "LabeledPairPenalty",
    "SignedLaplacianPenalty",
    "cluster_agreement",
    "signed_laplacian",
]


def signed_laplacian(W: sp.spmatrix, S: sp.spmatrix) -> sp.csr_matrix:
    """``L_D = D - W o S`` with ``D_ii = sum_j |W_ij S_ij|`` (positive semi-definite).

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights.
    S : sparse matrix of shape (n, n)
        Symmetric signs (+-1) on the edges of ``W`` (entries off the edges are ignored).

    Returns
    -------
    L_D : scipy.sparse.csr_matrix of shape (n, n)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> W = sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]]))
    >>> S = sp.csr_matrix(np.array([[0, -1.0], [-1.0, 0]]))
    >>> signed_laplacian(W, S).toarray()  # 1/2 sum W (f_i + f_j)^2 = 2 (f_1 + f_2)^2
    array([[2., 2.],
           [2., 2.]])
    """
    W = sp.csr_matrix(W, dtype=float)
    signed = W.multiply(sp.csr_matrix(S, dtype=float)).tocsr()
    degree = np.asarray(abs(signed).sum(axis=1)).ravel()
    return (sp.diags(degree) - signed).tocsr()


def cluster_agreement(W: sp.spmatrix, clusters: np.ndarray) -> np.ndarray:
    """Per point, the share of its edge weight that stays inside its own cluster.

    ``a_i = sum_{j: c_j = c_i} W_ij / sum_j W_ij`` for the symmetric non-negative graph W and
    cluster ids ``c`` (0 for a point without edges or with a negative, noise, id).  Points deep
    inside a cluster get 1; points where the clustering cuts through a dense part of the graph
    (a cluster boundary that is not a gap in the data) get about 1/2.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> W = sp.csr_matrix(np.array([[0, 1, 1.0], [1, 0, 0], [1, 0, 0]]))
    >>> cluster_agreement(W, np.array([0, 0, 1]))
    array([0.5, 1. , 0. ])
    """
    W = sp.coo_matrix(W)
    clusters = np.asarray(clusters)
    n = W.shape[0]
    same = (clusters[W.row] == clusters[W.col]) & (clusters[W.row] >= 0)
    inside = np.bincount(W.row, weights=np.where(same, W.data, 0.0), minlength=n)
    degree = np.bincount(W.row, weights=W.data, minlength=n)
    return np.divide(inside, degree, out=np.zeros(n), where=degree > 0)


class SignedLaplacianPenalty(Penalty):
    """DAMR's cluster-aware signed Laplacian ``f^T L_D f = 1/2 sum_ij W_ij (f_i - S_ij f_j)^2``.

    On every edge ``(i, j)`` of a kNN graph with weights ``W0`` (over labeled and unlabeled
    points), following the DAMR paper (Wang et al. 2015, eqs. 9-11):

    * ``S0_ij`` = +1 if both ends are labeled with the same class, -1 if both are labeled with
      different classes (``S^l``); otherwise +1 if they share a cluster, -1 if not (``S^c``);
    * ``w_i`` = 1 for a labeled point, ``reliability`` (the paper's gamma) for an unlabeled one,
      ``T_ij = w_i w_j``;
    * ``S_ij`` = -1 if ``S0_ij = -1`` and ``T_ij > 1/2``, else +1 (eq. 10);
    * ``W_ij = T_ij W0_ij`` on the signed pairs (``S_ij = -1``) and ``W0_ij`` elsewhere;

    and ``L_D = D - W o S`` with ``D`` the degree matrix of ``W`` (module docstring: PSD).

    Eq. (11) as printed keys the reweighting on ``S0`` rather than ``S``, which also scales by
    ``T_ij`` the *demoted* pairs (``S0_ij = -1`` but ``T_ij <= 1/2``, which eq. (10) turns back
    into smoothness pairs); at ``reliability = 0`` that deletes every cross-cluster edge that
    touches an unlabeled point, so the model would not degenerate to manifold regularisation
    as the paper's Section 3.2 says it does.  ``demoted_weight="full"`` (default) keeps the
    manifold weight ``W0`` on demoted pairs, so that ``reliability <= 1/2`` gives the plain
    Laplacian except on edges joining labeled points of different classes (``T = 1`` there
    whatever the reliability); ``demoted_weight="scaled"`` is eq. (11) as printed.

    Clusters are +1 within a cluster and -1 across clusters for any number of clusters (the
    paper's two-cluster indicator ``y^c_i y^c_j`` generalised); a negative cluster id (noise,
    e.g. DBSCAN) carries no cluster information: its pairs are smoothness pairs.

    Parameters
    ----------
    clusters : array-like of int, shape (n_samples,)
        Cluster id of every training point (models compute it with their clusterer).
    reliability : float in [0, 1] or "auto", default=1.0
        Weight ``w_i`` of an unlabeled point (the paper's gamma).  ``"auto"``: per point, how
        far the clustering agrees with the graph around it, ``w_i`` = the share of its ``W0``
        edge weight inside its own cluster (:func:`cluster_agreement`): a cluster boundary
        through a gap in the data keeps its signed pairs, one that cuts through a dense part
        of the graph (where ``w_i w_j <= 1/2``) loses them.
    n_neighbors : int, default=6
        k of the kNN graph ``W0``.
    weights : {"connectivity", "heat", "dot"}, default="heat"
        Edge weights of ``W0`` (see :mod:`structreg.structure.graphs`).
    t : float or None, default=None
        Heat-kernel width; None uses the mean squared edge length.
    demoted_weight : {"full", "scaled"}, default="full"
        Weight of the pairs eq. (10) demotes to smoothness pairs: ``W0`` or ``T W0``.
    scale : {None, "volume"}, default=None
        ``"volume"``: divide ``L_D`` by its trace, the signed graph's volume
        (``scaled_laplacian``).

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.structure.signed import SignedLaplacianPenalty
    >>> X = np.r_[np.zeros((4, 1)), np.ones((4, 1))] + 0.01 * np.arange(8)[:, None]
    >>> pen = SignedLaplacianPenalty(clusters=np.repeat([0, 1], 4), n_neighbors=4)
    >>> L = pen.build(X, np.full(8, -1), np.zeros(8, bool))
    >>> bool(np.linalg.eigvalsh(L.toarray()).min() > -1e-12)
    True
    """

    def __init__(
        self,
        clusters=None,
        reliability=1.0,
        n_neighbors=6,
        weights="heat",
        t=None,
        demoted_weight="full",
        scale=None,
    ):
        self.clusters = clusters
        self.reliability = reliability
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.t = t
        self.demoted_weight = demoted_weight
        self.scale = scale

    @property
    def psd(self) -> bool:
        """PSD unless dot-product weights (which may be negative) are used."""
        return self.weights != "dot"

    def _check(self, n: int) -> np.ndarray:
        r = self.reliability
        if not (isinstance(r, str) and r == "auto") and (
            isinstance(r, bool) or not isinstance(r, Real) or not 0.0 <= r <= 1.0
        ):
            raise ValueError(f"reliability must be a real number in [0, 1] or 'auto', got {r!r}")
        if self.demoted_weight not in ("full", "scaled"):
            raise ValueError(
                f"demoted_weight must be 'full' or 'scaled', got {self.demoted_weight!r}"
            )
        _check_weights(self.weights, self.t)
        if self.clusters is None:
            raise ValueError("SignedLaplacianPenalty needs the cluster id of every point")
        clusters = np.asarray(self.clusters)
        if clusters.shape != (n,) or clusters.dtype.kind not in "iu":
            raise ValueError(
                f"clusters must be integer ids of shape ({n},) over the training points, got "
                f"dtype {clusters.dtype} and shape {clusters.shape}"
            )
        return clusters

    def signed_graph(
        self, X: np.ndarray, y: np.ndarray, labeled: np.ndarray
    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """The reweighted graph ``W`` (eq. 11) and the signs ``S`` (eq. 10) on its edges."""
        X = np.asarray(X) if not sp.issparse(X) else X
        n = X.shape[0]
        clusters = self._check(n)
        labeled = np.asarray(labeled, dtype=bool)
        y = np.asarray(y)
        W0 = LaplacianPenalty(
            graph="knn", n_neighbors=self.n_neighbors, weights=self.weights, t=self.t
        ).adjacency(X, y, labeled)
        W0 = sp.coo_matrix(W0)
        i, j, w0 = W0.row, W0.col, W0.data
        both = labeled[i] & labeled[j]
        no_cluster = (clusters[i] < 0) | (clusters[j] < 0)
        same = np.where(both, y[i] == y[j], no_cluster | (clusters[i] == clusters[j]))
        if isinstance(self.reliability, str):  # "auto": the clustering's local agreement
            reliability = cluster_agreement(W0, clusters)
            reliability[labeled] = 1.0
        else:
            reliability = np.where(labeled, 1.0, float(self.reliability))
        T = reliability[i] * reliability[j]
        signed = ~same & (T > 0.5)
        scale = signed if self.demoted_weight == "full" else ~same
        data = np.where(scale, T * w0, w0)
        W = sp.csr_matrix((data, (i, j)), shape=(n, n))
        S = sp.csr_matrix((np.where(signed, -1.0, 1.0), (i, j)), shape=(n, n))
        return W, S

    def build(self, X, y, labeled):
        return scaled_laplacian(signed_laplacian(*self.signed_graph(X, y, labeled)), self.scale)


class LabeledPairPenalty(Penalty):
    """Laplacian of the complete within- or between-class graph over the labeled points.

    Edge weight ``1/l`` (``l`` labeled points) between every two labeled points of the same
    class (``kind="within"``, SSDR's ``W_w``) or of different classes (``kind="between"``,
    ``W_b``), as in Wu et al. 2010 (eqs. 4-5 of the DAMR paper):

        f^T L_w f = 1/(2l) sum_{y_i = y_j} (f_i - f_j)^2,
        f^T L_b f = 1/(2l) sum_{y_i != y_j} (f_i - f_j)^2.

    With ``1_c`` the indicator of the labeled points of class c (``n_c`` of them),
    ``L_w = (1/l) sum_c (n_c diag(1_c) - 1_c 1_c^T)`` and ``L_w + L_b`` is the complete graph's
    ``(1/l)(l diag(1_L) - 1_L 1_L^T)``; both are returned as diagonal-plus-low-rank
    :class:`~scipy.sparse.linalg.LinearOperator` s (``O(n c)`` memory).  PSD; unlabeled points
    get zero rows.

    ``signed=True`` (``kind="between"`` only) gives instead the signless Laplacian
    ``D_b + W_b`` of the between-class graph, ``f^T (D_b + W_b) f = 1/(2l) sum_{y_i != y_j}
    (f_i + f_j)^2``: DAMR's signed form (its eq. 12 with ``S_ij = -1``), which pushes the
    outputs of different classes towards opposite values while staying PSD.

    Parameters
    ----------
    kind : {"within", "between"}, default="within"
    signed : bool, default=False
        Between-class pairs penalised by ``(f_i + f_j)^2`` instead of ``(f_i - f_j)^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.structure.signed import LabeledPairPenalty
    >>> y, labeled = np.array([0, 0, 1, -1]), np.array([True, True, True, False])
    >>> f = np.array([1.0, 2.0, 4.0, 9.0])
    >>> Lb = LabeledPairPenalty("between").build(np.zeros((4, 1)), y, labeled)
    >>> round(float(f @ (Lb @ f)), 10)  # ((1 - 4)^2 + (2 - 4)^2) / 3
    4.3333333333
    """

    psd = True

    def __init__(self, kind="within", signed=False):
        self.kind = kind
        self.signed = signed

    def build(self, X, y, labeled):
        if self.kind not in ("within", "between"):
            raise ValueError(f"kind must be 'within' or 'between', got {self.kind!r}")
        y, labeled = np.asarray(y), np.asarray(labeled, dtype=bool)
        n_lab = int(labeled.sum())
        if n_lab == 0:
            raise ValueError("LabeledPairPenalty needs labeled points")
        classes = np.unique(y[labeled])
        E = np.stack([labeled & (y == c) for c in classes], axis=1).astype(float)
        class_size = E @ E.sum(axis=0)  # n_c of each labeled point's class, 0 if unlabeled
        if self.kind == "within":
            if self.signed:
                raise ValueError("signed=True applies to kind='between' only")
            return DiagonalPlusLowRank(class_size / n_lab, E, np.full(len(classes), -1.0 / n_lab))
        d = (labeled * n_lab - class_size) / n_lab
        U = np.hstack([E, labeled[:, None].astype(float)])
        s = np.r_[np.full(len(classes), 1.0 / n_lab), -1.0 / n_lab]  # -W_b
        return DiagonalPlusLowRank(d, U, -s if self.signed else s)
