"""Sparse-representation-based classification (SRC; Wright, Yang, Ganesh, Sastry & Ma 2009).

A test sample is coded as a sparse combination of *all* training samples (the dictionary),
by noisy basis pursuit, and assigned to the class whose atoms reconstruct it best.  The S-RLSC
paper (Fan et al. 2011) uses SRC, with the tolerance ``epsilon = 0.05`` of Wright et al., as a
supervised baseline.

The l1 problem is solved exactly (:func:`noisy_basis_pursuit`).  Its minimiser is the lasso
solution whose residual norm is ``epsilon``; on a known support and sign pattern that solution
has a closed form, so a cheap batched first-order solver (ADMM over all targets at once)
proposes the support, a few active-set corrections make it exact, and the optimality (KKT)
conditions certify the result.  Targets that are not certified, and degenerate problems, are
solved by the lasso homotopy (scikit-learn's LARS-lasso on the shared Gram matrix, followed to
the segment where the residual norm falls to ``epsilon``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram
from sklearn.utils import gen_even_slices
from sklearn.utils.validation import check_is_fitted, validate_data

from .._params import constraints_for
from .._resources import blas_threads
from ._base import check_supervised_classes, validated_training_data

__all__ = ["SRC", "noisy_basis_pursuit", "unit_rows"]

FIRST_KNOTS = 64
"""Knots of the lasso path computed at first (doubled until the crossing is reached)."""
ADMM_THRESHOLD = 0.1
"""ADMM's soft threshold, relative to ``||y||`` over the atoms' root-mean-square norm."""
ADMM_ROUND, ADMM_ROUNDS = 100, 4
"""ADMM iterations between two attempts at certifying a target's code, and the attempts."""
ACTIVE_SET_STEPS = 10
"""Active-set corrections of one proposed support before the attempt is given up."""
KKT_RTOL = 1e-9
"""Relative tolerance on ``lambda`` of the optimality certificate."""
BATCH = 512
"""Targets per batch of the batched solver (bounds its memory to a few BATCH x n_atoms arrays)."""


