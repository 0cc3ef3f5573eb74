"""Structured large margin machine (SLMM; Yeung, Wang, Ni, Chen & Wang, 2007).

The soft-margin SLMM as written in eq. (1) of Xue, Chen & Yang (IEEE TNN 2011) is

    max_{rho, w, b, xi}  rho - C sum_l xi_l
    s.t.   (w^T x_l + b) >= |P_i| / Max_P * rho * sqrt(w^T Sigma_{P_i} w) - xi_l,  x_l in P_i,
          -(w^T x_l + b) >= |N_j| / Max_N * rho * sqrt(w^T Sigma_{N_j} w) - xi_l,  x_l in N_j,
           w^T r = 1,  xi_l >= 0,

where ``P_1..P_{C_P}`` and ``N_1..N_{C_N}`` are the clusters of the positive and negative
class (Ward's linkage at the knee of the merge curve, :func:`structreg.clustering.class_clusters`),
``Sigma_C`` their covariance matrices with the ``1/|C|`` normalisation of the paper's eq. (10),
``Max_P`` (``Max_N``) the size of the largest cluster of the class and ``r`` "a constant vector
to limit the scale of w".  Every point must lie on its side of the hyperplane by ``rho`` times
the spread of its own cluster along ``w`` (a Mahalanobis-type margin), large clusters
weighing more.

**Solving it.**  The product ``rho * sqrt(w^T Sigma w)`` makes the problem non-convex in
``(rho, w)`` jointly, but for a fixed ``rho >= 0`` the slack minimisation

    S(rho) = min_{w, b, xi, t}  sum_l xi_l
             s.t. y_l (w^T x_l + b) + xi_l >= rho kappa_l t_{C(l)},
                  ||L_C^T w||_2 <= t_C (one cone per cluster),  w^T r = 1,  xi >= 0,

with ``kappa_l = |C(l)| / Max`` and ``L_C L_C^T = Sigma_C + eps I``, is a second-order cone
program (solved by cvxpy with CLARABEL, SCS as fall-back), and eq. (1) is
``max_rho F(rho) = rho - C S(rho)``.  ``S`` is non-decreasing in ``rho``, so ``F`` rises while
the margins cost no slack and falls once ``C`` times the extra slack outweighs the gain in
``rho``.  The maximiser is found by a one-dimensional search: ``F`` on ``0`` and the doubling
grid ``1/8, 1/4, ...`` until it falls (at most up to 1024), then ``n_rho`` golden-section
steps inside the grid interval around the best grid point; the best ``rho`` evaluated wins
(ties: the largest, as the paper maximises ``rho``).  With ``rho`` given, only ``S(rho)`` is
solved.

Choices the papers leave open (stated here, not taken from them):

* ``r`` is the difference of the class means ``mu_+ - mu_-`` (the normalisation of the
  minimax probability machine and M^4, from which SLMM descends), so the decision values are
  in units where the class means are 1 apart along ``w``; ``C`` is relative to that scale.
* ``Sigma_C + eps I`` with ``eps = cov_reg * trace(Sigma_all)`` (``Sigma_all``: covariance
  of all training features, so ``eps`` is a fraction of the total variance) keeps every cone
  term a norm, also for one-point or flat clusters.  In the kernel feature space the ridge is
  part of the model, not only a numerical safeguard: the cluster covariances there have rank
  at most ``|C| - 1`` and leave directions in which every cluster is flat, and without a
  ridge of some size the search drives ``rho`` to its cap along them.  The default ``1e-3``
  is a small share of the total variance in well-conditioned low dimensions and large
  enough in the kernel feature space (measured in :doc:`/user_guide/defaults`,
  "Measurements behind other defaults").
* ``C`` too small makes the problem unbounded (``S(rho)`` grows more slowly than
  ``rho / C``): the search then stops at ``rho = 1024`` with a ``ConvergenceWarning``.  This
  happens for well separated classes with compact clusters, where violating a whole class
  costs little slack in the units fixed by ``r``; increase ``C``.
* The kernel SLMM is the linear SLMM on explicit kernel features ``V`` (``V V^T = K``,
  :class:`structreg.kernels.KernelFeatureMap`): clusters by Ward's linkage on ``V`` (kernel
  Ward), covariances of ``V`` in place of the kernelised cluster covariances.  All of them
  live in the span of the training features, which ``V`` spans exactly.

**Relation to the SVM.**  With every cluster a unit ball (``Sigma = I``, equal weights) the
hard-margin SLMM ``max rho s.t. y_l (w^T x_l + b) >= rho ||w||`` is the hard-margin SVM (the
SRSVM paper's eq. 25): the same separating hyperplane.  ``rho = 0`` is *not* the SVM in this
formulation: it minimises the hinge loss at margin 0 under ``w^T r = 1``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._numerics import far_scale
from .._params import constraints_for
from ..kernels import KernelFeatureMap, internal_map
from ._base import check_supervised_classes, validated_training_data

__all__ = ["SLMM", "FixedRhoSOCP", "SLMMSolution", "cluster_cone_terms", "search_rho"]

RHO_START = 0.125
"""First non-zero ``rho`` of the doubling grid of the search."""
RHO_MAX = 1024.0
"""Largest ``rho`` the search evaluates; reaching it with ``F`` still rising warns."""

SEPARATION_RTOL = float(np.sqrt(np.finfo(float).eps))
"""Class means closer than this fraction of the features' largest magnitude are refused: the
cone solvers cannot resolve margins along so small a normal."""

_ACCEPTED = ("optimal", "optimal_inaccurate")


def _import_cvxpy():
    try:
        import cvxpy
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in the tests
        raise ImportError(
            "SLMM solves second-order cone programs with cvxpy, which is not installed; "
            "it is a dependency of structreg: reinstall structreg or `pip install cvxpy`"
        ) from exc
    return cvxpy


# -- the structural side of one binary problem ---------------------------------------------------
def _cov_factor(D: np.ndarray) -> np.ndarray:
    """A matrix ``A`` with ``A^T A = D^T D / m``, the covariance (eq. 10) of the m centred rows.

    ``D / sqrt(m)`` itself when the cluster has fewer points than dimensions, else the d x d
    symmetric square root of the covariance (fewer rows).
    """
    m, d = D.shape
    if m < d:
        return D / np.sqrt(m)
    vals, vecs = np.linalg.eigh(D.T @ D / m)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))).T


def cluster_cone_terms(
    Z: np.ndarray, y_pm: np.ndarray, cluster_ids: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Cone terms of eq. (1) for the binary problem ``(Z, y_pm)``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Features of the points of the binary problem.
    y_pm : ndarray of shape (n,)
        +1 / -1 side of every point.
    cluster_ids : ndarray of shape (n,)
        Cluster of every point (a cluster must not straddle the two sides).

    Returns
    -------
    groups : ndarray of int, shape (n,)
        Index of each point's cluster in ``factors``.
    factors : list of ndarray
        ``A_g`` with ``A_g^T A_g = Sigma_g``, the covariance of cluster g by eq. (10)
        (``1/|C|`` normalisation), so ``||A_g w||^2 = w^T Sigma_g w``.
    kappa : ndarray of shape (n,)
        ``|C(l)| / Max`` with ``Max`` the size of the largest cluster on the point's side.
    """
    uniq, groups = np.unique(cluster_ids, return_inverse=True)
    groups = groups.ravel()
    sizes = np.bincount(groups, minlength=len(uniq)).astype(float)
    side = np.empty(len(uniq))
    factors = []
    for g in range(len(uniq)):
        members = groups == g
        sides = np.unique(y_pm[members])
        if len(sides) != 1:
            raise ValueError("a cluster contains points of both classes")
        side[g] = sides[0]
        Zg = Z[members]
        factors.append(_cov_factor(Zg - Zg.mean(axis=0)))
    largest = {s: sizes[side == s].max() for s in np.unique(side)}
    kappa = sizes[groups] / np.array([largest[s] for s in side[groups]])
    return groups, factors, kappa


