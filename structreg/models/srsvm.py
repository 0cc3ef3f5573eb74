"""Structural regularized support vector machine (Xue, Chen & Yang, IEEE TNN 2011)."""

from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ..kernels import KernelFeatureMap, kernel_matrix, resolve_gamma
from ..solvers import DeformedFeatures, PrecomputedSVM
from ..solvers.hinge import DeformedKernel
from ..structure import ClusterScatterPenalty, build_penalties
from ._base import LinearFeatures, StructuralClassifier

_BLOCK_ENTRIES = 1 << 22
"""Kernel entries per row block of ``decision_function`` (32 MiB of float64)."""


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
    ``lam / (2 C l)``, i.e. the deformed kernel of ``lam Psi``.  Two exact paths, neither of
    which inverts the singular ``Psi`` as the paper's Woodbury formula (21) does:

    * linear kernel with fewer features than samples: explicit features, the inputs
      ``x -> L^{-1} x`` with ``L L^T = I + lam X^T Psi X`` (a d x d Cholesky factor);
      clusters are found on the inputs;
    * otherwise the training Gram matrix ``K`` is computed once and shared: kernel Ward's
      linkage per class on its feature-space distances, and the deformed Gram matrix
      ``K - lam K S (I + lam S K S)^{-1} S K`` with ``S`` the symmetric square root of
      ``Psi`` (:class:`~structreg.solvers.hinge.DeformedKernel`; the middle factor has
      eigenvalues >= 1).  No factor of ``K`` is formed.

    Solved by scikit-learn's libsvm on the precomputed deformed Gram matrix.

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
    penalty_, solver_info_, svm_
        See :class:`StructuralClassifier` and :class:`LapSVM`.
    deformed_kernel_ : DeformedKernel or None
        Kernel path: the deformed kernel (``deformed_kernel_.gram_`` is the deformed Gram
        matrix of the labeled training points); None in the linear explicit-feature path.
    feature_map_, deformation_
        The explicit feature map ``phi`` and :class:`~structreg.solvers.DeformedFeatures`
        as in :class:`StructuralClassifier`: the deformed features of ``x`` are
        ``deformation_.transform(feature_map_.transform(x))``.  In the kernel path they are
        built on first access (a factor of K; :func:`structreg.bounds.fitted_bound` and the
        paper's experiments read them), not during ``fit``.

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

    def _penalty_terms(self, n_samples, n_labeled):
        weight = self.lam / (2.0 * self.C * n_labeled)
        return [(weight, ClusterScatterPenalty(self.cluster_ids_))]

    def _primal(self, X) -> bool:
        """Explicit-feature path: linear kernel with fewer features than samples."""
        return self.kernel == "linear" and X.shape[1] < X.shape[0]

    def _kernel(self, A, B=None):
        """``k(A, B)`` on inputs validated by fit / decision_function (scikit-learn's checks of
        them are skipped)."""
        with config_context(assume_finite=True, skip_parameter_validation=True):
            return kernel_matrix(
                A, B, kernel=self.kernel, gamma=self._gamma, degree=self.degree, coef0=self.coef0
            )

    def _fit(self, X, y, unlabeled):
        from ..clustering import class_clusters

        y = column_or_1d(y, warn=True)
        classes, y_codes, labeled = self._encode_labels(y, unlabeled)
        self.classes_ = classes
        n, n_lab = X.shape[0], int(labeled.sum())
        self._n_labeled = n_lab
        self._fit_X, self._labeled = X, labeled
        self.__dict__.pop("_hinge_features", None)
        X_lab = X if n_lab == n else X[labeled]
        y_lab = y_codes[labeled]
        primal = self._primal(X)
        if primal:
            K = None
            ids_lab, counts = class_clusters(X_lab, y_lab, max_clusters=self.max_clusters)
        else:
            self._gamma = resolve_gamma(X, self.kernel, self.gamma)
            K = self._kernel(X_lab)
            if callable(self.kernel):  # the callable's array may be shared or read-only
                K = np.array(K, dtype=float, order="C")
            if not np.isfinite(K.sum()) and not np.isfinite(K).all():  # one pass when finite
                raise ValueError("kernel matrix has non-finite entries")
            K += K.T  # symmetric to the last bit, as the SVM's Gram matrix must be
            K *= 0.5
            ids_lab, counts = class_clusters(K, y_lab, max_clusters=self.max_clusters, gram=True)
        self.cluster_ids_ = np.full(n, -1, dtype=int)
        self.cluster_ids_[labeled] = ids_lab
        self.n_clusters_ = np.asarray([counts[c] for c in range(len(self.classes_))])
        M, _ = build_penalties(self._penalty_terms(n, n_lab), X, y_codes, labeled)
        self.penalty_ = M
        C = 1.0 / (2.0 * self.gamma_A * n_lab)
        if primal:
            deformation = DeformedFeatures(X, M, self.gamma_A)
            Z_lab = deformation.transform(X_lab)
            self._hinge_features = (LinearFeatures(), deformation, Z_lab)
            self.deformed_kernel_ = None
            gram = Z_lab @ Z_lab.T
            info = {"n_components": X.shape[1], "deformation": "features"}
        else:
            root = ClusterScatterPenalty(ids_lab).root(n_lab) if M is not None else None
            self.deformed_kernel_ = DeformedKernel(K, root, float(self.lam))
            gram = self.deformed_kernel_.gram_
            info = {"n_components": n_lab, "deformation": "woodbury"}
        self.svm_ = PrecomputedSVM(C=C, multi_class=self._multi_class(), tol=self.tol).fit(
            gram, y_lab, len(self.classes_)
        )
        self.solver_info_ = {"loss": "hinge", "C": C, **info}
        self.support_ = np.flatnonzero(labeled)[self.svm_.support_]
        self.n_support_ = np.bincount(y_codes[self.support_], minlength=len(self.classes_))
        return self

    def decision_function(self, X):
        """Output f(x): shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        parts = [self.svm_.decision_function(G) for G in self._deformed_blocks(X)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def deformed_gram(self, X=None) -> np.ndarray:
        """Gram matrix of SRSVM's dual kernel ``phi(x)^T (I + lam Sigma)^{-1} phi(z)``.

        Against the labeled training points: ``X=None`` gives the (l, l) matrix libsvm was
        trained on, otherwise the (n_X, l) matrix between ``X`` and them.
        """
        check_is_fitted(self)
        if X is None:
            if self.deformed_kernel_ is None:
                Z_lab = self._hinge_features[2]
                return Z_lab @ Z_lab.T
            return self.deformed_kernel_.gram_
        X = validate_data(self, X, dtype=float, reset=False)
        return np.vstack(list(self._deformed_blocks(X)))

    def _deformed_blocks(self, X):
        """Row blocks of the deformed cross Gram matrix of validated ``X`` (bounded memory)."""
        if self.deformed_kernel_ is None:
            _, deformation, Z_lab = self._hinge_features
            yield deformation.transform(X) @ Z_lab.T
            return
        X_lab = self._fit_X if self._n_labeled == len(self._labeled) else self._fit_X[self._labeled]
        step = max(1, _BLOCK_ENTRIES // max(1, X_lab.shape[0]))
        for i in range(0, X.shape[0], step):
            yield self.deformed_kernel_.cross(self._kernel(X[i : i + step], X_lab))

    # -- the explicit deformed features, built on demand in the kernel path ------------------
    def _deformed_features(self) -> tuple:
        """``(feature_map_, deformation_, deformed features of the labeled training points)``."""
        cached = self.__dict__.get("_hinge_features")
        if cached is None:
            X = self._fit_X  # AttributeError before fit
            feature_map = KernelFeatureMap(
                kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
            )
            Z = feature_map.fit_transform(X)
            deformation = DeformedFeatures(Z, self.penalty_, self.gamma_A)
            cached = (feature_map, deformation, deformation.transform(Z[self._labeled]))
            self._hinge_features = cached
        return cached

    @property
    def feature_map_(self):
        """Explicit feature map ``phi`` (see the class docstring)."""
        return self._deformed_features()[0]

    @property
    def deformation_(self):
        """:class:`~structreg.solvers.DeformedFeatures` of the fitted model."""
        return self._deformed_features()[1]

    @property
    def _Z_labeled(self):
        """Deformed features of the labeled training points (their Gram matrix is the SVM's)."""
        return self._deformed_features()[2]