def unit_rows(X: np.ndarray) -> np.ndarray:
    """``X`` with every row scaled to unit l2 norm (all-zero rows stay zero)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)


def _padded_gram(dictionary: np.ndarray) -> np.ndarray:
    """Gram matrix of the atoms plus one all-zero atom.

    scikit-learn's LARS stops as soon as every atom is active, at the knot where the last one
    entered, which for a dictionary with linearly independent atoms is before the end of the
    lasso path.  An extra zero atom never enters (its correlation stays 0) and lets the path run
    on to ``lambda = 0``, i.e. the least-squares solution, so no part of the path is missing.
    """
    n_atoms = dictionary.shape[0]
    gram = np.zeros((n_atoms + 1, n_atoms + 1))
    gram[:n_atoms, :n_atoms] = dictionary @ dictionary.T
    return gram


def _residual(dictionary, target, x):
    nz = np.flatnonzero(x)
    return target - x[nz] @ dictionary[nz]


def _lasso_path(gram, xy, max_iter):
    with warnings.catch_warnings():
        # Degenerate (duplicate or dependent) atoms make LARS skip them with a warning; the
        # path it returns is still a lasso path, which is all that is used here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, path, n_iter = lars_path_gram(
            Xy=xy,
            Gram=gram,
            n_samples=1,
            max_iter=max_iter,
            method="lasso",
            return_n_iter=True,
        )
    return path, n_iter


def _code_one(dictionary, gram, target, epsilon, first_knots):
    """The minimiser of ``||x||_1`` s.t. ``||target - x @ dictionary||_2 <= epsilon``."""
    n_atoms = dictionary.shape[0]
    xy = np.zeros(n_atoms + 1)
    xy[:n_atoms] = dictionary @ target
    # The path's knots get costlier as it goes (and its tail, once the active atoms span the
    # targets' space, is the costliest), so compute it only up to a number of knots that is
    # doubled until the residual has fallen to epsilon or the path is complete.
    max_iter = first_knots
    while True:
        path, n_iter = _lasso_path(gram, xy, max_iter)
        done = n_iter < max_iter  # LARS stopped on its own: lambda = 0 reached
        last = path[:n_atoms, -1]
        if done or np.linalg.norm(_residual(dictionary, target, last)) <= epsilon:
            break
        max_iter *= 2
    path = path[:n_atoms]  # drop the zero atom; columns are the knots, lambda decreasing
    n_knots = path.shape[1]

    def norm_at(k):
        return np.linalg.norm(_residual(dictionary, target, path[:, k]))

    # The residual norm is non-increasing along the lasso path: bisect for the first knot
    # whose residual is within epsilon.
    if norm_at(n_knots - 1) > epsilon:
        return path[:, -1]  # infeasible: the end of the path is the least-squares fit
    lo, hi = -1, n_knots - 1  # norm_at(lo) > epsilon (lo = -1: before the path), norm_at(hi) ok
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if norm_at(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    if hi == 0:
        return path[:, 0]  # ||target|| <= epsilon: x = 0
    # On the segment x(s) = x_lo + s (x_hi - x_lo) the residual is affine in s; solve
    # ||r_lo + s (r_hi - r_lo)||^2 = epsilon^2 for the crossing s in (0, 1].
    x_lo, x_hi = path[:, lo], path[:, hi]
    r_lo = _residual(dictionary, target, x_lo)
    delta = _residual(dictionary, target, x_hi) - r_lo
    a, b, c = delta @ delta, r_lo @ delta, r_lo @ r_lo - epsilon**2
    denom = -b + np.sqrt(max(b * b - a * c, 0.0))  # stable form of the smaller root
    s = min(c / denom, 1.0) if denom > 0 else 1.0
    return x_lo + s * (x_hi - x_lo)


def _lars_codes(dictionary, gram, targets, epsilon):
    """Codes of the rows of ``targets`` by the lasso homotopy, one target after the other."""
    codes = np.zeros((targets.shape[0], dictionary.shape[0]))
    first_knots = max(1, min(FIRST_KNOTS, *dictionary.shape))
    for i, target in enumerate(targets):
        codes[i] = _code_one(dictionary, gram, target, epsilon, first_knots)
    return codes


@dataclass(frozen=True)
class _Atoms:
    """The atoms and their Gram matrix, padded with a zero atom (see :func:`_padded_gram`)."""

    atoms: np.ndarray
    gram: np.ndarray

    @classmethod
    def of(cls, atoms: np.ndarray) -> _Atoms:
        return cls(atoms=atoms, gram=_padded_gram(atoms))


@dataclass(frozen=True)
class _Dictionary(_Atoms):
    """The per-dictionary work of the fast solver, shared by all targets.

    ``atoms = right @ diag(sigma) @ left`` is the thin SVD truncated to the numerical rank, so
    ``left`` is an orthonormal basis of the atoms' span.
    """

    right: np.ndarray
    sigma: np.ndarray
    left: np.ndarray
    full_rank: bool  # well-conditioned, linearly independent atoms (a unique least squares fit)
    scale: float  # root-mean-square norm of the atoms

    @classmethod
    def of(cls, atoms: np.ndarray) -> _Dictionary:
        gram = _padded_gram(atoms)
        right, sigma, left = np.linalg.svd(atoms, full_matrices=False)
        top = sigma[0] if sigma.size else 0.0
        rank = int(np.sum(sigma > top * max(atoms.shape) * np.finfo(float).eps))
        norms = np.sqrt(np.diag(gram)[:-1])
        return cls(
            atoms=atoms,
            gram=gram,
            right=right[:, :rank],
            sigma=sigma[:rank],
            left=left[:rank],
            full_rank=rank == atoms.shape[0] and (rank == 0 or sigma[rank - 1] > 1e-6 * top),
            scale=float(np.sqrt(np.mean(norms**2))) if norms.size else 1.0,
        )

    def least_squares(self, targets: np.ndarray) -> np.ndarray:
        """The least-squares codes of the rows of ``targets`` (full-rank dictionaries)."""
        return ((targets @ self.left.T) / self.sigma) @ self.right.T


def _project(work, v, y_left, y_out2, epsilon, mu):
    """Rows of ``v`` projected onto ``{x : ||y - x @ atoms|| <= epsilon}`` (feasible rows).

    In the SVD basis the projection is ``x = v - right (mu sigma e / (1 + mu sigma^2))`` with
    ``e = sigma (v @ right) - y @ left.T`` and ``mu >= 0`` the root of the (convex, decreasing)
    secular equation ``sum (e / (1 + mu sigma^2))^2 + ||y_out||^2 = epsilon^2``; a few Newton
    steps from the previous ``mu`` are enough for ADMM, which only proposes a support.
    """
    s2 = work.sigma**2
    e = (v @ work.right) * work.sigma - y_left
    outside = (e * e).sum(axis=1) + y_out2 > epsilon**2
    mu = np.where(outside, mu, 0.0)
    for _ in range(4):
        q = 1.0 + mu[:, None] * s2
        eq2 = (e / q) ** 2
        f = eq2.sum(axis=1) + y_out2 - epsilon**2
        slope = -2.0 * (eq2 * s2 / q).sum(axis=1)
        step = np.divide(f, slope, out=np.zeros_like(f), where=outside & (slope < 0))
        mu = np.maximum(mu - step, 0.0)
    shrink = mu[:, None] * work.sigma * e / (1.0 + mu[:, None] * s2)
    return v - shrink @ work.right.T, mu


class _Admm:
    """ADMM for ``min ||z||_1 s.t. ||y - x @ atoms|| <= epsilon, x = z`` over many targets."""

    def __init__(self, work: _Dictionary, targets: np.ndarray, epsilon: float):
        self.work, self.epsilon = work, epsilon
        self.y_left = targets @ work.left.T
        norms2 = np.einsum("ij,ij->i", targets, targets)
        self.y_out2 = np.maximum(norms2 - np.einsum("ij,ij->i", self.y_left, self.y_left), 0)
        self.tau = ADMM_THRESHOLD * np.sqrt(norms2) / work.scale
        shape = (targets.shape[0], work.atoms.shape[0])
        self.z, self.u, self.mu = np.zeros(shape), np.zeros(shape), np.zeros(shape[0])

    def run(self, rows: np.ndarray, n_iter: int) -> np.ndarray:
        """``n_iter`` iterations on the targets ``rows``; their current sparse iterates."""
        z, u, mu = self.z[rows], self.u[rows], self.mu[rows]
        y_left, y_out2, tau = self.y_left[rows], self.y_out2[rows], self.tau[rows, None]
        for _ in range(n_iter):
            x, mu = _project(self.work, z - u, y_left, y_out2, self.epsilon, mu)
            v = x + u
            z = np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)
            u = v - z
        self.z[rows], self.u[rows], self.mu[rows] = z, u, mu
        return z


def _solve_on_support(work, target, corr, epsilon, support, signs):
    """The lasso solution on ``(support, signs)`` whose residual norm is ``epsilon``.

    ``x_A = G_AA^{-1} (c_A - lambda s)`` and ``||r||^2 = ||r_ls||^2 + lambda^2 s' G_AA^{-1} s``
    (the least-squares residual ``r_ls`` on A is orthogonal to the atoms of A), so ``lambda``
    is a square root.  None when the support is empty, dependent, or cannot reach epsilon.
    """
    if support.size == 0 or support.size > work.sigma.size:
        return None
    gram = work.gram[np.ix_(support, support)]
    try:
        factor = sla.cho_factor(gram, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    if np.min(np.diag(factor[0])) ** 2 <= 1e-10 * np.max(np.diag(gram)):
        return None
    x_ls = sla.cho_solve(factor, corr[support], check_finite=False)
    w = sla.cho_solve(factor, signs, check_finite=False)
    r_ls = target - x_ls @ work.atoms[support]
    slack, curvature = epsilon**2 - r_ls @ r_ls, signs @ w
    if slack <= 0 or curvature <= 0:
        return None
    lam = np.sqrt(slack / curvature)
    return x_ls - lam * w, lam


def _kkt_holds(code, corr, lam, support, signs):
    """Optimality of ``code`` for the lasso at ``lam``: ``D' r = lam sign(x)`` on the support,
    ``|D' r| <= lam`` off it (with a relative tolerance ``KKT_RTOL``)."""
    tol = KKT_RTOL * lam
    off = np.ones(corr.size, dtype=bool)
    off[support] = False
    return bool(
        np.all(np.sign(code[support]) == signs)
        and np.all(np.abs(corr[support] - lam * signs) <= tol)
        and (not off.any() or np.max(np.abs(corr[off])) <= lam + tol)
    )