# -- the SOCP for a fixed rho --------------------------------------------------------------------
@dataclass
class SLMMSolution:
    """Solution of the fixed-``rho`` SOCP.

    ``slack`` is recomputed from ``(w, b)`` as ``max(0, rho kappa_l ||A w|| - y_l f_l)``, so it
    is exactly feasible for the returned hyperplane; ``objective = rho - C * slack.sum()``.
    """

    rho: float
    w: np.ndarray
    b: float
    slack: np.ndarray
    objective: float
    status: str
    solver: str


class FixedRhoSOCP:
    """The SOCP ``S(rho)`` of one binary problem, compiled once and re-solved for any ``rho``.

    The spread of group g along ``w`` is ``||L_g^T w|| = sqrt(w^T (Sigma_g + ridge I) w)``
    with ``L_g L_g^T = Sigma_g + ridge I``; it is written with the stacked factor
    ``L_g^T w = [A_g w; sqrt(ridge) w]`` and, to keep the cones small, as
    ``||[A_g w; sqrt(ridge) s]||`` with one shared cone ``||w|| <= s`` (equivalent: a smaller
    ``s`` only loosens the margin constraints, so ``s = ||w||`` can be taken at any optimum;
    the reported slacks are recomputed from ``w`` with the exact spreads).

    Parameters
    ----------
    Z, y_pm : ndarray
        Features (n, d) and +-1 sides (n,).
    groups, factors, kappa
        From :func:`cluster_cone_terms`, or any cone terms (``A_g^T A_g`` the group's spread
        matrix; e.g. identities for the SVM special case).
    normal : ndarray of shape (d,)
        The vector ``r`` of the normalisation ``w^T r = 1``.
    C : float
        Slack weight of the objective ``rho - C sum xi``.
    ridge : float, default=0.0
        ``eps`` added to every spread matrix.

    Calling the object with ``rho`` returns an :class:`SLMMSolution`.
    """

    def __init__(self, Z, y_pm, groups, factors, kappa, normal, C, ridge=0.0):
        cp = _import_cvxpy()
        n, d = Z.shape
        self._cp = cp
        self.Z, self.y, self.groups, self.kappa, self.C = Z, y_pm, groups, kappa, float(C)
        self.factors, self.ridge = factors, float(ridge)
        self.w = cp.Variable(d)
        self.b = cp.Variable()
        xi = cp.Variable(n, nonneg=True)
        t = cp.Variable(len(factors))
        self.rho = cp.Parameter(nonneg=True)
        margin = cp.multiply(y_pm, Z @ self.w + self.b)
        constraints = [
            margin + xi >= self.rho * cp.multiply(kappa, t[groups]),
            normal @ self.w == 1.0,
        ]
        if self.ridge > 0.0:
            s = cp.Variable()
            constraints.append(cp.SOC(s, self.w))
            tail = [np.sqrt(self.ridge) * cp.reshape(s, (1,), order="C")]
        else:
            tail = []
        for g, A in enumerate(factors):
            constraints.append(cp.SOC(t[g], cp.hstack([sparse.csr_matrix(A) @ self.w, *tail])))
        self.problem = cp.Problem(cp.Minimize(cp.sum(xi)), constraints)

    def spreads(self, w: np.ndarray) -> np.ndarray:
        """``sqrt(w^T (A_g^T A_g + ridge I) w)`` of every group."""
        ww = float(w @ w)
        return np.array([np.sqrt(np.sum((A @ w) ** 2) + self.ridge * ww) for A in self.factors])

    def _solve(self, rho: float) -> tuple[str, str]:
        cp = self._cp
        self.rho.value = float(rho)
        attempts = [("CLARABEL", {}), ("SCS", {"eps_abs": 1e-9, "eps_rel": 1e-9})]
        status = "not solved"
        for solver, options in attempts:
            try:
                self.problem.solve(solver=solver, **options)
            except (cp.error.SolverError, ValueError, ArithmeticError):
                status = "solver error"
                continue
            status = self.problem.status
            if status in _ACCEPTED and self.w.value is not None:
                return status, solver
        # the program is always feasible (the slacks are free): a failure is numerical
        raise ValueError(
            f"SLMM: the cone program at rho={rho:g} was not solved ({status}) by CLARABEL or "
            "SCS; the features are probably badly scaled or the classes nearly coincide "
            "(standardise the features, e.g. with StandardScaler)"
        )

    def __call__(self, rho: float) -> SLMMSolution:
        status, solver = self._solve(rho)
        w = np.asarray(self.w.value, dtype=float).ravel()
        b = float(self.b.value)
        need = rho * self.kappa * self.spreads(w)[self.groups]
        slack = np.maximum(0.0, need - self.y * (self.Z @ w + b))
        objective = float(rho) - self.C * float(slack.sum())
        return SLMMSolution(float(rho), w, b, slack, objective, status, solver)


