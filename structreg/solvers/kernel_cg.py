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
``K p`` by recurrence leaves ONE product with ``K`` per iteration (for all output columns at
once); the iteration is :func:`structreg.solvers.cg.conjugate_gradient` with the metric P.
``K`` may be a dense array or any operator with ``@`` (e.g. :class:`GramOperator`, which
never stores an n x n matrix when it would be too large).
This is the exact-kernel counterpart of the feature-map solver: no factorisation of ``K``
is needed, at the price of O(n^2) per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import KernelOperator as GramOperator
from .cg import conjugate_gradient
from .design import penalty_products
from .solution import warn_nonconvex

__all__ = ["GramOperator", "KernelLeastSquaresSolution", "solve_kernel_least_squares"]
# GramOperator is the kernel layer's one operator, structreg.kernels.KernelOperator: K @ V for
# K = k(X, X), stored when small, else recomputed in row blocks under the memory budget.


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
    docstring).  All output columns run as one block through
    :func:`~structreg.solvers.cg.conjugate_gradient` on ``N x = P^{-1} rhs`` with the metric
    ``P = blockdiag(K, s)``, ``s = 1^T (C + M) 1`` if positive else 1, and ``N = P^{-1} H``:
    ``N [p; p_b] = [w + ridge p; 1^T w / s]`` with ``w = (C + M)(K p + 1 p_b)``, so the one
    product with K per iteration is the metric's (``K p`` is kept by recurrence).

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

    def metric(V):  # P V = [K V_alpha; s V_b]: the one product with K
        top = _kprod(K, V[:n])
        return np.vstack([top, s * V[n:]]) if fi else top

    def apply(V, PV):  # N V = [A u + ridge V_alpha; 1^T A u / s],  u = K V_alpha + 1 V_b
        U = PV[:n] + V[n] if fi else PV
        W = apply_A(U)
        top = W + ridge * V[:n]
        return np.vstack([top, W.sum(0, keepdims=True) / s]) if fi else top

    rhs = np.vstack([CY, CY.sum(0, keepdims=True) / s]) if fi else CY
    start = None
    if x0 is not None:
        x0 = np.asarray(x0, dtype=float).reshape(-1, k)
        if x0.shape[0] not in (n, n + fi):
            raise ValueError(f"x0 must have {n} (or {n + fi}) rows, got {x0.shape[0]}")
        start = np.zeros((n + fi, k))
        start[: x0.shape[0]] = x0
    res = conjugate_gradient(apply, rhs, metric=metric, x0=start, tol=tol, max_iter=max_iter)
    alpha = res.x[:n]
    b = res.x[n].copy() if fi else np.zeros(k)
    if res.negative_curvature:
        warn_nonconvex("negative curvature met by preconditioned conjugate gradients")
        convex = False
    else:
        convex = True if penalty is None else None
    return KernelLeastSquaresSolution(
        dual_coef=alpha,
        intercept=b,
        fitted=_kprod(K, alpha) + b,
        method="minres" if res.minres.any() else "pcg",
        n_iter=res.n_iter,
        converged=res.converged,
        convex=convex,
    )
