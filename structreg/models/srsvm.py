"""Structural regularized support vector machine (Xue, Chen & Yang, IEEE TNN 2011)."""

from __future__ import annotations

import numpy as np

from ..structure import ClusterScatterPenalty
from ._base import StructuralClassifier


class SRSVM(StructuralClassifier):
    """SVM whose margin is regularised by the compactness of the clusters inside each class.

    ``min 1/2 ||w||^2 + lam/2 w^T Sigma w + C sum_i xi_i`` subject to the soft-margin
    constraints, with ``Sigma`` the sum of the covariance matrices (1/|C| normalisation) of all
    clusters of all classes, found per class by Ward's linkage with the number of clusters at
    the knee of the merge-distance curve (L-method).  The dual is an SVM with the kernel
    ``phi(x)^T (I + lam Sigma)^{-1} phi(z)`` (the paper's eq. 14 / 22).

    Implementation: ``w^T Sigma w = f^T Psi f`` on the training outputs with
    ``Psi = blockdiag_C(I/|C| - 1 1^T/|C|^2)``
    (:class:`~structreg.structure.ClusterScatterPenalty`), so SRSVM is the hinge-loss
    :class:`StructuralClassifier` with ``gamma_A = 1 / (2 C l)`` and that penalty weighted by
    ``lam / (2 C l)``; the deformed kernel is computed as ``L^{-1} phi(x)`` with
    ``L L^T = I + lam V^T Psi V`` (Cholesky of an SPD matrix) instead of the paper's Woodbury
    formula (21), which inverts the singular ``Psi``.  Clusters are found on the explicit kernel
    features (``phi``: the inputs for the linear kernel), which is kernel Ward's linkage for a
    nonlinear kernel.  Solved by scikit-learn's libsvm.

    Parameters
    ----------
    C : float, default=1.0
        Soft-margin constant.
    lam : float, default=1.0
        Weight of the cluster compactness ``w^T Sigma w``; 0 gives the SVM.
    kernel : {"linear", "rbf", "poly"} or callable, default="linear"
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
    feature_map_, penalty_, solver_info_, svm_
        See :class:`StructuralClassifier` and :class:`LapSVM`.

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

    def _loss(self):
        return "hinge"

    @property
    def gamma_A(self) -> float:
        """The framework's RKHS weight ``1 / (2 C l)`` (set during fit)."""
        return 1.0 / (2.0 * self.C * self._n_labeled)

    def _prepare(self, X, Z, y_codes, labeled):
        from ..clustering import class_clusters

        self._n_labeled = int(labeled.sum())
        ids, counts = class_clusters(Z, y_codes, labeled, max_clusters=self.max_clusters)
        self.cluster_ids_ = ids
        self.n_clusters_ = np.asarray([counts[c] for c in range(len(self.classes_))])

    def _penalty_terms(self, n_samples, n_labeled):
        weight = self.lam / (2.0 * self.C * n_labeled)
        return [(weight, ClusterScatterPenalty(self.cluster_ids_))]

    def _fit_hinge(self, Z, y_codes, labeled, M, psd):
        super()._fit_hinge(Z, y_codes, labeled, M, psd)
        self.support_ = np.flatnonzero(labeled)[self.svm_.support_]
        self.n_support_ = np.bincount(y_codes[self.support_], minlength=len(self.classes_))
