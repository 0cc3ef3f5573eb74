"""Regularized least-squares classification (the regularization network)."""

from __future__ import annotations

from ._base import SQUARE_CLASS_WEIGHT, StructuralClassifier, class_weight_doc
from ._docs import SQUARE_SOLVER_DOC


class RLSC(StructuralClassifier):
    __doc__ = (
        """Kernel regularized least-squares classifier (regularization network, RN).

    ``min (1/l) sum_i ||f(x_i) - y_i||^2 + gamma_A ||f||_K^2`` over one-of-c targets coded +-1
    (one +-1 output for two classes); prediction by the largest output.  Closed form
    ``(K + l gamma_A I) alpha = Y``.  Fully supervised: every sample of ``y`` is a label
    (-1 included).

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        RKHS-norm weight.
    fit_intercept : bool, default=False
        Add an unpenalised bias.
"""
        + SQUARE_SOLVER_DOC
        + class_weight_doc(SQUARE_CLASS_WEIGHT)
        + """
    Attributes
    ----------
    solver_ : str
        The solver used (what ``solver="auto"`` picked).
    classes_, n_features_in_, feature_map_, coef_, dual_coef_, intercept_, solver_info_,
    calibrator_
        See :class:`StructuralClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import RLSC
    >>> X, y = load_iris(return_X_y=True)
    >>> RLSC(gamma=0.5, gamma_A=1e-3).fit(X, y).score(X, y) > 0.95
    True
    """
    )

    _semi_supervised = False

    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        gamma_A=1e-2,
        fit_intercept=False,
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        random_state=None,
        class_weight=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight

    def _loss(self) -> str:
        return "square"

    def _penalty_terms(self, n_samples, n_labeled):
        return []