def _certified_code(work, target, corr, epsilon, proposal):
    """The exact code from the support of ``proposal``, after at most ``ACTIVE_SET_STEPS``
    primal-dual active-set corrections, or None if no step passes the KKT certificate."""
    support = np.flatnonzero(proposal)
    signs = np.sign(proposal[support])
    for _ in range(ACTIVE_SET_STEPS):
        solved = _solve_on_support(work, target, corr, epsilon, support, signs)
        if solved is None:
            return None
        code = np.zeros(corr.size)
        code[support], lam = solved
        residual_corr = work.atoms @ (target - code[support] @ work.atoms[support])
        if _kkt_holds(code, residual_corr, lam, support, signs):
            return code
        moved = code + residual_corr  # the active-set step: keep what is beyond lambda
        support = np.flatnonzero(np.abs(moved) > lam)
        signs = np.sign(moved[support])
    return None


def _admm_codes(work, targets, epsilon):
    """Certified codes of feasible targets (``||y_out|| < epsilon < ||y||``); rows not
    certified after ``ADMM_ROUNDS`` rounds are NaN."""
    corr = targets @ work.atoms.T
    codes = np.full((targets.shape[0], work.atoms.shape[0]), np.nan)
    admm = _Admm(work, targets, epsilon)
    pending = np.arange(targets.shape[0])
    for _ in range(ADMM_ROUNDS):
        proposals = admm.run(pending, ADMM_ROUND)
        still = []
        for i, proposal in zip(pending, proposals, strict=True):
            code = _certified_code(work, targets[i], corr[i], epsilon, proposal)
            if code is None:
                still.append(i)
            else:
                codes[i] = code
        pending = np.asarray(still, dtype=int)
        if pending.size == 0:
            break
    return codes


