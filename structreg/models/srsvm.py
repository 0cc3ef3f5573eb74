"""Structural regularized support vector machine (Xue, Chen & Yang, IEEE TNN 2011)."""

from __future__ import annotations

import numpy as np

from ..structure import ClusterScatterPenalty
from ._base import LinearFeatures, StructuralClassifier
from ._losses import TrainingGram


class SRSVM(StructuralClassifier):
    """SVM whose margin is regularised by the compactness of the clusters inside each class.

    ``min 1/2 ||w||^2 + lam/2 w^T Sigma w + C sum_i xi_i`` subject to the soft-margin
    constraints, with ``Sigma`` the sum of the covariance matrices (``1/|C|`` normalisation) of all
    clusters of all classes, found per class by Ward's linkage with the number of clusters at
    the knee of the merge-distance curve (L-method).  The dual is an SVM with the kernel
    ``phi(x)^T (I + lam Sigma)^{-1} phi(z)`` (the paper's eq. 14 / 22).

    Implementation: a preset of :class:`StructuralClassifier`.  ``w^T Sigma w = f^T Psi f``
    on the training outputs with ``Psi = blockdiag_C(I/|C| - 1 1^T/|C|^2)``
    (:class:`~structreg.structure.ClusterScatterPenalty`), so SRSVM is the hinge loss
    (``HingeLoss``) with ``gamma_A = 1 / (2 C l)`` and that
    penalty weighted by ``lam / (2 C l)``, i.e. the deformed kernel of ``lam Psi``; the
    per-class Ward clustering is its structure step (``_prepare``).  Two exact paths, neither
    of which inverts the singular ``Psi`` as the paper's Woodbury formula (21) does:

    * linear kernel with fewer features than samples: explicit features, the inputs
      ``x -> L^{-1} x`` with ``L L^T = I + lam X^T Psi X`` (a d x d Cholesky factor);
      clusters are found on the inputs;
    * otherwise the feature map is the unfactored kernel
      (``TrainingGram``), whose Gram matrix ``K`` is computed
      once and shared: kernel Ward's linkage per class on its feature-space distances, and the
      deformed Gram matrix ``K - lam K S (I + lam S K S)^{-1} S K`` with ``S`` the symmetric
      square root of ``Psi`` (:meth:`ClusterScatterPenalty.root
      <structreg.structure.ClusterScatterPenalty.root>`; :class:`~structreg.solvers.DeformedKernel`,
      the middle factor has eigenvalues >= 1).  No factor of ``K`` is formed.

    Solved by scikit-learn's libsvm on the precomputed deformed Gram matrix.

    Parameters
    ----------
    C : float, default=1.0
        Soft-margin constant.
    lam : float, default=1.0
        Weight of the cluster compactness ``w^T Sigma w``; 0 gives the SVM.
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="linear"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    max_clusters : int or None, default=None
        Largest number of clusters per class the knee search considers (None: the Ward
        module's default).
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest (as the paper) or one-vs-one; the clusters and ``Sigma`` are shared.
    tol : float, default=1e-3
        libsvm stopping tolerance.
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes ``C
        sum_i w_{y_i} xi_i``: libsvm's C of sample i is ``C w_{y_i}``.  ``"balanced"``: ``w_c =
        l / (n_classes l_c)`` over the l labeled samples (unlabeled ones never count); a dict
        ``{label: weight}`` weighs the classes it omits 1 and refuses labels that are not
        classes.  See :class:`~structreg.StructuralClassifier`.

    probability : bool, default=False
        Calibrate :meth:`predict_proba` during ``fit`` on internal stratified 5-fold
        cross-validation (five more fits, each on the other folds), as
        ``SVC(probability=True)``; False: no ``predict_proba``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    cluster_ids_ : ndarray of shape (n_samples,)
        Cluster of every training point (numbered class by class).
    n_clusters_ : ndarray of shape (n_classes,)
        Number of clusters found in each class.
    support_ : ndarray
        Indices of the support vectors in the training set.
    n_support_ : ndarray of shape (n_classes,)
        Number of support vectors of each class.
    solver_info_, svm_, calibrator_
        See :class:`StructuralClassifier` and :class:`LapSVM`.
    deformed_kernel_ : DeformedKernel or None
        Kernel path: the deformed kernel (``deformed_kernel_.gram_`` is the deformed Gram
        matrix of the labeled training points); None in the linear explicit-feature path.
    feature_map_ : LinearFeatures or TrainingGram
        The inputs (linear explicit-feature path) or the unfactored kernel (kernel path;
        ``feature_map_.gram_`` is the Gram matrix of the labeled training points).
    deformation_ : DeformedFeatures
        Linear explicit-feature path only: the deformed features of ``x`` are
        ``deformation_.transform(x)``.  :meth:`deformed_gram` gives the deformed kernel in
        both paths.

    Examples
    --------
    >>> from structreg import SRSVM
    >>> from structreg.datasets import make_xor_gaussians
    >>> X, y = make_xor_gaussians(50, random_state=0)
    >>> clf = SRSVM(kernel="rbf", gamma=0.1, C=10.0, lam=1.0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _semi_supervised = False

    def __init__(
        self,
        C=1.0,
        lam=1.0,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        max_clusters=None,
        multi_class="ovr",
        tol=1e-3,
        class_weight=None,
        probability=False,
    ):
        self.C = C
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_clusters = max_clusters
        self.multi_class = multi_class
        self.tol = tol
        self.class_weight = class_weight
        self.probability = probability

    # SRSVM is a preset: the hinge loss, the cluster-scatter penalty of per-class Ward clusters
    _path_params = ("C", "lam")
    """Weights only (:func:`~structreg.models.fit_path`: points with the same ``lam`` share
    the clusters and the deformed kernel; libsvm runs per ``C``)."""

    def _loss(self):
        return "hinge"

    @property
    def gamma_A(self) -> float:
        """The framework's RKHS weight ``1 / (2 C l)`` (set during fit)."""
        return 1.0 / (2.0 * self.C * self._n_labeled)

    def _penalty_terms(self, n_samples, n_labeled):
        weight = self.lam / (2.0 * self.C * n_labeled)
        return [(weight, ClusterScatterPenalty(self.cluster_ids_))]

    def _make_feature_map(self, X, memo=None):
        """The inputs (linear kernel, fewer features than samples), else the unfactored
        kernel whose Gram matrix the clustering and the deformed kernel share; a precomputed
        kernel is factored (Ward's linkage then runs on the factor's rows, whose distances
        are the kernel-induced ones)."""
        if self.kernel == "linear" and X.shape[1] < X.shape[0]:
            return LinearFeatures()
        if self.kernel == "precomputed":
            return super()._make_feature_map(X, memo)
        return TrainingGram(
            kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
        )

    def _prepare(self, X, Z, y_codes, labeled):
        """The structure step: Ward clusters per class, the knee of the merge curve."""
        from ..clustering import class_clusters

        n_lab = int(labeled.sum())
        self._n_labeled = n_lab
        y_lab = y_codes[labeled]
        if Z is None:  # kernel Ward linkage on the feature-space distances
            K = self.feature_map_.labeled_gram(labeled)
            ids_lab, counts = class_clusters(K, y_lab, max_clusters=self.max_clusters, gram=True)
        else:
            X_lab = X if n_lab == X.shape[0] else X[labeled]
            ids_lab, counts = class_clusters(X_lab, y_lab, max_clusters=self.max_clusters)
        self.cluster_ids_ = np.full(X.shape[0], -1, dtype=int)
        self.cluster_ids_[labeled] = ids_lab
        self.n_clusters_ = np.asarray([counts[c] for c in range(len(self.classes_))])