def search_rho(
    solve, *, n_rho: int = 10, rho_start: float = RHO_START, rho_max: float = RHO_MAX
) -> tuple[SLMMSolution, list[SLMMSolution]]:
    """Maximise ``F(rho) = rho - C S(rho)`` over ``rho >= 0`` (see the module docstring).

    Parameters
    ----------
    solve : callable
        ``rho -> SLMMSolution`` (a :class:`FixedRhoSOCP`).
    n_rho : int, default=10
        Evaluations of the golden-section refinement after the doubling grid.
    rho_start, rho_max : float
        First non-zero grid value and the cap of the doubling.

    Returns
    -------
    best : SLMMSolution
    history : list of SLMMSolution
        Every evaluation, in order.
    """
    history: list[SLMMSolution] = []

    def F(rho):
        sol = solve(rho)
        history.append(sol)
        return sol.objective

    def tol(value):
        return 1e-9 * (1.0 + abs(value))

    grid, values = [0.0], [F(0.0)]
    rho = rho_start
    while True:
        grid.append(rho)
        values.append(F(rho))
        if values[-1] < values[-2] - tol(values[-2]) and values[-1] < max(values):
            break
        if rho >= rho_max:
            warnings.warn(
                f"SLMM: rho - C sum(xi) still rises at rho={rho:g}; C may be too small for "
                "the problem to be bounded.  Using the largest rho searched.",
                ConvergenceWarning,
                stacklevel=3,
            )
            break
        rho *= 2.0
    j = int(np.argmax(values))
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
    if hi > lo and n_rho == 1:
        F(0.5 * (lo + hi))
    elif hi > lo and n_rho >= 2:
        ratio = (np.sqrt(5.0) - 1.0) / 2.0
        a, c = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        fa, fc = F(a), F(c)
        for _ in range(n_rho - 2):
            if fa >= fc:
                hi, c, fc = c, a, fa
                a = hi - ratio * (hi - lo)
                fa = F(a)
            else:
                lo, a, fa = a, c, fc
                c = lo + ratio * (hi - lo)
                fc = F(c)
    top = max(s.objective for s in history)
    best = max(
        (s for s in history if s.objective >= top - tol(top)),
        key=lambda s: s.rho,
    )
    return best, history


