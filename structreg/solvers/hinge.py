"""Hinge-loss solver: the deformed kernel handed to libsvm.

For a PSD structure penalty ``f^T M f`` the problem

    sum_i c_i max(0, 1 - y_i f(x_i)) + ridge ||f||_K^2 + f^T M f

is an ordinary SVM in the *deformed kernel* (Sindhwani, Niyogi & Belkin 2005)

    k~(x, z) = k(x, z) - k_x^T (ridge I + M K)^{-1} M k_z.

With the kernel feature map ``K = V V^T``, ``k_x = V phi(x)`` and the push-through identity
this is ``k~(x, z) = phi(x)^T G^{-1} phi(z)`` with the SPD matrix ``G = I + V^T M V / ridge``:
the deformed kernel is the linear kernel on the features ``L^{-1} phi(x)`` where
``G = L L^T`` (Cholesky).  No singular matrix is ever inverted, and new points are
deformed exactly the same way.  ``G`` is positive definite only if M is PSD on the span of
the data, so an indefinite penalty is refused with a clear error.

The SVM itself is scikit-learn's :class:`~sklearn.svm.SVC` with ``kernel="precomputed"``
and ``C = 1 / (2 ridge l)`` (dividing the objective by ``2 ridge``), binary or multi-class
one-vs-rest / one-vs-one.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from sklearn.svm import SVC

from .square import penalty_products


class DeformedFeatures:
    """Map features ``phi`` to ``L^{-1} phi`` with ``L L^T = I + Z^T M Z / ridge``.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Training features (explicit, or a kernel feature map).
    penalty : sparse matrix, ndarray, LinearOperator or None
        PSD structure penalty M over the n training points.
    ridge : float
        RKHS-norm weight (gamma_A), > 0.
    """

    def __init__(self, Z: np.ndarray, penalty, ridge: float):
        if not ridge > 0:
            raise ValueError(f"the hinge loss needs a positive gamma_A, got {ridge!r}")
        p = Z.shape[1]
        G = np.eye(p) + Z.T @ penalty_products(penalty, Z) / ridge
        try:
            self.L = cholesky(0.5 * (G + G.T), lower=True)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the hinge loss needs a positive semi-definite structure penalty: "
                "I + V^T M V / gamma_A is not positive definite (the penalty has negative "
                "curvature). Use loss='square' for indefinite penalties."
            ) from None

    def transform(self, Z: np.ndarray) -> np.ndarray:
        if Z.shape[1] == 0:
            return Z
        return solve_triangular(self.L, Z.T, lower=True).T


class PrecomputedSVM:
    """libsvm on a precomputed Gram matrix: binary, one-vs-rest or one-vs-one.

    ``y`` holds class codes ``0..n_classes-1``.  ``decision_function`` returns shape
    (n,) for two classes, else (n, n_classes) (for "ovo", libsvm's vote-based ovr shape).
    """

    def __init__(self, C: float, multi_class: str = "ovr", tol: float = 1e-3, max_iter: int = -1):
        self.C, self.multi_class, self.tol, self.max_iter = C, multi_class, tol, max_iter

    def _svc(self, **kw) -> SVC:
        return SVC(kernel="precomputed", C=self.C, tol=self.tol, max_iter=self.max_iter, **kw)

    def fit(self, G: np.ndarray, y: np.ndarray, n_classes: int) -> PrecomputedSVM:
        self.n_classes = n_classes
        if n_classes == 2 or self.multi_class == "ovo":
            self.svms_ = [self._svc(decision_function_shape="ovr").fit(G, y)]
        else:
            self.svms_ = [self._svc().fit(G, (y == k).astype(int)) for k in range(n_classes)]
        return self

    def decision_function(self, G: np.ndarray) -> np.ndarray:
        if len(self.svms_) == 1:
            return self.svms_[0].decision_function(G)
        return np.column_stack([s.decision_function(G) for s in self.svms_])

    @property
    def support_(self) -> np.ndarray:
        return np.unique(np.concatenate([s.support_ for s in self.svms_]))
