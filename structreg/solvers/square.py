"""Square-loss solver for structure-regularised least squares.

One routine serves every square-loss model (RLSC, LapRLSC, DRLSC, GDR/LDR, S-RLSC, ...).
Given a design ``Z`` (n x p) -- explicit features, or the kernel feature map ``V`` with
``K = V V^T`` from :class:`structreg.kernels.KernelFeatureMap` -- it minimises

    J(theta, b) = sum_i c_i ||z_i theta + b - Y_i||^2 + ridge ||theta||^2 + tr(F^T M F),
    F = Z theta + 1 b,

with per-sample loss weights ``c`` (``1/l`` on labeled points, 0 on unlabeled ones), a
symmetric structure penalty ``M`` and an optional unpenalised bias ``b``.  With
``Z = V`` this is the kernel problem

    (1/l) ||J K alpha - Y||^2 + gamma_A alpha^T K alpha + alpha^T K M K alpha

in the coordinates ``beta = V^T alpha``; its stationary ``alpha = P beta`` satisfies the
papers' closed form ``(J K + l gamma_A I + l M K) alpha = J Y`` (checked in the tests).

Factorisation (the choice that is correct for the matrix at hand)
-----------------------------------------------------------------
The normal equations are ``H [theta; b] = A^T C Y`` with ``A = [Z, 1]`` and the symmetric
``H = A^T (C + M) A + diag(ridge, ..., ridge, 0)``, a (p+1) x (p+1) matrix whatever n is.

* If ``H`` is positive definite (the objective is strictly convex: always the case for a PSD
  ``M`` and ``ridge > 0``) it is solved by Cholesky, after checking its reciprocal condition
  number (LAPACK ``?pocon``) so that a numerically singular H is not trusted.
* Otherwise (an indefinite M, as DRLSC/GDR/LDR subtract a between-class term, or a singular H)
  it is solved through the symmetric eigendecomposition with a pseudo-inverse: the exact
  stationary point when H is nonsingular, the minimum-norm least-squares stationary point
  when it is singular.  When H has a negative eigenvalue the objective is unbounded below
  and the stationary point is a saddle -- this is what the papers' closed forms compute; the
  solution reports ``convex=False`` and a warning is issued.

A singular Gram matrix never reaches this routine: the feature map drops the null space.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh, lapack


class NonConvexObjectiveWarning(UserWarning):
    """The structure penalty makes the objective non-convex; a stationary point is returned."""


@dataclass
class LeastSquaresSolution:
    """Result of :func:`solve_penalized_least_squares`.

    Attributes
    ----------
    coef : ndarray of shape (p, n_outputs)
    intercept : ndarray of shape (n_outputs,)
    factorization : {"cholesky", "eigh"}
        How the normal equations were solved.
    convex : bool
        False when H had a negative eigenvalue (stationary point is a saddle).
    singular : bool
        True when H was numerically singular (minimum-norm solution returned).
    """

    coef: np.ndarray
    intercept: np.ndarray
    factorization: str
    convex: bool
    singular: bool


def penalty_products(M, A: np.ndarray) -> np.ndarray:
    """``M @ A`` for a sparse matrix, dense array or LinearOperator ``M`` (or 0 if None)."""
    if M is None:
        return np.zeros_like(A)
    MA = M @ A
    return np.asarray(MA.toarray() if hasattr(MA, "toarray") else MA, dtype=float)


def _design(Z: np.ndarray, fit_intercept: bool) -> np.ndarray:
    return np.hstack([Z, np.ones((Z.shape[0], 1))]) if fit_intercept else Z


def solve_symmetric(H: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, str, bool, bool]:
    """Solve ``H x = rhs`` for symmetric H: Cholesky if safely PD, else eigh pseudo-inverse.

    Returns ``(x, factorization, convex, singular)``; see the module docstring.
    """
    p = H.shape[0]
    H = 0.5 * (H + H.T)
    eps = np.finfo(float).eps
    if p == 0:
        return np.zeros((0, rhs.shape[1])), "cholesky", True, False
    try:
        c, low = cho_factor(H, lower=False, check_finite=False)
        anorm = float(np.max(np.sum(np.abs(H), axis=0)))
        rcond, info = lapack.dpocon(c, anorm)
        if info == 0 and rcond > p * eps:
            return cho_solve((c, low), rhs, check_finite=False), "cholesky", True, False
    except np.linalg.LinAlgError:
        pass
    w, U = eigh(H, check_finite=False)
    tol = p * eps * max(float(np.max(np.abs(w))), 1e-300)
    keep = np.abs(w) > tol
    x = U[:, keep] @ ((U[:, keep].T @ rhs) / w[keep][:, None])
    convex = bool(w.min() >= -tol)
    singular = bool(not keep.all())
    if not convex:
        warnings.warn(
            f"the structure penalty makes the objective non-convex (smallest curvature "
            f"{w.min():.3g} < 0): it is unbounded below and the returned solution is its "
            "stationary point (a saddle), as the closed form defines it. Increase the ridge "
            "(gamma_A) or reduce the negative penalty weight for a convex problem.",
            NonConvexObjectiveWarning,
            stacklevel=3,
        )
    return x, "eigh", convex, singular


def solve_penalized_least_squares(
    Z: np.ndarray,
    Y: np.ndarray,
    loss_weights: np.ndarray,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = False,
) -> LeastSquaresSolution:
    """Minimise ``sum_i c_i ||z_i theta + b - Y_i||^2 + ridge ||theta||^2 + tr(F^T M F)``.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Design: explicit features or a kernel feature map.
    Y : ndarray of shape (n, n_outputs)
        Targets (rows with zero loss weight are ignored).
    loss_weights : ndarray of shape (n,)
        Non-negative ``c_i``.
    penalty : sparse matrix, ndarray, LinearOperator or None
        Symmetric ``M`` (n x n) acting on ``F = Z theta + 1 b``.
    ridge : float
        Weight of ``||theta||^2`` (the RKHS norm when Z is a kernel feature map).
    fit_intercept : bool
        Add the unpenalised bias ``b``.
    """
    Z = np.asarray(Z, dtype=float)
    Y = np.asarray(Y, dtype=float)
    c = np.asarray(loss_weights, dtype=float)
    A = _design(Z, fit_intercept)
    active = np.flatnonzero(c)  # only the labeled rows carry loss
    A_act = A[active]
    H = A_act.T @ (c[active, None] * A_act)
    if penalty is not None:
        H += A.T @ penalty_products(penalty, A)
    p = Z.shape[1]
    H[np.arange(p), np.arange(p)] += ridge
    x, how, convex, singular = solve_symmetric(H, A_act.T @ (c[active, None] * Y[active]))
    coef, intercept = (x[:p], x[p]) if fit_intercept else (x, np.zeros(Y.shape[1]))
    return LeastSquaresSolution(coef, intercept, how, convex, singular)
