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

When the penalty comes as a factor, ``M / ridge = w R R^T``, the deformed Gram matrix of the
training points can be formed without a feature map, by Woodbury's identity with a
well-posed SPD middle factor (:class:`DeformedKernel`):

    K~ = K - w K R (I + w R^T K R)^{-1} R^T K.

It needs the Gram matrix K (not its factor ``V``), one Cholesky factorisation of a matrix
whose eigenvalues are >= 1, a triangular solve and one symmetric product: about half the
dense work of factoring ``K``, forming ``I + V^T M V / ridge``, factoring it and deforming
the features.

The SVM itself is scikit-learn's :class:`~sklearn.svm.SVC` with ``kernel="precomputed"``
and ``C = 1 / (2 ridge l)`` (dividing the objective by ``2 ridge``), binary or multi-class
one-vs-rest / one-vs-one.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import cholesky, lapack, solve_triangular
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from .design import penalty_products


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
    basis : ndarray of bool or int, shape (n,) or (m,), optional
        Rows of ``Z`` to keep deformed (the labeled training points of a hinge fit):
        the deformed kernel against them is ``transform(phi) @ basis_.T``.

    Attributes
    ----------
    L : ndarray of shape (p, p)
        The lower Cholesky factor of ``I + Z^T M Z / ridge``.
    basis_ : ndarray of shape (m, p) or None
        ``transform(Z[basis])``; None without ``basis``.
    """

    def __init__(self, Z: np.ndarray, penalty, ridge: float, basis=None):
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
        self.basis_ = None if basis is None else self.transform(Z[basis])

    def transform(self, Z: np.ndarray) -> np.ndarray:
        if Z.shape[1] == 0:
            return Z
        return solve_triangular(self.L, Z.T, lower=True).T


TRIANGULAR_LEAF = 48
"""Size of the diagonal blocks that :func:`lower_triangular_solve` inverts."""

TRIANGULAR_RECURSION_MAX = 1000
"""Largest order solved by recursion; beyond it, and for one right-hand side column,
:func:`lower_triangular_solve` calls ``?trsm``.  (Structural fits below 1000 samples run with
one BLAS thread; with several threads the many small products of the recursion lose to
``?trsm``.)"""


def lower_triangular_solve(
    L: np.ndarray, B: np.ndarray, overwrite_b: bool = False, leaf: int = TRIANGULAR_LEAF
) -> np.ndarray:
    """``L^{-1} B`` for a well-conditioned lower-triangular ``L`` (e.g. a Cholesky factor of a
    matrix with eigenvalues >= 1).

    Below :data:`TRIANGULAR_RECURSION_MAX` rows: recursive halving, ``B_2 <- L_22^{-1} (B_2 -
    L_21 B_1)``, with the ``leaf x leaf`` diagonal blocks inverted explicitly, so nearly all
    the work is matrix products.  The result equals :func:`scipy.linalg.solve_triangular` up
    to rounding (the error of the explicit leaf inverses is that of a triangular solve, a few
    ``eps`` times the condition number of ``L``); single-threaded small-matrix ``?trsm`` of
    the bundled OpenBLAS is several times slower than its matrix products (measured in the
    scale guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings"), which
    made the plain solve
    the largest cost of SRSVM's deformed kernel.  ``overwrite_b=True`` (``B`` a C-contiguous
    float64 array) may write the result into ``B``.
    """
    n = L.shape[0]
    if n > TRIANGULAR_RECURSION_MAX or B.ndim != 2 or B.shape[1] < 2:
        return solve_triangular(L, B, lower=True, overwrite_b=overwrite_b, check_finite=False)
    inplace = overwrite_b and B.flags.c_contiguous and B.dtype == np.float64
    out = B if inplace else np.empty((n, B.shape[1]))
    _recursive_lower_solve(L, B, out, leaf)
    return out


def _recursive_lower_solve(L, B, out, leaf):
    """``out <- L^{-1} B``; ``out`` may be ``B`` itself."""
    n = L.shape[0]
    if n <= leaf:
        inv, info = lapack.dtrtri(L, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("singular triangular factor")
        np.matmul(inv, B.copy() if out is B else B, out=out)
        return
    half = n // 2
    _recursive_lower_solve(L[:half, :half], B[:half], out[:half], leaf)
    rhs = L[half:, :half] @ out[:half]
    np.subtract(B[half:], rhs, out=rhs)
    _recursive_lower_solve(L[half:, half:], rhs, out[half:], leaf)


class DeformedKernel:
    """The deformed kernel of a factored PSD penalty, on the Gram matrix (Woodbury).

    For ``M / ridge = weight R R^T`` (``R`` of shape (n, q), e.g. the symmetric square root
    of :class:`~structreg.structure.ClusterScatterPenalty`'s ``Psi``; ``weight >= 0``):

        k~(x, z) = k(x, z) - weight k_x^T R (I + weight R^T K R)^{-1} R^T k_z

    which is the deformed kernel ``phi(x)^T (I + V^T M V / ridge)^{-1} phi(z)`` of
    :class:`DeformedFeatures` for any ``K = V V^T`` (push-through and Woodbury identities).
    The middle factor ``A = I + weight R^T K R`` has eigenvalues >= 1, so its Cholesky
    factorisation ``A = L L^T`` never fails and the result does not depend on the rank of K.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD Gram matrix of the training points.
    root : LinearOperator, ndarray of shape (n, q) or None
        The factor ``R``; None (or ``weight == 0``): no penalty, ``k~ = k``.
    weight : float, default=1.0

    Attributes
    ----------
    gram_ : ndarray of shape (n, n)
        ``K~`` on the training points (exactly symmetric).
    """

    def __init__(self, K: np.ndarray, root=None, weight: float = 1.0):
        if not weight >= 0:
            raise ValueError(f"the penalty weight must be non-negative, got {weight!r}")
        self.root = root if weight > 0 else None
        if self.root is None:
            self.gram_ = K
            return
        # n x n arrays are allocated sparingly: fresh large arrays cost page faults
        self._sqrt_weight = float(np.sqrt(weight))
        W = np.asarray(root.T @ K, dtype=float)  # R^T K, (q, n)
        A = np.asarray(root.T @ W.T, dtype=float)  # R^T K R
        A *= weight
        A[np.diag_indices_from(A)] += 1.0
        largest = float(np.abs(A).max()) if A.size else 0.0  # for the error below
        # A is symmetric up to rounding: factor it, or its transpose, in Fortran order in place
        L, info = lapack.dpotrf(A if A.flags.f_contiguous else A.T, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            raise ValueError(
                "the deformed kernel needs a positive semi-definite Gram matrix and penalty: "
                "I + weight R^T K R is not positive definite"
                + (
                    f" (its entries reach {largest:.3g}: rounding errors of a kernel of values "
                    "this large break its positive semi-definiteness; lower the kernel's gamma "
                    "or degree, or rescale X)"
                    if largest > 1.0 / np.finfo(float).eps
                    else ""
                )
            )
        self._L = L
        B = lower_triangular_solve(L, W, overwrite_b=True)
        B *= self._sqrt_weight  # K~ = K - B^T B
        self._B = B
        gram = B.T @ B  # numpy's ?syrk, mirrored: exactly symmetric
        self.gram_ = np.subtract(K, gram, out=gram)

    def cross(self, Kx: np.ndarray) -> np.ndarray:
        """``k~(x, X_train)`` from ``Kx = k(x, X_train)`` (shape (m, n))."""
        if self.root is None:
            return Kx
        C = np.asarray(self.root.T @ Kx.T, dtype=float)
        C = lower_triangular_solve(self._L, C, overwrite_b=True)
        C *= self._sqrt_weight
        return Kx - C.T @ self._B


class _CodedSVC(SVC):
    """:class:`~sklearn.svm.SVC` for targets that the caller has already validated (class
    codes): ``fit`` skips re-checking their type (``type_of_target`` and friends cost more
    than libsvm itself on a few hundred points).  Same classes, codes and results as SVC."""

    def _validate_targets(self, y):
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        self.classes_ = classes
        self.class_weight_ = np.ones(len(classes))  # class_weight=None
        return np.asarray(codes.ravel(), dtype=np.float64, order="C")


LIBSVM_MAX_GRAM = float(np.finfo(np.float32).max)
"""Largest Gram-matrix value handed to libsvm, whose kernel cache stores single-precision
floats (``Qfloat``): larger ones overflow there to inf and the dual coefficients with them."""

LIBSVM_MAX_ITER = 10_000_000
"""Fewest SMO iterations libsvm is given before :class:`PrecomputedSVM` gives up (``100 n``
when that is more: the cap of libsvm's own command-line tools).  An ordinary problem
converges in a small fraction of this.  One that does not is one whose Gram matrix libsvm
cannot hold: values so far apart that its single-precision copy is indefinite (e.g. one
direction of the features 1e15 times longer than another), where SMO can run for hours."""


class PrecomputedSVM:
    """libsvm on a precomputed Gram matrix: binary, one-vs-rest or one-vs-one.

    ``y`` holds class codes ``0..n_classes-1``.  ``decision_function`` returns shape
    (n,) for two classes, else (n, n_classes) (for "ovo", libsvm's vote-based ovr shape).
    The Gram matrix must be finite (checked here once); scikit-learn's parameter and
    finiteness validation of the internal SVC fits is skipped.  ``max_iter`` caps libsvm's
    iterations (None: libsvm's own ``1e7`` or ``100 n``, whichever is larger); a fit that
    reaches it raises ``ValueError`` rather than return dual coefficients that do not solve
    the problem.
    """

    def __init__(
        self, C: float, multi_class: str = "ovr", tol: float = 1e-3, max_iter: int | None = None
    ):
        self.C, self.multi_class, self.tol, self.max_iter = C, multi_class, tol, max_iter

    def _svc(self, max_iter: int, **kw) -> SVC:
        return _CodedSVC(kernel="precomputed", C=self.C, tol=self.tol, max_iter=max_iter, **kw)

    def _fit_one(self, svc: SVC, G: np.ndarray, y: np.ndarray, sample_weight) -> SVC:
        """``svc.fit``, refusing a fit that stopped at the iteration cap: its dual
        coefficients do not solve the problem, so its decisions are not the SVM's."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # raised below instead
            svc.fit(G, y, sample_weight=sample_weight)
        if svc.fit_status_ == 1:
            diagonal = np.abs(np.diag(G))
            raise ValueError(
                f"libsvm did not converge in {svc.max_iter} iterations on a Gram matrix with "
                f"diagonal values from {diagonal.min():.3g} to {diagonal.max():.3g}, which its "
                "single-precision kernel cache holds too coarsely for the solver (an ordinary "
                "Gram matrix has values near 1); standardize X (e.g. StandardScaler), or lower "
                "C or the kernel's gamma"
            )
        return svc

    def fit(
        self, G: np.ndarray, y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None
    ) -> PrecomputedSVM:
        """Fit on the Gram matrix ``G`` of the samples with codes ``y``; ``sample_weight``
        multiplies each sample's C (libsvm's per-sample weights; e.g. its class weight, which
        a sample keeps in every binary problem, one-vs-rest included)."""
        if not np.isfinite(G.sum()) and not np.isfinite(G).all():  # one pass when finite
            raise ValueError("the Gram matrix contains NaN or infinity")
        largest = float(np.abs(G).max()) if G.size else 0.0
        if largest > LIBSVM_MAX_GRAM:
            raise ValueError(
                f"the Gram matrix handed to libsvm has values up to {largest:.3g}, beyond the "
                f"{LIBSVM_MAX_GRAM:.3g} its single-precision kernel cache holds (its dual "
                "coefficients would not be finite); lower the kernel's gamma or degree, or "
                "rescale X"
            )
        if not (self.C > 0 and np.isfinite(self.C)):
            raise ValueError(f"C must be positive and finite, got {self.C!r}")
        self.n_classes = n_classes
        max_iter = self.max_iter or max(LIBSVM_MAX_ITER, 100 * len(G))
        with config_context(assume_finite=True, skip_parameter_validation=True):
            if n_classes == 2 or self.multi_class == "ovo":
                svc = self._svc(max_iter, decision_function_shape="ovr")
                self.svms_ = [self._fit_one(svc, G, y, sample_weight)]
            else:
                self.svms_ = [
                    self._fit_one(self._svc(max_iter), G, (y == k).astype(int), sample_weight)
                    for k in range(n_classes)
                ]
        return self

    def decision_function(self, G: np.ndarray) -> np.ndarray:
        if len(self.svms_) == 1:
            return self.svms_[0].decision_function(G)
        return np.column_stack([s.decision_function(G) for s in self.svms_])

    @property
    def support_(self) -> np.ndarray:
        return np.unique(np.concatenate([s.support_ for s in self.svms_]))