# -- the estimator -------------------------------------------------------------------------------
class SLMM(ClassifierMixin, BaseEstimator):
    """Structured large margin machine: margins measured in units of the cluster spreads.

    Solves the soft-margin SLMM of eq. (1) of Xue, Chen & Yang (2011) (Yeung et al., 2007):
    ``max rho - C sum xi`` subject to ``y_l (w^T phi(x_l) + b) >= kappa_l rho
    sqrt(w^T Sigma_{C(l)} w) - xi_l``, ``w^T r = 1``, ``xi >= 0``, with the clusters ``C`` of
    each class found by Ward's linkage at the knee of the merge curve, their covariances
    ``Sigma_C`` (``1/|C|`` normalisation, plus a small ridge), ``kappa_l = |C(l)| / Max`` the
    cluster's size relative to the largest cluster of its class, and ``r`` the difference of
    the class means.  For fixed ``rho`` this is a second-order cone program (cvxpy, CLARABEL
    with SCS as fall-back); ``rho`` is maximised by a one-dimensional search (doubling grid
    and golden section).  See :mod:`structreg.models.slmm` for the formulation, the search
    and the choices the papers leave open.

    Uses cvxpy (a dependency of structreg), imported in ``fit`` only.

    Parameters
    ----------
    C : float, default=1.0
        Slack weight in ``rho - C sum xi``.  The slacks are in decision-function units, where
        the two class means are 1 apart.
    kernel : {"linear", "rbf", "poly"} or callable, default="linear"
        ``"linear"``: SLMM on the inputs.  Otherwise on explicit kernel features
        (:class:`~structreg.kernels.KernelFeatureMap`), with kernel Ward clustering.
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    rho : float or None, default=None
        None: search the maximiser of ``rho - C S(rho)``.  A number: solve eq. (1) at that
        ``rho`` only (minimum slack).
    n_rho : int, default=10
        Golden-section steps of the search after its doubling grid.
    max_clusters : int or None, default=None
        Largest number of clusters per class (None: ``min(class size // 2, 20)``, see
        :func:`structreg.clustering.ward_knee`).
    cov_reg : float, default=1e-3
        Ridge added to every cluster covariance, relative to the total variance of the
        training features: ``eps = cov_reg * trace(Sigma_all)`` (see the module docstring).
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest (as the SRSVM paper's experiments) or one-vs-one with voting; the clusters
        are found once per class and shared by all sub-problems.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_problems, n_components)
        ``w`` of every binary problem (1 for two classes, else n_classes for "ovr" and
        n_classes (n_classes - 1) / 2 for "ovo", pairs (i, j) with i < j, positive side j).
        On the inputs for the linear kernel, else on ``feature_map_``'s coordinates.
    intercept_ : ndarray of shape (n_problems,)
    rho_ : ndarray of shape (n_problems,)
        The ``rho`` used by every binary problem.
    objective_ : ndarray of shape (n_problems,)
        ``rho - C sum xi`` at the solution.
    cluster_ids_ : ndarray of shape (n_samples,)
        Cluster of every training point (numbered class by class).
    n_clusters_ : ndarray of shape (n_classes,)
        Number of clusters found in each class.
    cov_reg_ : float
        The absolute ridge ``eps``.
    feature_map_ : KernelFeatureMap or None
        The explicit kernel map (None for the linear kernel).
    solver_info_ : list of dict
        Per binary problem: solver, status, number of cone programs solved.

    Examples
    --------
    >>> from structreg.datasets import make_xor_gaussians
    >>> from structreg.models.slmm import SLMM
    >>> X, y = make_xor_gaussians(15, random_state=0)
    >>> clf = SLMM(kernel="rbf", gamma=0.1).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        C=1.0,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        rho=None,
        n_rho=10,
        max_clusters=None,
        cov_reg=1e-3,
        multi_class="ovr",
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.rho = rho
        self.n_rho = n_rho
        self.max_clusters = max_clusters
        self.cov_reg = cov_reg
        self.multi_class = multi_class

    def fit(self, X, y):
        """Fit the SLMM on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        if self.kernel == "precomputed":
            raise ValueError(
                "SLMM does not take kernel='precomputed' (only the StructuralClassifier family "
                "does); pass the inputs with a named or callable kernel"
            )
        X, y = validated_training_data(self, X, y, y_numeric=False)
        y = column_or_1d(y, warn=True)
        classes, codes = check_supervised_classes(self, y)
        cp = _import_cvxpy()  # fail early, before the clustering
        del cp
        from ..clustering import class_clusters

        self.classes_ = classes
        if self.kernel == "linear":
            self.feature_map_ = None
            Z = X
        else:
            self.feature_map_ = internal_map(
                KernelFeatureMap(
                    kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0
                )
            )
            Z = self.feature_map_.fit_transform(X)
        # the problem is invariant to the scale of Z (w^T r = 1 fixes w's units), the cone
        # solvers' tolerances are not: solved on Z / s for data far from unit scale, w / s
        s = far_scale(Z)
        Z = Z / s if s != 1.0 else Z
        ids, counts = class_clusters(Z, codes, max_clusters=self.max_clusters)
        self.cluster_ids_ = ids
        self.n_clusters_ = np.array([counts[c] for c in range(len(classes))])
        total_variance = float(np.sum(Z.var(axis=0)))
        ridge = self.cov_reg * (total_variance if total_variance > 0 else 1.0)
        self.cov_reg_ = ridge * s * s

        coefs, intercepts, rhos, objectives, infos = [], [], [], [], []
        for rows, y_pm in self._binary_problems(codes):
            sol, n_solved = self._fit_binary(Z[rows], y_pm, ids[rows], ridge)
            coefs.append(sol.w)
            intercepts.append(sol.b)
            rhos.append(sol.rho)
            objectives.append(sol.objective)
            infos.append({"solver": sol.solver, "status": sol.status, "n_solved": n_solved})
        self.coef_ = np.vstack(coefs) / s
        self.intercept_ = np.asarray(intercepts)
        self.rho_ = np.asarray(rhos)
        self.objective_ = np.asarray(objectives)
        self.solver_info_ = infos
        return self

    def _binary_problems(self, codes: np.ndarray):
        """(rows, +-1 sides) of every binary sub-problem."""
        k = len(self.classes_)
        everyone = np.arange(len(codes))
        if k == 2:
            yield everyone, np.where(codes == 1, 1.0, -1.0)
        elif self.multi_class == "ovr":
            for c in range(k):
                yield everyone, np.where(codes == c, 1.0, -1.0)
        else:
            for i, j in combinations(range(k), 2):
                rows = np.flatnonzero((codes == i) | (codes == j))
                yield rows, np.where(codes[rows] == j, 1.0, -1.0)

    def _fit_binary(self, Z, y_pm, cluster_ids, ridge):
        normal = Z[y_pm > 0].mean(axis=0) - Z[y_pm < 0].mean(axis=0)
        scale = max(float(np.abs(Z).max()), np.sqrt(ridge))
        # below sqrt(eps) of the features' scale the cone solvers (tolerances near 1e-8)
        # cannot resolve the margins along the normal: w would be 1 / |mu_+ - mu_-|
        if not np.linalg.norm(normal) > SEPARATION_RTOL * scale:
            raise ValueError(
                "SLMM: the two class means coincide in feature space (to "
                f"{SEPARATION_RTOL:.1e} of the features' scale), so the normalisation "
                "w^T (mu_+ - mu_-) = 1 cannot be met; standardise the features or use a "
                "nonlinear kernel"
            )
        groups, factors, kappa = cluster_cone_terms(Z, y_pm, cluster_ids)
        solve = FixedRhoSOCP(Z, y_pm, groups, factors, kappa, normal, self.C, ridge=ridge)
        if self.rho is not None:
            return solve(float(self.rho)), 1
        best, history = search_rho(solve, n_rho=self.n_rho)
        return best, len(history)

    def _features(self, X):
        return X if self.feature_map_ is None else self.feature_map_.transform(X)

    def decision_function(self, X):
        """Decision values: shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes) (one-vs-rest outputs, or one-vs-one votes plus bounded confidences as
        scikit-learn's SVC)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        F = self._features(X) @ self.coef_.T + self.intercept_
        k = len(self.classes_)
        if k == 2:
            return F[:, 0]
        if self.multi_class == "ovr":
            return F
        votes = np.zeros((F.shape[0], k))
        confidence = np.zeros((F.shape[0], k))
        for p, (i, j) in enumerate(combinations(range(k), 2)):
            votes[:, j] += F[:, p] > 0
            votes[:, i] += F[:, p] <= 0
            confidence[:, j] += F[:, p]
            confidence[:, i] -= F[:, p]
        return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))

    def predict(self, X):
        """Predicted class labels."""
        F = self.decision_function(X)
        idx = (F > 0).astype(int) if F.ndim == 1 else np.argmax(F, axis=1)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


SLMM._parameter_constraints = constraints_for(SLMM)
