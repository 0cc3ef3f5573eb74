"""Least-squares support vector machine (Suykens & Vandewalle 1999)."""

from __future__ import annotations

from ..kernels import KernelExpansion
from ._base import StructuralClassifier
from ._losses import BorderedDual


class LSSVM(StructuralClassifier):
    """Least-squares SVM classifier: the bordered linear system with a bias.

    ``min 1/2 ||w||^2 + C/2 sum_i v_i e_i^2`` s.t. ``y_i = w^T phi(x_i) + b + e_i``
    (``v_i = w_{y_i}`` the class weights, all 1 by default), i.e.

        [ 0   1^T                ] [ b     ]   [ 0 ]
        [ 1   K + diag(1/(C v))  ] [ alpha ] = [ Y ]

    solved with :func:`structreg.solvers.solve_bordered` (Cholesky of ``K + diag(1/(C v))`` and the
    Schur complement of the border).  A preset of :class:`StructuralClassifier`: the bordered
    square loss (``BorderedSquareLoss``) on the exact kernel
    with no structure penalty.  This is the regression form of LS-SVM classification;
    for two classes it gives the same classifier as the ``y_i y_j K_ij`` form of the 1999 paper
    (the targets are +-1, so ``y_i^2 = 1``).  It equals :class:`RLSC` with
    ``fit_intercept=True`` and ``gamma_A = 1 / (n C)`` (and the same ``class_weight``).

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    C : float, default=1.0
        Weight of the squared errors (the LS-SVM paper's gamma).
    multi_class : {"ovr", "ovo"}, default="ovr"
        ``"ovr"``: one-of-c targets coded +-1, all outputs from one factorisation (the same as
        c one-vs-rest LS-SVMs, and, up to the bias, as 0/1 one-of-c coding).  ``"ovo"``: one
        LS-SVM per pair of classes with voting (:class:`sklearn.multiclass.OneVsOneClassifier`).
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes ``C/2
        sum_i v_i e_i^2`` with ``v_i = w_{y_i}`` (the weighted LS-SVM), the same weight in every
        output column and every pair.  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l
        labeled samples (unlabeled ones never count); a dict ``{label: weight}`` weighs the
        classes it omits 1 and refuses labels that are not classes.  See
        :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_samples, n_outputs)
        ``alpha``; ``f(x) = k(x, X_fit_) @ dual_coef_ + intercept_``.
    intercept_ : ndarray of shape (n_outputs,)
    X_fit_ : ndarray of shape (n_samples, n_features)
    ovo_ : OneVsOneClassifier
        ``multi_class="ovo"`` with more than two classes: the pairwise LS-SVMs.
    loss_, solver_info_, calibrator_
        See :class:`StructuralClassifier` (no ``calibrator_`` with ``multi_class="ovo"``:
        the pairwise models' votes have no leave-one-out outputs).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import LSSVM
    >>> X, y = load_iris(return_X_y=True)
    >>> LSSVM(gamma=0.5, C=10.0).fit(X, y).score(X, y) > 0.95
    True
    """

    _semi_supervised = False

    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        C=1.0,
        multi_class="ovr",
        class_weight=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.multi_class = multi_class
        self.class_weight = class_weight

    # LS-SVM is a preset: the bordered square loss on the exact kernel, no penalty
    _path_params: tuple[str, ...] = ("C",)
    """``C`` only scales the loss: a grid over it solves one bordered system for every value
    (one eigendecomposition of ``K``, :class:`~structreg.solvers.BorderedPath`)."""

    def _ridge(self) -> float:
        return 0.0  # no RKHS-norm weight of its own: C scales the loss instead

    def _loss(self) -> str:
        return "bordered_square"

    def _penalty_terms(self, n_samples, n_labeled):
        return []

    def _make_feature_map(self, X, memo=None):
        return KernelExpansion(
            kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
        )

    def _structure_points(self, X, Z):
        return X  # no structure step: not even a precomputed Gram matrix is factored

    def _prepare(self, X, Z, y_codes, labeled):
        self.X_fit_, self.gamma_ = X, self.feature_map_.gamma_

    def _loss_weights(self, labeled):
        return labeled.astype(float)  # the paper's C/2 sum_i e_i^2: C weighs the sum

    def _bordered_system(self, X, Z, weights, M):
        """``Omega = K`` on the training samples, ``r_i = 1 / (C v_i)`` for the class weights
        ``v_i = class_weight_[y_i]`` (the loss ``C/2 sum_i v_i e_i^2``)."""
        return BorderedDual(self.feature_map_.kernel_(X), self._bordered_reg(weights))

    def _bordered_reg(self, weights):
        return 1.0 / (self.C * weights)
