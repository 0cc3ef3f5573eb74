"""Ellipsoidal kernel machine (Shivaswamy & Jebara 2007): an SVM inside the data's MVEE.

Global structural granularity in the framework of Xue, Chen & Yang (2011, Sec. II): the whole
training set is summarised by one ellipsoid, its minimum-volume enclosing ellipsoid (eq. (8)),
and the SVM is trained after the affine map that sends this ellipsoid onto the unit ball.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, validate_data

from .._params import constraints_for
from ..solvers.mvee import minimum_volume_ellipsoid
from ._base import check_supervised_classes, explicit_feature_map, validated_training_data

__all__ = ["EKM"]


def _psd_sqrt(A: np.ndarray) -> np.ndarray:
    """Symmetric square root of a symmetric positive semidefinite matrix."""
    if A.size == 0:
        return A.copy()
    lam, V = eigh(A)
    return (V * np.sqrt(np.clip(lam, 0.0, None))) @ V.T


class EKM(ClassifierMixin, BaseEstimator):
    """Ellipsoidal kernel machine: a linear SVM on data remapped into its bounding ellipsoid.

    Fit computes explicit features ``phi(x)`` (the inputs for ``kernel="linear"``, else the
    empirical kernel map, ``phi(x_i)^T phi(x_j) = K_ij``), the minimum-volume ellipsoid
    ``{z : (z - c)^T A (z - c) <= 1}`` of the training features (eq. (8) of Xue et al. 2011, by
    :func:`~structreg.solvers.mvee.minimum_volume_ellipsoid`), and then a soft-margin linear SVM
    (:class:`sklearn.svm.SVC`, ``kernel="linear"``) on the remapped points

        z~ = A^{1/2} (phi(x) - c),

    which puts every training point in the unit ball.  The margin is thus measured relative to
    the data's ellipsoid rather than its bounding sphere, which is what tightens the VC bound of
    Shivaswamy & Jebara and makes the classifier invariant to affine maps of the input
    (linear kernel).  New points go through the same map.

    When the training features span an affine subspace of lower dimension (fewer samples than
    features, and always for non-linear kernels, whose ``n`` feature vectors span at most
    ``n - 1`` affine dimensions), the ellipsoid is the MVEE within that subspace, ``A`` is
    positive semidefinite, and the remap discards the components of ``phi(x) - c`` orthogonal
    to it.  With ``n`` affinely independent training features (typical for the RBF kernel) the
    MVEE passes through all of them and the remap whitens the kernel principal components.

    Parameters
    ----------
    C : float, default=1.0
        SVM penalty on the hinge losses (scikit-learn's ``C``).
    kernel : {"linear", "rbf", "poly"} or callable, default="linear"
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn (``"scale"``: ``1 / (n_features * X.var())``).
    degree : int, default=3
    coef0 : float, default=1.0
    tol : float, default=1e-7
        Optimality tolerance of the minimum-volume ellipsoid (Khachiyan / Todd-Yildirim
        stopping rule; the ellipsoid always encloses all training points).  The SVM uses
        libsvm's default tolerance.
    multi_class : {"ovr", "ovo"}, default="ovr"
        More than two classes: one-vs-rest (:class:`~sklearn.multiclass.OneVsRestClassifier`
        of binary SVCs) or libsvm's one-vs-one.
    rtol : float or None, default=1e-2
        Non-linear kernels: kernel principal directions with eigenvalue below
        ``rtol * max(diag(K))`` are dropped from the empirical kernel map (None: ``n * eps``,
        the exact map).  The remap whitens every direction it keeps, so near-null kernel
        directions would be blown up to the scale of the leading ones (by up to
        ``(n eps)^{-1/2}``), which amplifies rounding errors and noise; dropping them is what
        makes the kernel EKM numerically stable and accurate.  Ignored for the linear kernel.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_map_ : EmpiricalKernelMap or LinearFeatures
        The explicit feature map ``phi`` (identity for the linear kernel).
    center_ : ndarray of shape (n_components,)
        Centre ``c`` of the minimum-volume ellipsoid in feature space.
    shape_ : ndarray of shape (n_components, n_components)
        Its shape matrix ``A`` (positive semidefinite).
    remap_matrix_ : ndarray of shape (n_components, n_components)
        ``A^{1/2}`` (symmetric square root).
    svc_ : SVC or OneVsRestClassifier
        The linear SVM fitted on the remapped training data.
    mvee_info_ : MVEEInfo
        Diagnostics of the ellipsoid computation (weights, iterations, rank, duality gap).

    References
    ----------
    P. K. Shivaswamy and T. Jebara, "Ellipsoidal machines", AISTATS 2007 (JMLR W&CP 2,
    pp. 484-491).  H. Xue, S. Chen and Q. Yang, "Structural regularized support vector
    machine: a framework for structural large margin classifier", IEEE TNN 22(4), 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from structreg.models.ellipsoid import EKM
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = EKM(C=10.0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    >>> bool((np.linalg.norm(clf.remap(X), axis=1) <= 1 + 1e-9).all())
    True
    """

    def __init__(
        self,
        C=1.0,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        tol=1e-7,
        multi_class="ovr",
        rtol=1e-2,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.multi_class = multi_class
        self.rtol = rtol

    def _make_feature_map(self):
        return explicit_feature_map(self, rtol=self.rtol)

    def fit(self, X, y) -> EKM:
        """Fit the ellipsoid on X and the linear SVM on the remapped X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validated_training_data(self, X, y)
        classes = check_supervised_classes(self, y)[0]
        self.feature_map_ = self._make_feature_map()
        Z = self.feature_map_.fit_transform(X)
        self.center_, self.shape_, self.mvee_info_ = minimum_volume_ellipsoid(
            Z, tol=self.tol, return_info=True
        )
        self.remap_matrix_ = _psd_sqrt(self.shape_)
        Zr = (Z - self.center_) @ self.remap_matrix_
        svc = SVC(kernel="linear", C=self.C)
        if len(classes) > 2 and self.multi_class == "ovr":
            svc = OneVsRestClassifier(svc)
        self.svc_ = svc.fit(Zr, y)
        self.classes_ = self.svc_.classes_
        return self

    def remap(self, X) -> np.ndarray:
        """Remapped points ``A^{1/2} (phi(x) - c)``; the training points lie in the unit ball.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return (self.feature_map_.transform(X) - self.center_) @ self.remap_matrix_

    def decision_function(self, X) -> np.ndarray:
        """SVM decision values of the remapped points.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        Zr = self.remap(X)
        return self.svc_.decision_function(Zr)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels."""
        Zr = self.remap(X)
        return self.svc_.predict(Zr)


EKM._parameter_constraints = constraints_for(EKM)