def _fast_codes(work, targets, epsilon):
    """Codes of the rows of ``targets``: zero, least squares, certified (batched ADMM and
    active-set steps) or, where none of those applies, the lasso homotopy."""
    n_targets = targets.shape[0]
    codes = np.zeros((n_targets, work.atoms.shape[0]))
    norms = np.linalg.norm(targets, axis=1)
    y_left = targets @ work.left.T
    inside = np.einsum("ij,ij->i", y_left, y_left)
    out = np.sqrt(np.maximum(norms**2 - inside, 0.0))  # distance to the atoms' span
    near = np.abs(out - epsilon) <= 1e-6 * epsilon  # feasibility unclear in floating point
    zero = norms <= epsilon
    lars = ~zero & (near | (epsilon == 0))
    infeasible = ~zero & ~lars & (out > epsilon)
    if work.full_rank:
        codes[infeasible] = work.least_squares(targets[infeasible])
    else:
        lars |= infeasible
    batched = np.flatnonzero(~(zero | lars | infeasible))
    for start in range(0, batched.size, BATCH):
        rows = batched[start : start + BATCH]
        codes[rows] = _admm_codes(work, targets[rows], epsilon)
    lars |= np.isnan(codes).any(axis=1)
    if lars.any():
        codes[lars] = _lars_codes(work.atoms, work.gram, targets[lars], epsilon)
    return codes


def _lars_chunk(work, targets, epsilon):
    return _lars_codes(work.atoms, work.gram, targets, epsilon)


PARALLEL_COSINE = 1 - 1e-12
"""Atoms whose cosine is at least this in absolute value are taken as (anti)parallel."""


def _distinct_atoms(dictionary: np.ndarray) -> np.ndarray:
    """Indices of the atoms that remain when, of every group of (anti)parallel atoms, only
    the longest (the first of the longest) is kept; atoms of norm zero are dropped.

    Among atoms along one direction, any code can move its weight onto the longest of them
    without changing ``x @ dictionary`` or increasing ``||x||_1`` (a coefficient ``c`` on an
    atom ``t`` times as long as another does the other's ``t c``), so the l1 problems of
    :func:`noisy_basis_pursuit` keep their minimum on the reduced dictionary, where the
    lasso path is well defined (duplicated atoms make LARS stop early, off the path).
    """
    norms = np.linalg.norm(dictionary, axis=1)
    unit = dictionary[norms > 0] / norms[norms > 0, None]
    alive = np.flatnonzero(norms > 0)
    close = np.abs(unit @ unit.T) >= PARALLEL_COSINE
    np.fill_diagonal(close, False)
    if not close.any():
        return alive
    _, group = connected_components(sp.csr_matrix(close), directed=False)
    order = np.lexsort((alive, -norms[alive], group))  # by group, longest first, then index
    first = np.r_[True, group[order][1:] != group[order][:-1]]
    return np.sort(alive[order[first]])


