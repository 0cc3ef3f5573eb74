"""Discrimination-aware manifold regularization: DA_LapRLSC (Wang, Chen, Xue & Fu,
Neurocomputing 2015)."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .._params import NONNEGATIVE_OR_AUTO
from ..structure.signed import SignedLaplacianPenalty
from ._base import StructuralClassifier
from .manifold import _GraphKernelMixin, auto_weight


class DALapRLSC(_GraphKernelMixin, StructuralClassifier):
    """Discrimination-aware Laplacian RLSC: LapRLSC whose graph carries signs from a clustering.

    ``min (1/l) sum_labeled ||f(x_i) - y_i||^2 + gamma_A ||f||_K^2 + gamma_D / n^2 f^T L_D f``
    with ``f^T L_D f = 1/2 sum_ij W_ij (f_i - S_ij f_j)^2`` (the paper's eqs. 12-14): similar
    points of the same cluster (or labeled class) are pulled together, similar points of
    different clusters (or labeled classes) are pushed to opposite outputs.  Closed form
    (eq. 17) ``(J K + l gamma_A I + l gamma_D / n^2 L_D K) alpha = J Y``, solved by the shared
    square-loss solver (Cholesky: ``L_D`` is PSD, so the problem is convex).

    Construction (:class:`~structreg.structure.signed.SignedLaplacianPenalty`, on the edges of
    the kNN graph only): the clusterer labels all training points; ``S0`` is the labeled
    pairs' agreement (+1 same class, -1 different) and the clusters' agreement elsewhere
    (eq. 9); every point has reliability ``w_i`` (1 if labeled, ``reliability`` if not) and
    ``T = w w^T``; a pair stays signed (``S_ij = -1``) only if ``S0_ij = -1`` and
    ``T_ij > 1/2`` (eq. 10), and signed pairs get weight ``T_ij W0_ij`` (eq. 11) on the
    heat-kernel kNN graph ``W0``.  ``L_D = D - W o S`` with ``D_ii = sum_j W_ij``, the degree of
    ``W`` (= of ``|W o S|``), which is what makes eq. (13) hold and ``L_D`` PSD.  For more than
    two classes the outputs are one-of-c +-1 columns and the penalty acts on each column.

    With ``reliability <= 1/2`` no unlabeled pair is signed, and when moreover no kNN edge
    joins two labeled points of different classes the model *is* :class:`LapRLSC` with
    ``gamma_I = gamma_D`` (the paper's "gamma -> 0 degenerates to MR").  Pairs of labeled
    points of different classes are signed whatever the reliability (``T = 1`` there).
    Eq. (11) as printed would also down-weight the pairs eq. (10) turns back into smoothness
    pairs, which at ``reliability=0`` deletes every cross-cluster edge touching an unlabeled
    point; we keep their manifold weight (see ``SignedLaplacianPenalty(demoted_weight=...)``
    for the printed variant).

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
        The paper's experiments use ``"linear"``.
    gamma : float, "graph", "scale" or None, default="graph"
        Kernel width as in scikit-learn (not the paper's gamma: see ``reliability``), or
        ``"graph"``: read from the kNN graph's length scale (see :class:`LapRLSC`).
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        RKHS-norm weight (the paper's gamma_A).
    gamma_D : float or "auto", default="auto"
        Weight of the signed-graph term ``gamma_D / n^2 f^T L_D f`` (the paper's gamma_D);
        plays the role of LapRLSC's ``gamma_I``.  ``"auto"``: ``10 f^T L_D f / trace(L_D)``,
        the term normalised by the signed graph's volume, as LapRLSC's ``gamma_I="auto"``.
    reliability : float in [0, 1] or "auto", default="auto"
        Weight ``w_i`` of an unlabeled point, i.e. how much the clustering is trusted (the
        paper's gamma, one value for every unlabeled point; renamed because ``gamma`` is the
        kernel width library-wide).  ``"auto"``: per point, the share of its kNN edge weight
        that stays inside its own cluster (:func:`~structreg.structure.signed.cluster_agreement`),
        so a cluster boundary that cuts through a dense part of the graph signs no pairs
        (``w_i w_j <= 1/2`` there) while one through a gap keeps them.  The paper's
        experiments use 1.0 (trust every cluster label).
    n_neighbors : int, default=6
        k of the kNN graph (the paper uses 10).
    weights : {"connectivity", "heat", "dot"}, default="heat"
        Edge weights of the graph (the paper: heat kernel).
    t : float or None, default=None
        Heat-kernel width; None uses the mean squared kNN distance.
    clusterer : estimator with ``fit_predict`` or None, default=None
        Any scikit-learn clusterer, cloned and fitted on all training inputs (labeled and
        unlabeled); negative ids (noise) carry no cluster information.  None:
        ``FuzzyCMeans(n_clusters=<number of classes>, random_state=random_state)`` with
        hard (maximum-membership) labels, as in the paper.
    random_state : int, RandomState instance or None, default=None
        Seed of the default fuzzy c-means (a given clusterer keeps its own) and of the
        Nystroem centre selection.
    fit_intercept : bool, default=False
        Add an unpenalised bias (the paper has none).
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: the exact kernel factor ``K = V V^T`` and a direct solve (O(n^2) memory).
        ``"nystroem"``: ``n_components`` centres, an m x m system, O(n m^2 + nnz(M) m) time and
        O(n m) memory.  ``"cg"``: iterative and exact (K-preconditioned conjugate gradients on
        the kernel expansion; CG on the features for the linear kernel).  ``"auto"``: dense up
        to 5000 training samples, Nystroem beyond (``solver_`` says which was used).
    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
    tol : float, default=1e-6
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes
        ``sum_labeled c_i ||f(x_i) - y_i||^2`` with ``c_i = w_{y_i} / l``, the same weight in
        every output column.  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l labeled
        samples (unlabeled ones never count); a dict ``{label: weight}`` weighs the classes it
        omits 1 and refuses labels that are not classes.  See
        :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    solver_ : str
        The solver used (what ``solver="auto"`` picked).
    cluster_labels_ : ndarray of shape (n_samples,)
        Cluster id of every training point.
    clusterer_ : estimator
        The fitted clone of the clusterer.
    classes_, feature_map_, coef_, dual_coef_, intercept_, solver_info_,
    transduction_, calibrator_
        See :class:`StructuralClassifier`; :meth:`penalty_matrix` gives ``gamma_D / n^2 L_D``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from structreg.models.damr import DALapRLSC
    >>> X, y = make_blobs(120, centers=[[-2, 0], [2, 0]], random_state=0)
    >>> y_semi = np.full_like(y, -1)
    >>> y_semi[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    >>> clf = DALapRLSC(kernel="linear", gamma_A=1e-2, random_state=0).fit(X, y_semi)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    _path_params = ("gamma_A", "gamma_D")
    _sparse_structure = False  # fuzzy c-means clusters dense rows
    _constraint_overrides = {
        **_GraphKernelMixin._constraint_overrides,
        "gamma_D": NONNEGATIVE_OR_AUTO,
    }

    def __init__(
        self,
        kernel="rbf",
        gamma="graph",
        degree=3,
        coef0=1.0,
        gamma_A=1e-2,
        gamma_D="auto",
        reliability="auto",
        n_neighbors=6,
        weights="heat",
        t=None,
        clusterer=None,
        random_state=None,
        fit_intercept=False,
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        class_weight=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.gamma_D = gamma_D
        self.reliability = reliability
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.t = t
        self.clusterer = clusterer
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight

    def _loss(self) -> str:
        return "square"

    def _prepare(self, X, Z, y_codes, labeled):
        from ..clustering import FuzzyCMeans

        if isinstance(self.clusterer, type):
            raise ValueError(
                f"clusterer must be an estimator instance with fit_predict, got the class "
                f"{self.clusterer.__name__}; pass {self.clusterer.__name__}(...) instead"
            )
        if self.clusterer is None:
            clusterer = FuzzyCMeans(n_clusters=len(self.classes_), random_state=self.random_state)
        else:
            clusterer = clone(self.clusterer)
        ids = np.asarray(clusterer.fit_predict(X))
        if ids.shape != (X.shape[0],) or not (
            ids.dtype.kind in "iu" or (ids.dtype.kind == "f" and np.all(ids == np.round(ids)))
        ):
            raise ValueError(
                f"clusterer.fit_predict must return one integer cluster id per sample, shape "
                f"({X.shape[0]},); got dtype {ids.dtype} and shape {ids.shape}"
            )
        self.clusterer_ = clusterer
        self.cluster_labels_ = ids.astype(int)

    def _penalty_terms(self, n_samples, n_labeled):
        weight, scale = auto_weight(self.gamma_D, n_samples)
        signed = SignedLaplacianPenalty(
            clusters=self.cluster_labels_,
            reliability=self.reliability,
            n_neighbors=self.n_neighbors,
            weights=self.weights,
            t=self.t,
            scale=scale,
        )
        return [(weight, signed)]
