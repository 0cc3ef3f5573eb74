"""The one conjugate-gradient routine of structreg (FALKON's ``ConjugateGradient``).

:func:`conjugate_gradient` solves ``N X = C`` for a block of right-hand sides (one column per
output; all active columns share one application of N per iteration), where N is self-adjoint
and positive definite in the inner product ``<u, v>_P = u^T P v`` of a symmetric positive
(semi-)definite *metric* P (the identity by default: plain CG on a symmetric N).

This is preconditioned CG on the symmetric system ``H X = P C`` with ``H = P N`` and the
preconditioner P, written so that P is only ever *multiplied*: with ``r = C - N x`` the
preconditioned residual, ``rho = <r, r>_P`` and ``P p`` kept by recurrence,

    a = rho / <p, N p>_P,  x += a p,  r -= a N p,  Pr = P r  (the one product with P),
    rho' = <r, Pr>,  p = r + (rho'/rho) p,  Pp = Pr + (rho'/rho) Pp.

Callers choose the split of their system: Jacobi scaling (``N = D^{-1/2} H D^{-1/2}``, P = I)
for the square-loss normal equations, ``P = blockdiag(K, s)`` for the kernel system of
:mod:`structreg.solvers.kernel_cg` (Melacci & Belkin 2011), where ``P^{-1} = K^{-1}`` is
never needed.

Stopping rule (one, for every caller): column j stops when

    ||C_j - N X_j||_P <= tol ||C_j||_P,

or after ``max_iter`` iterations (``converged`` is then False for it).  A column with
``||C_j||_P = 0`` has the solution 0.

Indefinite or singular systems: a search direction with curvature ``<p, N p>_P`` at or below
its rounding level (H indefinite, or singular along p) ends CG for that column, which is
finished by MINRES (unpreconditioned, on the symmetric ``H x = P c`` from the CG iterate; two
products with P per iteration) until ``||P c - H x||_2 <= tol ||P c||_2`` -- the plain norm
that MINRES minimises.  MINRES returns the stationary point of an indefinite (nonsingular)
system; ``negative_curvature`` reports whether a direction with ``<p, N p>_P < 0`` was met.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import LinearOperator, minres
from sklearn.exceptions import ConvergenceWarning

__all__ = ["CGResult", "conjugate_gradient"]

Operator = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``apply(V, PV)`` returns ``N V`` for a block V of shape (q, m); ``PV = P V`` is passed along
(computed anyway), so operators of the form ``N = P^{-1} H`` reuse it."""


