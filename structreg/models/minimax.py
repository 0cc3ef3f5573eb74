"""Minimax probability machine (Lanckriet, El Ghaoui, Bhattacharyya & Jordan 2002).

Class structural granularity in the framework of Xue, Chen & Yang (2011, Sec. II): each class is
summarised by its mean and covariance (eq. (9)), and the hyperplane maximises the worst-case
probability of correct classification over all distributions with those moments.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.utils.validation import check_is_fitted, validate_data

from .._params import constraints_for
from ._base import (
    LinearFeatures,
    check_supervised_classes,
    explicit_feature_map,
    validated_training_data,
)

__all__ = ["MPM", "MPMSolution", "solve_mpm"]


@dataclass
class MPMSolution:
    """Solution of the binary minimax probability machine (see :func:`solve_mpm`).

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        ``a``, scaled so that ``a^T (mu_pos - mu_neg) = 1``.
    intercept : float
        ``-b``: the decision function is ``a^T x - b``.
    kappa : float
        ``1 / (||Sigma_pos^{1/2} a|| + ||Sigma_neg^{1/2} a||)`` at the optimum.
    alpha : float
        Worst-case accuracy bound ``kappa^2 / (1 + kappa^2)``.
    objective : float
        ``||Sigma_pos^{1/2} a|| + ||Sigma_neg^{1/2} a||``.
    n_iter : int
        Newton iterations.
    converged : bool
    info : dict
        Final Newton decrement and the ridge that was added.
    """

    coef: np.ndarray
    intercept: float
    kappa: float
    alpha: float
    objective: float
    n_iter: int
    converged: bool
    info: dict = field(default_factory=dict)


def _householder(unit: np.ndarray) -> tuple[np.ndarray, float]:
    """Symmetric orthogonal H with ``H @ unit = -s e_1``; returns (H, s), ``s = +-1``."""
    m = unit.shape[0]
    s = 1.0 if unit[0] >= 0 else -1.0
    v = unit.copy()
    v[0] += s
    H = np.eye(m) - (2.0 / (v @ v)) * np.outer(v, v)
    return H, s


def solve_mpm(
    mu_pos: np.ndarray,
    mu_neg: np.ndarray,
    cov_pos: np.ndarray,
    cov_neg: np.ndarray,
    *,
    tol: float = 1e-13,
    max_iter: int = 100,
) -> MPMSolution:
    """Linear minimax probability machine for given class moments.

    Solves ``min_a ||Sigma_+^{1/2} a|| + ||Sigma_-^{1/2} a||`` s.t. ``a^T (mu_+ - mu_-) = 1``
    (Lanckriet et al. 2002, Theorem 2), then ``kappa = 1 / OPT``,
    ``b = a^T mu_+ - kappa ||Sigma_+^{1/2} a||`` and ``alpha = kappa^2 / (1 + kappa^2)``.

    Method: the constraint is eliminated by a Householder basis ``[d, F]`` of ``R^m``
    (``d = mu_+ - mu_-``), ``a = a_0 + F u``, and the resulting smooth, strictly convex function
    of ``u`` (when both covariances are positive definite) is minimised by Newton's method with
    backtracking line search, started from the equal-covariance (Fisher) direction
    ``a ~ (Sigma_+ + Sigma_-)^{-1} d``.  With ``f_i = ||Sigma_i^{1/2} a||`` the Hessian
    ``F^T (sum_i (Sigma_i - Sigma_i a a^T Sigma_i / f_i^2) / f_i) F`` is positive definite,
    so convergence is quadratic and the solution is exact to rounding;
    iterations stop when half the squared Newton decrement (an estimate of the suboptimality)
    is below ``tol`` times the objective.

    Parameters
    ----------
    mu_pos, mu_neg : ndarray of shape (m,)
        Class means; the positive class gets ``a^T x - b >= 0``.
    cov_pos, cov_neg : ndarray of shape (m, m)
        Class covariances; positive definite (add a ridge beforehand).
    tol : float, default=1e-13
    max_iter : int, default=100

    Returns
    -------
    MPMSolution
    """
    mu_pos = np.asarray(mu_pos, dtype=float)
    mu_neg = np.asarray(mu_neg, dtype=float)
    S = [np.asarray(cov_pos, dtype=float), np.asarray(cov_neg, dtype=float)]
    d = mu_pos - mu_neg
    norm_d = float(np.linalg.norm(d))
    if norm_d == 0.0:
        raise ValueError("the class means coincide: no direction separates them (kappa = 0)")
    m = d.shape[0]
    tiny = np.finfo(float).tiny

    def norms(a):
        return [float(np.sqrt(max(a @ Si @ a, tiny))) for Si in S]

    H, s = _householder(d / norm_d)
    z1 = -s / norm_d  # a = H z with z[0] fixed: a^T d = z[0] (H d)[0] = z[0] (-s ||d||) = 1
    St = [H @ Si @ H for Si in S]

    # start: Fisher direction (exact when the covariances are proportional)
    try:
        a0 = np.linalg.solve(S[0] + S[1], d)
        if not np.all(np.isfinite(a0)) or a0 @ d <= 0:
            raise LinAlgError
        a0 = a0 / (a0 @ d)
    except LinAlgError:
        a0 = d / norm_d**2
    z = H @ a0
    z[0] = z1

    def objective(zz):
        return sum(float(np.sqrt(max(zz @ Si @ zz, tiny))) for Si in St)

    F = objective(z)
    n_iter, converged, decrement = 0, m == 1, 0.0
    while not converged and n_iter < max_iter:
        grad = np.zeros(m)
        hess = np.zeros((m, m))
        for Si in St:
            g = Si @ z
            f = float(np.sqrt(max(z @ g, tiny)))
            grad += g / f
            hess += Si / f - np.outer(g, g) / f**3
        grad, hess = grad[1:], 0.5 * (hess[1:, 1:] + hess[1:, 1:].T)
        try:
            step = -cho_solve(cho_factor(hess), grad)
        except LinAlgError:
            step = -np.linalg.lstsq(hess, grad, rcond=None)[0]
        decrement = float(-(grad @ step))
        n_iter += 1
        if decrement / 2 <= tol * F:
            converged = True
            break
        t = 1.0
        while True:
            z_new = z.copy()
            z_new[1:] += t * step
            F_new = objective(z_new)
            if F_new <= F - 0.25 * t * decrement or t < 1e-12:
                break
            t *= 0.5
        if F_new > F:  # no progress possible at this precision
            converged = decrement / 2 <= 1e-8 * F
            break
        z, F = z_new, F_new
    a = H @ z
    f_pos, f_neg = norms(a)
    objective_value = f_pos + f_neg
    kappa = 1.0 / objective_value
    b = float(a @ mu_pos - kappa * f_pos)
    return MPMSolution(
        coef=a,
        intercept=-b,
        kappa=kappa,
        alpha=kappa**2 / (1.0 + kappa**2),
        objective=objective_value,
        n_iter=n_iter,
        converged=converged,
        info={"newton_decrement": decrement},
    )


class MPM(ClassifierMixin, BaseEstimator):
    """Minimax probability machine: the hyperplane with the best worst-case accuracy.

    For two classes with means ``mu_+, mu_-`` and covariances ``Sigma_+, Sigma_-`` (eq. (9) of
    Xue et al. 2011, normalised by ``1/n_i``), MPM finds the hyperplane ``a^T x = b`` that
    maximises ``alpha`` such that every distribution with these moments is classified correctly
    with probability at least ``alpha`` (Lanckriet et al. 2002)::

        min_a ||Sigma_+^{1/2} a|| + ||Sigma_-^{1/2} a||   s.t.   a^T (mu_+ - mu_-) = 1,

    ``kappa = 1 / OPT``, ``b = a^T mu_+ - kappa ||Sigma_+^{1/2} a||`` and the worst-case accuracy
    bound is ``alpha = kappa^2 / (1 + kappa^2)``.  The problem is solved exactly by Newton's
    method on the constraint-free parametrisation ``a = a_0 + F u`` (see :func:`solve_mpm`); no
    SOCP solver is needed.  The positive class is ``classes_[1]`` (``a^T x - b > 0``).

    The kernel version is the linear MPM on the empirical kernel map ``phi`` with
    ``phi(x_i)^T phi(x_j) = K_ij``, where the class covariances are those of the mapped
    training points.  Both covariances get the ridge ``rho I``,
    ``rho = reg * trace(Sigma_+ + Sigma_-) / (2 m)`` (``reg`` times the mean eigenvalue of the
    average class covariance; ``m`` = feature dimension), which keeps the objective smooth and
    the problem well posed when a covariance is singular (``n_i <= m``, kernels).  If neither
    class has any scatter, ``rho = reg * ||mu_+ - mu_-||^2 / m``.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly"} or callable, default="linear"
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn (``"scale"``: ``1 / (n_features * X.var())``).
    degree : int, default=3
    coef0 : float, default=1.0
    reg : float, default=1e-6
        Relative ridge on the class covariances (see above).  Larger values regularise the
        kernel MPM, which otherwise separates the training classes almost perfectly.
    multi_class : {"ovr", "ovo"}, default="ovr"
        More than two classes: one-vs-rest (:class:`~sklearn.multiclass.OneVsRestClassifier`)
        or one-vs-one (:class:`~sklearn.multiclass.OneVsOneClassifier`) binary MPMs, all on the
        same feature map.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_map_ : EmpiricalKernelMap or LinearFeatures
        Explicit feature map (identity for the linear kernel).
    coef_ : ndarray of shape (n_problems, n_components)
        ``a`` of each binary problem (one row for two classes); ``a^T (mu_+ - mu_-) = 1``.
    intercept_ : ndarray of shape (n_problems,)
        ``-b``; the decision function is ``phi(x) @ coef_.T + intercept_``.
    kappa_ : float or ndarray of shape (n_problems,)
        ``1 / OPT`` (a float for two classes).
    alpha_ : float or ndarray of shape (n_problems,)
        Worst-case accuracy bound ``kappa^2 / (1 + kappa^2)``: for any class-conditional
        distributions with the estimated moments, each class is classified correctly with
        probability at least ``alpha_``.
    dual_coef_ : ndarray of shape (n_basis, n_problems)
        Non-linear kernels only: ``f(x) = k(x, feature_map_.basis_) @ dual_coef_ + intercept_``.
    ridge_ : float or ndarray of shape (n_problems,)
        The ridge ``rho`` added to the covariances.
    multiclass_ : OneVsRestClassifier or OneVsOneClassifier
        More than two classes only: the fitted meta-estimator (of linear MPMs on the features).
    solver_info_ : dict or list of dict
        Newton iterations, convergence flag and final decrement.

    References
    ----------
    G. R. G. Lanckriet, L. El Ghaoui, C. Bhattacharyya and M. I. Jordan, "A robust minimax
    approach to classification", JMLR 3, pp. 555-582, 2002 (and NIPS 14, 2002).

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.models.minimax import MPM
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-1, 1, (200, 2)), rng.normal(1, 1, (200, 2))])
    >>> y = np.repeat([0, 1], 200)
    >>> clf = MPM().fit(X, y)
    >>> bool(np.isclose(clf.coef_[0] @ (X[y == 1].mean(0) - X[y == 0].mean(0)), 1.0))
    True
    >>> 0.5 < clf.alpha_ < clf.score(X, y)
    True
    """

    def __init__(
        self, kernel="linear", gamma="scale", degree=3, coef0=1.0, reg=1e-6, multi_class="ovr"
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.reg = reg
        self.multi_class = multi_class

    def _make_feature_map(self):
        return explicit_feature_map(self, rtol=None)

    def fit(self, X, y) -> MPM:
        """Fit the minimax probability machine.

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
        self.classes_ = check_supervised_classes(self, y)[0]
        self.feature_map_ = self._make_feature_map()
        Z = self.feature_map_.fit_transform(X)
        if len(self.classes_) == 2:
            self._fit_binary(Z, y == self.classes_[1])
        else:
            meta = OneVsRestClassifier if self.multi_class == "ovr" else OneVsOneClassifier
            self.multiclass_ = meta(MPM(kernel="linear", reg=self.reg)).fit(Z, y)
            subs = self.multiclass_.estimators_
            self.coef_ = np.vstack([e.coef_ for e in subs])
            self.intercept_ = np.concatenate([e.intercept_ for e in subs])
            self.kappa_ = np.array([e.kappa_ for e in subs])
            self.alpha_ = np.array([e.alpha_ for e in subs])
            self.ridge_ = np.array([e.ridge_ for e in subs])
            self.solver_info_ = [e.solver_info_ for e in subs]
        if not isinstance(self.feature_map_, LinearFeatures):
            self.dual_coef_ = self.feature_map_.dual_coef(self.coef_.T)
        return self

    def _fit_binary(self, Z: np.ndarray, positive: np.ndarray) -> None:
        Zp, Zn = Z[positive], Z[~positive]
        mu_p, mu_n = Zp.mean(axis=0), Zn.mean(axis=0)
        cov_p = (Zp - mu_p).T @ (Zp - mu_p) / len(Zp)
        cov_n = (Zn - mu_n).T @ (Zn - mu_n) / len(Zn)
        m = Z.shape[1]
        diff = mu_p - mu_n
        scale = float(np.max(np.abs(Z))) if Z.size else 0.0
        if m == 0 or np.linalg.norm(diff) <= 1e-12 * max(scale, np.finfo(float).tiny):
            warnings.warn(
                "MPM: the class means coincide in feature space, so no hyperplane has a "
                "positive worst-case accuracy (kappa = 0); the decision function is constant",
                UserWarning,
                stacklevel=3,
            )
            self.coef_, self.intercept_ = np.zeros((1, m)), np.zeros(1)
            self.kappa_, self.alpha_, self.ridge_ = 0.0, 0.0, 0.0
            self.solver_info_ = {"n_iter": 0, "converged": True, "degenerate": True}
            return
        ridge = self.reg * (np.trace(cov_p) + np.trace(cov_n)) / (2 * m)
        if ridge == 0.0:
            ridge = self.reg * float(diff @ diff) / m
        eye = np.eye(m)
        sol = solve_mpm(mu_p, mu_n, cov_p + ridge * eye, cov_n + ridge * eye)
        if not sol.converged:
            warnings.warn(
                f"MPM: Newton's method stopped after {sol.n_iter} iterations without meeting "
                "its tolerance",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.coef_ = sol.coef[None, :]
        self.intercept_ = np.array([sol.intercept])
        self.kappa_, self.alpha_, self.ridge_ = sol.kappa, sol.alpha, float(ridge)
        self.solver_info_ = {
            "n_iter": sol.n_iter,
            "converged": sol.converged,
            "objective": sol.objective,
            **sol.info,
        }

    def decision_function(self, X) -> np.ndarray:
        """``a^T phi(x) - b``; positive values predict ``classes_[1]``.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            (for ``"ovo"``, the vote-based scores of OneVsOneClassifier).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        Z = self.feature_map_.transform(X)
        if hasattr(self, "multiclass_"):
            return self.multiclass_.decision_function(Z)
        return Z @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Predicted class labels."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


MPM._parameter_constraints = constraints_for(MPM)
