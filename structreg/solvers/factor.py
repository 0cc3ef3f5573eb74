"""Factorisations of symmetric systems that may be singular or indefinite.

Every direct solve of the package -- the square-loss normal equations
(:func:`~structreg.solvers.square.solve_penalized_least_squares`,
:class:`~structreg.solvers.SquareLossPath`), the bordered system of LS-SVM and DRLSC
(:mod:`structreg.solvers.bordered`) and the Newton steps of the squared hinge
(:mod:`structreg.solvers.primal_hinge`) -- factors a symmetric matrix ``H`` here, choosing the
factorisation that is correct for the matrix at hand (:func:`solve_symmetric`):

* If ``H`` is positive definite (the objective is strictly convex: always the case for the
  normal equations with a PSD penalty and a positive ridge) it is solved by Cholesky, after
  checking its reciprocal condition number (LAPACK ``?pocon``) so that a numerically singular
  H is not trusted (:func:`cholesky_attempt`).
* Otherwise, if H is safely nonsingular (an indefinite penalty, as DRLSC/GDR/LDR subtract a
  between-class term), by the Bunch-Kaufman factorisation ``H = U D U^T`` (LAPACK ``?sytrf``,
  backward stable for indefinite matrices, at about the cost of a Cholesky factorisation and
  a small fraction of an eigendecomposition's); D's 1x1 and 2x2 blocks give H's number of
  negative eigenvalues (Sylvester's law of inertia): the exact stationary point, and whether
  it is a minimum (:func:`ldl_factor`).
* Otherwise (H singular or numerically so) through the symmetric eigendecomposition with a
  pseudo-inverse: the minimum-norm least-squares stationary point (:func:`eigh_factor`).

When H has a negative eigenvalue the quadratic objective whose Hessian it is is unbounded
below and the stationary point is a saddle; the callers report ``convex=False``.

The factor of a Cholesky or Bunch-Kaufman solve can be kept (``keep=``) for the inverse
quadratic forms ``b_i^T H^{-1} b_i`` of the leverages (:func:`inverse_quadratic_forms`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, lapack

from .._compat import sytrs


def _potrf(H: np.ndarray, min_rcond: float | None) -> tuple[np.ndarray | None, bool]:
    """``(R, factored)``: the upper Cholesky factor R (``H = R^T R``; the strict lower triangle
    holds junk) if H is safely positive definite (reciprocal condition number above
    ``min_rcond``, default ``p eps``), else None; ``factored`` is False when ``?potrf`` met a
    non-positive pivot (H is not numerically positive definite), True when H was factored.
    H is read, not changed (LAPACK ``?potrf`` / ``?pocon`` on one copy; no finiteness scan:
    callers pass assembled, finite systems)."""
    p = H.shape[0]
    anorm = float(np.abs(H).sum(axis=0).max(initial=0.0))
    c, info = lapack.dpotrf(H, lower=0, clean=0)
    if info != 0:
        return None, False
    rcond, info = lapack.dpocon(c, anorm)
    if info != 0 or rcond <= (p * np.finfo(float).eps if min_rcond is None else min_rcond):
        return None, True
    return c, True


def cholesky_factor(H: np.ndarray, min_rcond: float | None = None) -> np.ndarray | None:
    """The upper Cholesky factor R of a safely positive definite H, else None (see
    :func:`cholesky_attempt`)."""
    return _potrf(H, min_rcond)[0]


def cholesky_attempt(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> tuple[np.ndarray | None, bool]:
    """:func:`cholesky_solve`, saying why it gave up: ``(x, factored)`` with ``factored``
    False when ``?potrf`` met a non-positive pivot (H is not numerically positive definite;
    x is None) and True when H was factored (x is None only if its condition was too poor).
    ``keep``: a dict that receives the factor (``keep["cholesky"]``) for later solves
    (:func:`inverse_quadratic_forms`)."""
    c, factored = _potrf(H, min_rcond)
    if c is None:
        return None, factored
    x, info = lapack.dpotrs(c, rhs, lower=0)
    if info != 0:
        return None, True
    if keep is not None:
        keep["cholesky"] = c
    return x, True


def cholesky_solve(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> np.ndarray | None:
    """``H^{-1} rhs`` by Cholesky if H is safely positive definite (LAPACK ``?potrs``), else
    None (see :func:`cholesky_attempt`)."""
    return cholesky_attempt(H, rhs, min_rcond, keep)[0]


def ldl_factor(H: np.ndarray, min_rcond: float | None = None) -> tuple | None:
    """The Bunch-Kaufman factorisation ``H = U D U^T`` (LAPACK ``?sytrf``, backward stable for
    symmetric indefinite H) if H is safely nonsingular (``?sycon`` reciprocal condition number
    above ``min_rcond``, default ``q eps``), else None.  Returns ``(ldu, ipiv, number of
    negative eigenvalues)``: by Sylvester's law of inertia D (1x1 and 2x2 blocks) has H's
    signs."""
    q = H.shape[0]
    # the blocked factorisation needs the queried workspace: the wrapper's default (n) runs
    # LAPACK's unblocked code, 3-4x slower at q ~ 300
    lwork = int(lapack.dsytrf_lwork(q, lower=0)[0])
    ldu, ipiv, info = lapack.dsytrf(H, lower=0, lwork=max(lwork, 1))
    if info != 0:
        return None
    rcond, info = lapack.dsycon(ldu, ipiv, float(np.max(np.sum(np.abs(H), axis=0))), lower=0)
    if info != 0 or not rcond > (q * np.finfo(float).eps if min_rcond is None else min_rcond):
        return None
    # Sylvester's inertia from D: a 1x1 block (ipiv > 0) is negative or not; a 2x2 block
    # (rows k, k+1 with ipiv[k] = ipiv[k+1] < 0; pairs never overlap, so the negative entries
    # come as consecutive pairs) [[a, b], [b, c]] has one negative eigenvalue when its
    # determinant is negative, else two when a < 0
    d = np.diagonal(ldu)
    negative = int(np.count_nonzero(d[ipiv > 0] < 0))
    first = np.flatnonzero(ipiv < 0)[::2]
    if first.size:
        a, b, c = d[first], ldu[first, first + 1], d[first + 1]
        det = a * c - b * b
        negative += int(np.count_nonzero(det < 0) + 2 * np.count_nonzero((det >= 0) & (a < 0)))
    return ldu, ipiv, negative


def ldl_solve(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> tuple[np.ndarray, int] | None:
    """``H^{-1} rhs`` by the Bunch-Kaufman factorisation (:func:`ldl_factor`) if H is safely
    nonsingular, else None.  Returns ``(x, number of negative eigenvalues)``.  ``keep``: a
    dict that receives the factorisation (``keep["ldl"]``)."""
    factor = ldl_factor(H, min_rcond)
    if factor is None:
        return None
    ldu, ipiv, negative = factor
    x, info = sytrs(ldu, ipiv, rhs, lower=0)
    if info != 0:
        return None
    if keep is not None:
        keep["ldl"] = factor
    return x, negative


def inverse_quadratic_forms(factor: dict, B: np.ndarray) -> np.ndarray:
    """``b_i^T H^{-1} b_i`` for the rows ``b_i`` of B, from the factorisation of H that
    :func:`cholesky_solve` or :func:`ldl_solve` kept (``||R^{-T} b_i||^2`` from Cholesky:
    one triangular solve; ``b_i^T (U D U^T)^{-1} b_i`` from Bunch-Kaufman)."""
    Bt = np.asfortranarray(np.asarray(B, dtype=float).T)
    if "cholesky" in factor:
        W, info = lapack.dtrtrs(factor["cholesky"], Bt, lower=0, trans=1)
        return np.einsum("ij,ij->j", W, W)
    ldu, ipiv, _ = factor["ldl"]
    X, info = sytrs(ldu, ipiv, Bt, lower=0)
    return np.einsum("ij,ij->j", Bt, X)


def eigh_factor(
    H: np.ndarray, size: int | None = None
) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """The pseudo-inverse of the symmetric H through ``eigh``: ``(U, w, psd, singular)`` with
    ``H^+ = U diag(1 / w) U^T`` over the eigenpairs kept.

    Eigenvalues below ``p * eps * max|lambda|`` in magnitude are treated as zero (``p``: H's
    order, or ``size`` when H is the restriction of a larger system to a subspace).
    """
    p = H.shape[0] if size is None else size
    w, U = eigh(H, check_finite=False)
    tol = p * np.finfo(float).eps * max(float(np.max(np.abs(w))), 1e-300)
    keep = np.abs(w) > tol
    return U[:, keep], w[keep], bool(w.min() >= -tol), bool(not keep.all())


def eigh_solve(
    H: np.ndarray, rhs: np.ndarray, size: int | None = None
) -> tuple[np.ndarray, bool, bool]:
    """Pseudo-inverse solve through ``eigh`` (:func:`eigh_factor`): returns
    ``(x, psd, singular)``; a singular H gets the minimum-norm solution."""
    U, w, psd, singular = eigh_factor(H, size)
    return U @ ((U.T @ rhs) / w[:, None]), psd, singular


def solve_symmetric(H: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, str, bool, bool]:
    """Solve ``H x = rhs`` for symmetric H: Cholesky if safely PD, else the Bunch-Kaufman
    ``LDL^T`` if safely nonsingular, else the eigh pseudo-inverse.

    Returns ``(x, factorization, positive_semidefinite, singular)``; see the module docstring.
    """
    H = 0.5 * (H + H.T)
    if H.shape[0] == 0:
        return np.zeros((0, rhs.shape[1])), "cholesky", True, False
    x = cholesky_solve(H, rhs)
    if x is not None:
        return x, "cholesky", True, False
    ldl = ldl_solve(H, rhs)
    if ldl is not None:
        return ldl[0], "ldl", ldl[1] == 0, False
    x, psd, singular = eigh_solve(H, rhs)
    return x, "eigh", psd, singular
