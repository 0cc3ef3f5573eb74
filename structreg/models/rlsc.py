"""Regularized least-squares classification (the regularization network)."""

from __future__ import annotations

from ._base import StructuralClassifier


class RLSC(StructuralClassifier):
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
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.
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
