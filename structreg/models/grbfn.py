"""Generalized radial basis function network (Haykin) with fuzzy c-means centres."""

from __future__ import annotations

from numbers import Integral

from .._compat import Interval, StrOptions
from ..clustering import FuzzyCMeans
from ..kernels import LandmarkFeatureMap
from ._base import StructuralClassifier, memo_key

SAMPLES_PER_CENTER = 5
"""Training samples per hidden unit of ``GRBFN(n_centers="auto")``: with 3-fold CV on five
standardised problems (iris, wine, breast cancer, digits, a 3-class ``make_classification``)
this matched or beat ``RLSC()`` on each, where 10 units lost tens of points on the 3-class
and digits problems (measured in the scale guide, :doc:`/user_guide/scale`, "Measurements
behind the solvers' settings")."""

MAX_AUTO_CENTERS = 1000
"""Cap of ``n_centers="auto"`` (fuzzy c-means costs O(n c d) per iteration)."""


class GRBFN(StructuralClassifier):
    """Generalized RBF network: Gaussian units on fuzzy c-means centres, regularised output.

    ``f(x) = sum_j w_j k(c_j, x) (+ b)`` with the centres ``c_j`` from fuzzy c-means on the
    training inputs and the output weights from the regularised least squares
    ``min (1/n) ||G w - Y||^2 + gamma_A w^T G_0 w`` (``G_ij = k(x_i, c_j)``,
    ``G_0 = k(C, C)``), i.e. Haykin's ``(G^T G + lambda G_0) w = G^T Y`` with
    ``lambda = n gamma_A``.  Solved as a linear model on the landmark feature map
    (:class:`~structreg.kernels.LandmarkFeatureMap`, ``G_0 = R^T R``), so centres that coincide
    numerically are merged instead of making ``G_0`` singular.  One-of-c targets coded +-1.

    Parameters
    ----------
    n_centers : int or "auto", default="auto"
        Number of hidden units (fuzzy c-means clusters); at most the number of samples.
        ``"auto"``: one unit per ``SAMPLES_PER_CENTER`` training samples, at least
        ``min(10, n)`` and at most ``MAX_AUTO_CENTERS`` (``n_centers_`` says how many).
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
        The Green's function of the units.
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-3
        Weight of ``w^T G_0 w`` (the RKHS norm of f).
    m : float, default=2.0
        Fuzzifier of fuzzy c-means.
    fit_intercept : bool, default=True
        Unpenalised output bias.
    random_state : int, RandomState or None, default=None
        Seed of the fuzzy c-means initialisation.
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes
        ``sum_labeled c_i ||f(x_i) - y_i||^2`` with ``c_i = w_{y_i} / l``, the same weight in
        every output column.  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l labeled
        samples (unlabeled ones never count); a dict ``{label: weight}`` weighs the classes it
        omits 1 and refuses labels that are not classes.  See
        :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    centers_ : ndarray of shape ``(n_centers_, n_features)``
        Fuzzy c-means centres.
    n_centers_ : int
        The number of units used.
    feature_map_ : LandmarkFeatureMap
    coef_, dual_coef_, intercept_, solver_info_, calibrator_
        See :class:`StructuralClassifier`; ``dual_coef_`` are the output weights ``w`` of the
        units kept in ``feature_map_.basis_``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import GRBFN
    >>> X, y = load_iris(return_X_y=True)
    >>> GRBFN(n_centers=9, gamma=0.5, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _semi_supervised = False

    _sparse_structure = False  # fuzzy c-means centres are dense
    _constraint_overrides = {
        "n_centers": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})]
    }

    def __init__(
        self,
        n_centers="auto",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        gamma_A=1e-3,
        m=2.0,
        fit_intercept=True,
        random_state=None,
        class_weight=None,
    ):
        self.n_centers = n_centers
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.m = m
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.class_weight = class_weight

    def _loss(self):
        return "square"

    def _penalty_terms(self, n_samples, n_labeled):
        return []

    def _make_feature_map(self, X, memo=None):
        if self.kernel == "precomputed":
            raise ValueError(
                "GRBFN does not take kernel='precomputed': its centres are fuzzy c-means "
                "centres in input space, not training samples, so a Gram matrix of the samples "
                "does not hold their kernel values"
            )
        n = X.shape[0]
        if isinstance(self.n_centers, str):  # "auto"
            self.n_centers_ = min(n, max(10, min(n // SAMPLES_PER_CENTER, MAX_AUTO_CENTERS)))
        elif self.n_centers > n:
            raise ValueError(f"n_centers={self.n_centers} exceeds the number of samples ({n})")
        else:
            self.n_centers_ = self.n_centers
        fcm = FuzzyCMeans(n_clusters=self.n_centers_, m=self.m, random_state=self.random_state)
        # an unseeded clustering is drawn per fit; a seeded one is the same on one X
        key = memo_key(fcm) if isinstance(self.random_state, Integral) else None
        if memo is None or key is None:
            self.centers_ = fcm.fit(X).cluster_centers_
        else:  # fit_path on one X: the centres do not depend on the kernel width or gamma_A
            if ("centers", key) not in memo:
                memo["centers", key] = fcm.fit(X).cluster_centers_
            self.centers_ = memo["centers", key]
        return LandmarkFeatureMap(
            landmarks=self.centers_,
            kernel=self.kernel,
            gamma=self.gamma,
            degree=self.degree,
            coef0=self.coef0,
        )