def _sparse_codes(dictionary, targets, epsilon, n_jobs, *, fast):
    """Validate, keep one atom per direction (:func:`_distinct_atoms`), share the
    per-dictionary work, and run the solver over chunks of targets."""
    dictionary = np.asarray(dictionary, dtype=float)
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    if epsilon < 0:
        raise ValueError(f"epsilon must be non-negative, got {epsilon!r}")
    if targets.shape[1] != dictionary.shape[1]:
        raise ValueError(
            f"targets have {targets.shape[1]} features but the dictionary's atoms have "
            f"{dictionary.shape[1]}"
        )
    # The fast solver's products are small: BLAS threads only add overhead (10-40x slower on
    # a busy 2-core machine); n_jobs parallelises over targets instead.
    solver, work_of = (_fast_codes, _Dictionary.of) if fast else (_lars_chunk, _Atoms.of)
    kept = _distinct_atoms(dictionary)
    n_targets = targets.shape[0]
    with blas_threads(1 if fast else None):
        work = work_of(dictionary[kept])
        workers = min(effective_n_jobs(n_jobs), max(n_targets, 1))
        if workers == 1:
            codes = solver(work, targets, epsilon)
        else:
            chunks = Parallel(n_jobs=workers)(
                delayed(solver)(work, targets[s], epsilon)
                for s in gen_even_slices(n_targets, workers)
            )
            codes = np.vstack(chunks)
    full = np.zeros((n_targets, dictionary.shape[0]))
    full[:, kept] = codes
    return sp.csr_matrix(full)


def _noisy_basis_pursuit_lars(
    dictionary: np.ndarray, targets: np.ndarray, epsilon: float = 0.05, *, n_jobs=None
) -> sp.csr_matrix:
    """:func:`noisy_basis_pursuit` by the lasso homotopy for every target (the reference)."""
    return _sparse_codes(dictionary, targets, epsilon, n_jobs, fast=False)


def noisy_basis_pursuit(
    dictionary: np.ndarray,
    targets: np.ndarray,
    epsilon: float = 0.05,
    *,
    n_jobs: int | None = None,
) -> sp.csr_matrix:
    """Sparse codes by noisy basis pursuit, exactly.

    For each row ``y`` of ``targets`` solves

        min ||x||_1   subject to   ||y - D x||_2 <= epsilon,   D = dictionary.T

    For ``||y|| > epsilon`` the minimiser is the lasso solution
    ``argmin 1/2 ||y - D x||^2 + lambda ||x||_1`` whose residual norm is exactly ``epsilon``
    (Lagrange duality).  On its support ``A`` with signs ``s`` it is
    ``x_A = (D_A' D_A)^{-1} (D_A' y - lambda s)``, and the squared residual is quadratic in
    ``lambda``, so the pair ``(A, s)`` determines it in closed form.  A batched ADMM over all
    targets proposes ``(A, s)``, primal-dual active-set steps correct it, and the solution is
    returned only once it passes the KKT certificate (``|D' r| <= lambda`` with equality and
    matching signs on ``A``), so every code is exact; a target that is not certified (and
    every target for ``epsilon = 0`` and near-infeasible targets) is solved by the lasso
    homotopy instead (LARS-lasso to the segment where the residual norm crosses ``epsilon``,
    solved in closed form on that segment).  The
    Gram matrix, the SVD and the factorisations of the dictionary are computed once for all
    targets.  ``||y|| <= epsilon`` gives ``x = 0``.  Of (anti)parallel atoms (duplicates
    included) only the longest gets weight, which leaves the minimum unchanged.

    When no code reaches ``epsilon`` (``y`` is farther than epsilon from the atoms' span) the
    least-squares fit is returned (the smallest-l1 one when it is not unique, from the end of
    the lasso path), i.e. the code with the smallest residual.  ``epsilon = 0`` therefore gives
    the basis-pursuit solution ``min ||x||_1 s.t. D x = y`` when ``y`` lies in the span of the
    atoms, up to rounding.

    Parameters
    ----------
    dictionary : ndarray of shape (n_atoms, n_features)
        The atoms, one per row.
    targets : ndarray of shape (n_targets, n_features)
        The signals to code.
    epsilon : float, default=0.05
        Tolerance on the l2 norm of the reconstruction error.
    n_jobs : int or None, default=None
        Number of joblib workers over chunks of targets (None: one, -1: all cores).

    Returns
    -------
    codes : scipy.sparse.csr_matrix of shape (n_targets, n_atoms)

    Examples
    --------
    >>> import numpy as np
    >>> D = np.eye(3)
    >>> noisy_basis_pursuit(D, np.array([[0.6, 0.8, 0.0]]), epsilon=0.1).toarray().round(2)
    array([[0.53, 0.73, 0.  ]])
    """
    return _sparse_codes(dictionary, targets, epsilon, n_jobs, fast=True)