@dataclass
class CGResult:
    """Result of :func:`conjugate_gradient`.

    Attributes
    ----------
    x : ndarray of shape (q, k)
        The solution block.
    n_iter : int
        Iterations (CG plus any MINRES ones), maximum over the columns.
    converged : bool
        Every column met the stopping rule.
    column_iter : ndarray of shape (k,)
    column_converged : ndarray of shape (k,), bool
    minres : ndarray of shape (k,), bool
        Columns finished by the MINRES fallback.
    negative_curvature : bool
        A direction with ``<p, N p>_P < 0`` was met: the system is indefinite.
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    column_iter: np.ndarray
    column_converged: np.ndarray
    minres: np.ndarray
    negative_curvature: bool


def _dots(U: np.ndarray, V: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", U, V)


def _minres(H: LinearOperator, rhs: np.ndarray, x0: np.ndarray, tol: float, max_iter: int):
    """MINRES on ``H x = rhs`` from ``x0`` until ``||rhs - H x||_2 <= tol ||rhs||_2``.

    scipy's ``minres`` also stops (``info == 0``) on ``||r|| <= rtol ||H|| ||x||`` or on an
    ill-conditioning estimate, so the true residual is checked and MINRES restarted from its
    iterate with a smaller ``rtol`` while iterations remain.  Returns
    ``(x, iterations, converged)``.
    """
    target = tol * np.linalg.norm(rhs)
    x, used, rtol = x0, 0, tol
    while True:
        count = [0]

        def tick(_, count=count):
            count[0] += 1

        x, _ = minres(H, rhs, x0=x, rtol=rtol, maxiter=max_iter - used, callback=tick)
        used += count[0]
        res = np.linalg.norm(rhs - H @ x)
        if res <= target:
            return x, used, True
        if used >= max_iter or count[0] == 0 or rtol <= np.finfo(float).eps:
            return x, used, False
        rtol = max(np.finfo(float).eps, 0.5 * rtol * target / res)


def conjugate_gradient(
    apply: Operator,
    C: np.ndarray,
    *,
    metric: Callable[[np.ndarray], np.ndarray] | None = None,
    x0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int | None = None,
) -> CGResult:
    """Solve ``N X = C`` column by column by (preconditioned) conjugate gradients.

    ``N`` is self-adjoint positive definite in ``<u, v>_P = u^T P v``; the iteration minimises
    the error in the norm of ``H = P N`` over growing Krylov spaces (module docstring).

    Parameters
    ----------
    apply : callable
        ``apply(V, PV)`` returns ``N V`` (shape (q, m)) for V of shape (q, m), given
        ``PV = metric(V)``.
    C : ndarray of shape (q, k) or (q,)
        Right-hand sides.
    metric : callable or None
        ``metric(V)`` returns ``P V`` (shape (q, m)); None is the identity.  Called once per
        iteration on the active columns.
    x0 : ndarray of shape (q, k) or None
        Starting point (a warm start); default zero.
    tol : float
        Relative residual per column, ``||C_j - N X_j||_P <= tol ||C_j||_P``.
    max_iter : int or None
        Iteration cap per column for CG and again for a MINRES fallback; default ``10 q``.

    Returns
    -------
    CGResult
        ``x`` has the shape of C.  Non-convergence also issues a ``ConvergenceWarning``.
    """
    C = np.asarray(C, dtype=float)
    flat = C.ndim == 1
    C = C[:, None] if flat else C
    q, k = C.shape
    max_iter = 10 * q if max_iter is None else int(max_iter)
    P = (lambda V: np.array(V, dtype=float)) if metric is None else metric

    if x0 is None:
        X = np.zeros((q, k))
        PC = P(C)
        R, PR = C.copy(), PC.copy()
    else:
        X = np.array(np.reshape(x0, (q, k)), dtype=float)
        both = P(np.hstack([C, X]))
        PC, PX = both[:, :k], both[:, k:]
        R = C - apply(X, PX)
        PR = P(R)
    ref = _dots(C, PC)
    zero = ~(ref > 0)  # ||C_j||_P = 0: the solution is 0
    X[:, zero], R[:, zero], PR[:, zero] = 0.0, 0.0, 0.0
    rho = _dots(R, PR)
    target = tol**2 * ref
    converged = zero | (rho <= target)
    p, Pp = R.copy(), PR.copy()
    iters = np.zeros(k, dtype=int)
    fallback = np.zeros(k, dtype=bool)
    negative = False
    active = ~converged

    eps = np.finfo(float).eps
    while active.any() and iters[active].max() < max_iter:
        j = np.flatnonzero(active)
        Np = apply(p[:, j], Pp[:, j])
        curv = _dots(Pp[:, j], Np)
        # rounding level of the computed curvature: below it the sign is not known
        rnd = 64 * eps * np.linalg.norm(Pp[:, j], axis=0) * np.linalg.norm(Np, axis=0)
        bad = curv <= rnd
        if bad.any():
            negative |= bool(np.any(curv[bad] < -rnd[bad]))
            fallback[j[bad]] = True
            active[j[bad]] = False
            j, Np, curv = j[~bad], Np[:, ~bad], curv[~bad]
            if j.size == 0:
                continue
        a = rho[j] / curv
        X[:, j] += a * p[:, j]
        R[:, j] -= a * Np
        PR[:, j] = P(R[:, j])  # the one product with P
        rho_new = _dots(R[:, j], PR[:, j])
        beta = rho_new / rho[j]
        rho[j] = rho_new
        p[:, j] = R[:, j] + beta * p[:, j]
        Pp[:, j] = PR[:, j] + beta * Pp[:, j]
        iters[j] += 1
        done = rho_new <= target[j]
        converged[j[done]] = True
        active[j[done]] = False

    if fallback.any():

        def h_matvec(v):  # H v = P N v
            V = np.reshape(v, (q, 1))
            return P(apply(V, P(V))).ravel()

        H = LinearOperator((q, q), matvec=h_matvec, rmatvec=h_matvec, dtype=float)
        for col in np.flatnonzero(fallback):
            X[:, col], used, converged[col] = _minres(H, PC[:, col], X[:, col], tol, max_iter)
            iters[col] += used

    if not converged.all():
        warnings.warn(
            f"conjugate gradients did not reach tol={tol} in max_iter={max_iter} iterations "
            f"for {int((~converged).sum())} of {k} column(s)",
            ConvergenceWarning,
            stacklevel=3,
        )
    return CGResult(
        x=X[:, 0] if flat else X,
        n_iter=int(iters.max()) if k else 0,
        converged=bool(converged.all()),
        column_iter=iters,
        column_converged=converged,
        minres=fallback,
        negative_curvature=negative,
    )
