"""Iterative exact-kernel solver for structure-regularised least squares.

The kernel form of the square-loss problem of :mod:`structreg.solvers.square`, with
``f = K alpha + 1 b`` and ``K`` the (symmetric PSD, possibly singular) training Gram matrix:

    J(alpha, b) = sum_i c_i ||F_i - Y_i||^2 + ridge alpha^T K alpha + tr(F^T M F),
    F = K alpha + 1 b.

With ``C = diag(c)``, ``A = C + M`` and ``g = C Y - A F`` the gradients are
``dJ/dalpha = -2 K (g - ridge alpha)`` and ``dJ/db = -2 1^T g``, so the stationary point
solves the symmetric system

    H [alpha; b] = [K C Y; 1^T C Y],   H = [[K A K + ridge K, K A 1], [1^T A K, 1^T A 1]],

i.e. ``K`` times the papers' nonsymmetric closed form ``(A K + ridge I) alpha (+ A 1 b) = C Y``.

Following Melacci & Belkin ("Laplacian SVMs trained in the primal", JMLR 12, 2011, the
preconditioned CG for LapRLSC) the system is solved by conjugate gradients preconditioned by
``P = blockdiag(K, s)``: the preconditioned residual ``z = P^{-1} r = [g - ridge alpha;
1^T g / s]`` (a solution of ``P z = r`` when K is singular) needs no ``K^{-1}``, and keeping
``K p`` and ``K z`` by recurrences leaves ONE product with ``K`` per iteration (for all
output columns at once).  ``K`` may be a dense array or any operator with ``@`` (e.g.
:class:`GramOperator`, which never stores an n x n matrix when it would be too large).
This is the exact-kernel counterpart of the feature-map solver: no factorisation of ``K``
is needed, at the price of O(n^2) per iteration.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import LinearOperator, minres
from sklearn.exceptions import ConvergenceWarning

from .square import _Counter, penalty_products, warn_nonconvex

__all__ = ["GramOperator", "KernelLeastSquaresSolution", "solve_kernel_least_squares"]

_BLOCK_BYTES = 2**26  # 64 MiB per recomputed row block of the Gram matrix


class GramOperator(LinearOperator):
    """K @ V for K = kernel(X, X) without storing K when it is too large.

    If ``n * n * 8 <= max_bytes`` the Gram matrix is computed once and stored (products are
    then one BLAS call); otherwise every product recomputes row blocks
    ``k(X[block], X) @ V``, each block holding at most ``min(64 MiB, max_bytes)`` (at least
    one row), so no n x n array is ever allocated.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points.
    kernel_fn : callable
        ``kernel_fn(A, B)`` returns the Gram block ``k(A, B)`` of shape ``(len(A), len(B))``,
        e.g. ``functools.partial(kernel_matrix, kernel="rbf", gamma=0.5)``.
    max_bytes : int, default=2**30
        Largest Gram matrix (in bytes, float64) that is stored.
    block_size : int or None, default=None
        Rows per recomputed block (default from the memory bound above).

    Attributes
    ----------
    stored : bool
        Whether the full Gram matrix is stored.
    matrix : ndarray of shape (n, n) or None
        The stored Gram matrix (None when blockwise).
    block_size : int or None
        Rows per block of a blockwise product (None when stored).
    """

    def __init__(
        self,
        X: np.ndarray,
        kernel_fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
        *,
        max_bytes: int = 2**30,
        block_size: int | None = None,
    ) -> None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        n = X.shape[0]
        super().__init__(dtype=np.dtype(float), shape=(n, n))
        self.X = X
        self.kernel_fn = kernel_fn
        self.stored = n * n * 8 <= max_bytes
        if self.stored:
            self.matrix = np.asarray(kernel_fn(X, X), dtype=float)
            self.block_size = None
        else:
            self.matrix = None
            if block_size is None:
                block_size = min(_BLOCK_BYTES, int(max_bytes)) // (8 * max(n, 1))
            self.block_size = int(min(max(1, block_size), max(n, 1)))

    def _matmat(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        if self.stored:
            return self.matrix @ V
        n = self.shape[0]
        out = np.empty((n, V.shape[1]))
        for start in range(0, n, self.block_size):
            rows = slice(start, min(start + self.block_size, n))
            out[rows] = np.asarray(self.kernel_fn(self.X[rows], self.X), dtype=float) @ V
        return out

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        return self._matmat(np.reshape(v, (-1, 1))).ravel()

    def _rmatvec(self, v: np.ndarray) -> np.ndarray:
        return self._matvec(v)

    def _rmatmat(self, V: np.ndarray) -> np.ndarray:
        return self._matmat(V)

    def _adjoint(self) -> GramOperator:
        return self

    def _transpose(self) -> GramOperator:
        return self


@dataclass
class KernelLeastSquaresSolution:
    """Result of :func:`solve_kernel_least_squares`.

    Attributes
    ----------
    dual_coef : ndarray of shape (n, n_outputs)
        ``alpha`` of ``f = K alpha + b``.
    intercept : ndarray of shape (n_outputs,)
    fitted : ndarray of shape (n, n_outputs)
        ``K alpha + b`` at the training points.
    method : {"pcg", "minres"}
        ``"minres"`` when at least one column fell back to MINRES.
    n_iter : int
        Iterations (PCG plus any MINRES ones), maximum over the output columns.
    converged : bool
        Every column reached ``tol``.
    convex : bool or None
        False when negative curvature was met (the solution is a saddle point); True when the
        objective is known to be convex (no penalty); None when not checked.
    """

    dual_coef: np.ndarray
    intercept: np.ndarray
    fitted: np.ndarray
    method: str
    n_iter: int
    converged: bool
    convex: bool | None


def _kprod(K, V: np.ndarray) -> np.ndarray:
    out = K @ V
    return np.asarray(out.toarray() if hasattr(out, "toarray") else out, dtype=float)


def _minres(K, apply_A, ridge, fi, rhs, start, tol, max_iter):
    """Unpreconditioned MINRES on ``H x = rhs`` until ``||rhs - H x||_2 <= tol ||rhs||_2``.

    scipy's ``minres`` also stops (with ``info == 0``) on ``||r|| <= rtol ||H|| ||x||`` or
    on an ill-conditioning estimate, so the true residual is checked and MINRES restarted
    from its iterate with a smaller ``rtol`` while iterations remain.  Returns
    ``(x, iterations, converged)``.
    """
    n = K.shape[0]

    def matvec(v):  # H v = [K (A f + ridge v_alpha); 1^T A f],  f = K v_alpha + 1 v_b
        v = np.ravel(v)
        f = _kprod(K, v[:n]) + (v[n] if fi else 0.0)
        w = apply_A(f[:, None])[:, 0]
        top = _kprod(K, w + ridge * v[:n])
        return np.concatenate([top, [w.sum()]]) if fi else top

    H = LinearOperator((n + fi, n + fi), matvec=matvec, rmatvec=matvec, dtype=float)
    target = tol * np.linalg.norm(rhs)
    x, used, rtol = start, 0, tol
    while True:
        counter = _Counter()
        x, _ = minres(H, rhs, x0=x, rtol=rtol, maxiter=max_iter - used, callback=counter)
        used += counter.n
        res = np.linalg.norm(rhs - matvec(x))
        if res <= target:
            return x, used, True
        if used >= max_iter or counter.n == 0 or rtol <= np.finfo(float).eps:
            return x, used, False
        rtol = max(np.finfo(float).eps, 0.5 * rtol * target / res)


def solve_kernel_least_squares(
    K,
    Y: np.ndarray,
    loss_weights: np.ndarray,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = False,
    tol: float = 1e-6,
    max_iter: int | None = None,
    x0: np.ndarray | None = None,
) -> KernelLeastSquaresSolution:
    """Minimise ``sum_i c_i ||F_i - Y_i||^2 + ridge tr(alpha^T K alpha) + tr(F^T M F)``.

    ``F = K alpha + 1 b``; stationarity is ``H [alpha; b] = [K C Y; 1^T C Y]`` (module
    docstring).  All output columns run as a block of independent preconditioned CGs with
    ``P = blockdiag(K, s)``, ``s = 1^T (C + M) 1`` if positive else 1.  With ``A = C + M``,
    ``u = K p + 1 p_b`` and ``w = A u`` (one product with M, none with K):

        a = rho / (u^T w + ridge p^T Kp),  alpha += a p,  b += a p_b,  F += a u,
        z -= a (w + ridge p),  z_b -= a 1^T w / s,  Kz = K @ z   (the one K product),
        rho' = z^T Kz + s z_b^2,  p = z + (rho'/rho) p,  Kp = Kz + (rho'/rho) Kp,  same for p_b.

    A column stops when ``sqrt(rho) = ||r||_{P^{-1}} = ||z||_P`` (``z^T K z + s z_b^2``) is
    at most ``tol`` times the same norm of the right-hand side, ``||[C Y; 1^T C Y / s]||_P``;
    converged columns stop updating.  This norm, like H, does not see ``alpha`` along the
    null space of K: ``fitted`` is what the tolerance controls, while ``dual_coef`` is
    exact only modulo null(K) when K is singular (and correspondingly less accurate along
    the near-null directions of an ill-conditioned K).

    A column meeting curvature ``p^T H p <= 0`` (to rounding; an indefinite M, or ``ridge = 0`` with
    singular K) is finished by unpreconditioned MINRES on ``H [alpha; b] = rhs`` started at
    the current iterate (two K products per iteration), stopped on the plain 2-norm
    ``||rhs - H x||_2 <= tol ||rhs||_2`` (the gradient of J); negative curvature reports
    ``convex=False`` with a :class:`NonConvexObjectiveWarning`.  MINRES is slow when K is
    ill-conditioned (cond(H) grows like cond(K)): it is a fallback, not the main path.

    Parameters
    ----------
    K : ndarray of shape (n, n) or operator
        Symmetric PSD Gram matrix, or any object with ``.shape`` and ``K @ V`` for V of shape
        (n,) or (n, k) (a LinearOperator, :class:`GramOperator`).
    Y : ndarray of shape (n, n_outputs) or (n,)
        Targets (rows with zero loss weight are ignored).
    loss_weights : ndarray of shape (n,)
        Non-negative ``c_i`` (``1/l`` on labeled rows, 0 on unlabeled ones).
    penalty : sparse matrix, ndarray, LinearOperator or None
        Symmetric ``M`` (n x n) acting on ``F``.
    ridge : float
        Weight ``>= 0`` of the RKHS norm ``alpha^T K alpha``.
    fit_intercept : bool, default=False
        Add the unpenalised bias ``b``.
    tol : float, default=1e-6
        Relative tolerance on the preconditioned residual norm above (for a MINRES fallback
        on ``||rhs - H x||_2 / ||rhs||_2``).
    max_iter : int or None, default=None
        Iteration cap per column for PCG and again for a MINRES fallback; default
        ``10 * (n + fit_intercept)``.
    x0 : ndarray of shape (n, n_outputs), or (n + 1, n_outputs) with the intercept last
        Starting ``alpha`` (and ``b``); default zero.

    Returns
    -------
    KernelLeastSquaresSolution
        ``dual_coef`` and ``fitted`` of shape (n, n_outputs) (also for a 1-D Y), ``intercept``
        of shape (n_outputs,), ``method``, ``n_iter``, ``converged`` and ``convex``.
    """
    n = K.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K must be square, got shape {K.shape}")
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[:, None]
    c = np.asarray(loss_weights, dtype=float).ravel()
    if Y.shape[0] != n or c.shape != (n,):
        raise ValueError(f"Y {Y.shape} and loss_weights {c.shape} must have {n} rows")
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("loss_weights must be finite and non-negative")
    if not ridge >= 0:
        raise ValueError(f"ridge must be non-negative, got {ridge}")
    k = Y.shape[1]
    fi = bool(fit_intercept)
    max_iter = 10 * (n + fi) if max_iter is None else int(max_iter)

    def apply_A(U):  # (C + M) U
        return c[:, None] * U + penalty_products(penalty, U)

    s = float(np.sum(apply_A(np.ones((n, 1))))) if fi else 1.0
    s = s if s > 0 else 1.0
    CY = c[:, None] * Y

    # --- initial state --------------------------------------------------------------------
    b = np.zeros(k)
    if x0 is None:
        alpha = np.zeros((n, k))
        F = np.zeros((n, k))
        z = CY.copy()
        Kz = _kprod(K, z)  # product 1
        KCY = Kz
    else:
        x0 = np.asarray(x0, dtype=float).reshape(-1, k)
        if x0.shape[0] not in (n, n + fi):
            raise ValueError(f"x0 must have {n} (or {n + fi}) rows, got {x0.shape[0]}")
        alpha = x0[:n].copy()
        if x0.shape[0] == n + 1 and fi:
            b = x0[n].copy()
        both = _kprod(K, np.hstack([alpha, CY]))  # product 1
        F, KCY = both[:, :k] + b, both[:, k:]
        z = CY - apply_A(F) - ridge * alpha
        Kz = _kprod(K, z)  # product 2
    zb = (CY.sum(0) - apply_A(F).sum(0)) / s if fi else np.zeros(k)
    rho = np.einsum("ij,ij->j", z, Kz) + s * zb**2
    rho_ref = np.einsum("ij,ij->j", CY, KCY) + (CY.sum(0) ** 2 / s if fi else 0.0)
    p, Kp, pb = z.copy(), Kz.copy(), zb.copy()

    zero_rhs = rho_ref <= 0  # C Y = 0: the zero function is the solution
    alpha[:, zero_rhs], F[:, zero_rhs], b[zero_rhs] = 0.0, 0.0, 0.0
    z[:, zero_rhs], Kz[:, zero_rhs], zb[zero_rhs] = 0.0, 0.0, 0.0
    iters = np.zeros(k, dtype=int)
    converged = zero_rhs | (rho <= tol**2 * rho_ref)
    fallback = np.zeros(k, dtype=bool)  # columns to finish with MINRES
    negative = False
    active = ~converged

    # --- block PCG: one product with K per iteration over the active columns -------------
    while active.any() and iters[active].max() < max_iter:
        j = np.flatnonzero(active)
        U = Kp[:, j] + pb[j] if fi else Kp[:, j]
        W = apply_A(U)
        uw = np.einsum("ij,ij->j", U, W)
        pKp = np.einsum("ij,ij->j", p[:, j], Kp[:, j])
        curv = uw + ridge * pKp
        # rounding level of the computed curvature: below it the sign is not known
        rnd = (
            64
            * np.finfo(float).eps
            * (
                np.linalg.norm(U, axis=0) * np.linalg.norm(W, axis=0)
                + ridge * np.linalg.norm(p[:, j], axis=0) * np.linalg.norm(Kp[:, j], axis=0)
            )
        )
        bad = curv <= rnd
        if bad.any():
            negative |= bool(np.any(curv[bad] < -rnd[bad]))
            fallback[j[bad]] = True
            active[j[bad]] = False
            j, U, W, curv = j[~bad], U[:, ~bad], W[:, ~bad], curv[~bad]
            if j.size == 0:
                continue
        a = rho[j] / curv
        alpha[:, j] += a * p[:, j]
        F[:, j] += a * U
        z[:, j] -= a * (W + ridge * p[:, j])
        if fi:
            b[j] += a * pb[j]
            zb[j] -= a * W.sum(0) / s
        Kz[:, j] = _kprod(K, z[:, j])  # the one product with K
        rho_new = np.einsum("ij,ij->j", z[:, j], Kz[:, j]) + s * zb[j] ** 2
        beta = rho_new / rho[j]
        rho[j] = rho_new
        p[:, j] = z[:, j] + beta * p[:, j]
        Kp[:, j] = Kz[:, j] + beta * Kp[:, j]
        pb[j] = zb[j] + beta * pb[j]
        iters[j] += 1
        done = rho_new <= tol**2 * rho_ref[j]
        converged[j[done]] = True
        active[j[done]] = False

    # --- MINRES fallback on the symmetric system, column by column -----------------------
    for col in np.flatnonzero(fallback):
        rhs = np.concatenate([KCY[:, col], [CY[:, col].sum()]]) if fi else KCY[:, col]
        start = np.concatenate([alpha[:, col], [b[col]]]) if fi else alpha[:, col]
        x, used, converged[col] = _minres(K, apply_A, ridge, fi, rhs, start, tol, max_iter)
        iters[col] += used
        alpha[:, col] = x[:n]
        b[col] = x[n] if fi else 0.0
        F[:, col] = _kprod(K, alpha[:, col]) + b[col]

    if not converged.all():
        warnings.warn(
            f"kernel least squares did not reach tol={tol} in max_iter={max_iter} iterations "
            f"for {int((~converged).sum())} of {k} output column(s)",
            ConvergenceWarning,
            stacklevel=2,
        )
    if negative:
        warn_nonconvex("negative curvature met by preconditioned conjugate gradients")
        convex = False
    else:
        convex = True if penalty is None else None
    return KernelLeastSquaresSolution(
        dual_coef=alpha,
        intercept=b,
        fitted=F,
        method="minres" if fallback.any() else "pcg",
        n_iter=int(iters.max()) if k else 0,
        converged=bool(converged.all()),
        convex=convex,
    )
