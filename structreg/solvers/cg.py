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
for the square-loss normal equations and for the graph systems of
:mod:`structreg.solvers.laplace` (GFHF's harmonic and Poisson learning's Laplacian
systems), ``P = blockdiag(K, s)`` for the kernel system of :mod:`structreg.solvers.kernel_cg`
(Melacci & Belkin 2011), where ``P^{-1} = K^{-1}`` is never needed.

The columns run independent recurrences (their own step lengths) but share one application
of N per iteration, which reads a sparse N once for all of them.  A column that stops is
written back and dropped from the block of active columns.  The block is row-major when N
is given as a sparse matrix (the order of scipy's sparse products), column-major for an
operator given as a function: every product and sum then runs in the order in which the
recorded solutions of the tests were computed, to the last bit.  A caller may run the
iteration in stages: a short probe (``max_iter``, ``warn=False``), then a warm start from
the probe's ``x`` (``x0``), warning once at the end (:func:`warn_not_converged`).

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
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.exceptions import ConvergenceWarning

from .._compat import minres

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
        Iterations per column; their sum counts the column products computed.
    column_converged : ndarray of shape (k,), bool
    minres : ndarray of shape (k,), bool
        Columns finished by the MINRES fallback.
    negative_curvature : bool
        A direction with ``<p, N p>_P < 0`` was met: the system is indefinite.
    iterate : ndarray of shape (q, k) or None
        A solve whose solution is a transform of its iterate (the multigrid CG's ``X = M
        Y``): the iterate ``Y``, from which it can go on; None otherwise.
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    column_iter: np.ndarray
    column_converged: np.ndarray
    minres: np.ndarray
    negative_curvature: bool
    iterate: np.ndarray | None = None


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


def warn_not_converged(
    converged: np.ndarray, tol: float, max_iter: int, *, stacklevel: int = 2
) -> None:
    """Issue the ``ConvergenceWarning`` of :func:`conjugate_gradient` when some column did not
    converge; for callers that run it in stages (``warn=False``) and warn once at the end.

    Parameters
    ----------
    converged : ndarray of bool, shape (k,)
        Per column: the stopping rule was met.
    tol, max_iter
        The tolerance and the iteration cap to name in the message.
    stacklevel : int, default=2
        As for :func:`warnings.warn`, counted from the caller of this function.
    """
    if converged.all():
        return
    warnings.warn(
        f"conjugate gradients did not reach tol={tol} in max_iter={max_iter} iterations "
        f"for {int((~converged).sum())} of {converged.size} column(s)",
        ConvergenceWarning,
        stacklevel=stacklevel + 1,
    )


@dataclass
class _ActiveColumns:
    """The CG state of the columns still iterating, one array column per active column, all
    blocks in the memory ``order`` ``"F"`` (column-major) or ``"C"`` (row-major).

    With the identity metric ``pr`` is ``r`` and ``pp`` is ``p`` (the same arrays), so that
    plain CG keeps no copies."""

    order: str
    cols: np.ndarray  # their indices among the columns of C
    x: np.ndarray
    r: np.ndarray  # C - N x
    pr: np.ndarray  # P r
    p: np.ndarray  # the search directions
    pp: np.ndarray  # P p
    rho: np.ndarray  # <r, r>_P

    @classmethod
    def start(cls, order, cols, X, R, PR, rho) -> _ActiveColumns:
        """The columns ``cols`` of the iterate X, the residual R and ``PR = P R`` (R itself
        with the identity metric), with the residuals as first directions."""
        r = np.asarray(R[:, cols], order=order)
        p = r.copy(order=order)
        if PR is R:
            pr, pp = r, p
        else:
            pr = np.asarray(PR[:, cols], order=order)
            pp = pr.copy(order=order)
        return cls(order, cols, np.asarray(X[:, cols], order=order), r, pr, p, pp, rho[cols])

    def block(self, V: np.ndarray) -> np.ndarray:
        """V in the memory order of the blocks (a copy only when it is not)."""
        return np.asarray(V, order=self.order)

    def drop(self, leaving: np.ndarray, X: np.ndarray) -> None:
        """Write the iterates of the ``leaving`` columns into X and stop carrying them."""
        if not leaving.any():
            return
        X[:, self.cols[leaving]] = self.x[:, leaving]
        keep = ~leaving
        identity = self.pr is self.r
        self.cols, self.rho = self.cols[keep], self.rho[keep]
        self.x, self.r, self.p = (self.block(V[:, keep]) for V in (self.x, self.r, self.p))
        self.pr = self.r if identity else self.block(self.pr[:, keep])
        self.pp = self.p if identity else self.block(self.pp[:, keep])


def _operator(apply: Operator | sp.spmatrix) -> tuple[Operator, str]:
    """``(apply, order)``: the operator as a callable, and the memory order of the blocks of
    active columns: row-major for a sparse matrix (scipy's sparse products read and write
    row-major blocks; a column-major one would be copied on every product), column-major for
    a callable; an operator that says it is ``row_major`` (a
    :class:`~structreg.solvers.products.ThreadedProduct`) is taken as a sparse matrix."""
    if not (sp.issparse(apply) or getattr(apply, "row_major", False)):
        return apply, "F"
    return (lambda V, _: apply @ V), "C"


def conjugate_gradient(
    apply: Operator | sp.spmatrix,
    C: np.ndarray,
    *,
    metric: Callable[[np.ndarray], np.ndarray] | None = None,
    x0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int | None = None,
    warn: bool = True,
    minres_fallback: bool = True,
) -> CGResult:
    """Solve ``N X = C`` column by column by (preconditioned) conjugate gradients.

    ``N`` is self-adjoint positive definite in ``<u, v>_P = u^T P v``; the iteration minimises
    the error in the norm of ``H = P N`` over growing Krylov spaces (module docstring).

    Parameters
    ----------
    apply : callable or sparse matrix
        ``apply(V, PV)`` returns ``N V`` (shape (q, m)) for V of shape (q, m), given
        ``PV = metric(V)``; it must not modify its arguments.  Or the sparse matrix N itself
        (then the blocks of active columns are kept row-major, the order in which scipy's
        sparse products read and write them; column-major otherwise).
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
    warn : bool, default=True
        Issue a ``ConvergenceWarning`` when some column does not converge.  A caller that
        runs the iteration in stages (a short probe, then a warm start from its ``x``) passes
        False and calls ``warn_not_converged`` (this module) once at the end.
    minres_fallback : bool, default=True
        Finish by MINRES the columns whose search direction has curvature at its rounding
        level (module docstring); False: they end there, not converged, at the last CG
        iterate (a caller refining an answer it already has).

    Returns
    -------
    CGResult
        ``x`` has the shape of C.
    """
    C = np.asarray(C, dtype=float)
    flat = C.ndim == 1
    C = C[:, None] if flat else C
    q, k = C.shape
    max_iter = 10 * q if max_iter is None else int(max_iter)
    apply, order = _operator(apply)
    identity = metric is None
    P = (lambda V: np.array(V, dtype=float)) if identity else metric

    if x0 is None:
        X = np.zeros((q, k))
        PC = C if identity else P(C)
        R = C.copy()
        PR = R if identity else PC.copy()
    else:
        X = np.array(np.reshape(x0, (q, k)), dtype=float)
        if identity:
            PC, PX = C, X
        else:
            both = P(np.hstack([C, X]))
            PC, PX = both[:, :k], both[:, k:]
        R = C - apply(X, PX)
        PR = R if identity else P(R)
    ref = _dots(C, PC)
    zero = ~(ref > 0)  # ||C_j||_P = 0: the solution is 0
    X[:, zero], R[:, zero], PR[:, zero] = 0.0, 0.0, 0.0
    rho = _dots(R, PR)
    target = tol**2 * ref
    converged = zero | (rho <= target)
    iters = np.zeros(k, dtype=int)
    fallback = np.zeros(k, dtype=bool)
    negative = False

    active = _ActiveColumns.start(order, np.flatnonzero(~converged), X, R, PR, rho)

    eps = np.finfo(float).eps
    done_iter = 0  # every active column has run this many iterations
    while active.cols.size and done_iter < max_iter:
        Np = apply(active.p, active.pp)
        curv = _dots(active.pp, Np)
        # rounding level of the computed curvature: below it the sign is not known
        rnd = 64 * eps * np.sqrt(_dots(active.pp, active.pp)) * np.sqrt(_dots(Np, Np))
        bad = curv <= rnd
        if bad.any():
            negative |= bool(np.any(curv[bad] < -rnd[bad]))
            fallback[active.cols[bad]] = True
            active.drop(bad, X)
            Np, curv = Np[:, ~bad], curv[~bad]
            if not active.cols.size:
                break
        a = active.rho / curv
        active.x += a * active.p
        active.r -= a * Np
        if not identity:
            active.pr = active.block(P(active.r))  # the one product with P
        rho_new = _dots(active.r, active.pr)
        beta = rho_new / active.rho
        active.rho = rho_new
        active.p *= beta  # p = r + beta p, and P p by the same recurrence
        active.p += active.r
        if not identity:
            active.pp *= beta
            active.pp += active.pr
        done_iter += 1
        iters[active.cols] += 1
        done = rho_new <= target[active.cols]
        converged[active.cols[done]] = True
        active.drop(done, X)
    X[:, active.cols] = active.x

    if minres_fallback and fallback.any():

        def h_matvec(v):  # H v = P N v
            V = np.reshape(v, (q, 1))
            return P(apply(V, P(V))).ravel()

        H = LinearOperator((q, q), matvec=h_matvec, rmatvec=h_matvec, dtype=float)
        for col in np.flatnonzero(fallback):
            X[:, col], used, converged[col] = _minres(H, PC[:, col], X[:, col], tol, max_iter)
            iters[col] += used

    if warn:
        warn_not_converged(converged, tol, max_iter, stacklevel=3)
    return CGResult(
        x=X[:, 0] if flat else X,
        n_iter=int(iters.max()) if k else 0,
        converged=bool(converged.all()),
        column_iter=iters,
        column_converged=converged,
        minres=fallback & minres_fallback,
        negative_curvature=negative,
    )