class SRC(ClassifierMixin, BaseEstimator):
    """Sparse-representation-based classification (Wright et al. 2009).

    Training samples, scaled to unit l2 norm, are the columns of a dictionary ``D``.  A test
    sample ``y`` (also unit norm) is coded by noisy basis pursuit

        x = argmin ||x||_1  s.t.  ||D x - y||_2 <= epsilon,

    (see :func:`noisy_basis_pursuit`: exact, certified by the optimality conditions) and
    assigned to the class with the smallest residual ``r_c(y) = ||y - D delta_c(x)||_2``,
    where ``delta_c`` keeps the coefficients of class ``c``.  When the problem is infeasible
    (more features than linearly independent training samples) the least-squares code is used
    instead.

    Parameters
    ----------
    epsilon : float, default=0.05
        Reconstruction tolerance (0.05 as in Wright et al. and the S-RLSC experiments);
        ``epsilon=0`` asks for exact reconstruction (basis pursuit).
    n_jobs : int or None, default=None
        joblib workers over chunks of test samples at prediction time.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    dictionary_ : ndarray of shape (n_samples, n_features)
        The unit-norm training samples (the atoms, one per row).
    atom_classes_ : ndarray of shape (n_samples,)
        Class index (into ``classes_``) of each atom.

    References
    ----------
    J. Wright, A. Y. Yang, A. Ganesh, S. S. Sastry and Y. Ma, "Robust face recognition via
    sparse representation", IEEE TPAMI 31(2), 2009, pp. 210-227.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.models.sparse_representation import SRC
    >>> rng = np.random.default_rng(0)
    >>> bases = [np.linalg.qr(rng.normal(size=(20, 3)))[0] for _ in range(2)]
    >>> X = np.vstack([(B @ rng.normal(size=(3, 10))).T for B in bases])
    >>> y = np.repeat([0, 1], 10)
    >>> clf = SRC().fit(X, y)
    >>> clf.predict((bases[1] @ rng.normal(size=3))[None, :])
    array([1])
    >>> clf.sparse_codes(X[:1]).shape
    (1, 20)
    """

    def __init__(self, epsilon=0.05, n_jobs=None):
        self.epsilon = epsilon
        self.n_jobs = n_jobs

    def fit(self, X, y) -> SRC:
        """Store the unit-norm training samples as the dictionary.

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
        self.classes_, self.atom_classes_ = check_supervised_classes(self, y)
        self.dictionary_ = unit_rows(X)
        return self

    def sparse_codes(self, X) -> sp.csr_matrix:
        """Sparse codes of the unit-norm rows of X over the dictionary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        codes : scipy.sparse.csr_matrix of shape (n_samples, n_atoms)
            Row i solves ``min ||x||_1 s.t. ||x @ dictionary_ - x_i / ||x_i|| ||_2 <= epsilon``.
        """
        return self._codes(self._unit_inputs(X))

    def _unit_inputs(self, X) -> np.ndarray:
        check_is_fitted(self)
        return unit_rows(validate_data(self, X, dtype=float, reset=False))

    def _codes(self, Y: np.ndarray) -> sp.csr_matrix:
        return noisy_basis_pursuit(self.dictionary_, Y, self.epsilon, n_jobs=self.n_jobs)

    def class_residuals(self, X) -> np.ndarray:
        """Residuals ``r_c(x) = ||x - D delta_c(code(x))||_2`` of the unit-norm rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        Y = self._unit_inputs(X)
        codes = self._codes(Y)
        residuals = np.empty((Y.shape[0], len(self.classes_)))
        for c in range(len(self.classes_)):
            atoms = np.flatnonzero(self.atom_classes_ == c)
            recon = codes[:, atoms] @ self.dictionary_[atoms]
            residuals[:, c] = np.linalg.norm(Y - recon, axis=1)
        return residuals

    def decision_function(self, X) -> np.ndarray:
        """Minus the class residuals, so that the largest value is the predicted class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            ``-r_c(x)``; for two classes scikit-learn's convention ``r_0(x) - r_1(x)``
            (positive means ``classes_[1]``).
        """
        residuals = self.class_residuals(X)
        if len(self.classes_) == 2:
            return residuals[:, 0] - residuals[:, 1]
        return -residuals

    def predict(self, X) -> np.ndarray:
        """Class with the smallest residual (the first such class on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        residuals = self.class_residuals(X)
        return self.classes_[np.argmin(residuals, axis=1)]


SRC._parameter_constraints = constraints_for(SRC)
