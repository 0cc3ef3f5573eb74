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

Solving the normal equations
----------------------------
The normal equations are ``H [theta; b] = A^T C Y`` with ``A = [Z, 1]`` and the symmetric
``H = A^T (C + M) A + diag(ridge, ..., ridge, 0)``, a (p+1) x (p+1) matrix whatever n is.

* ``method="direct"`` assembles H and factors it (a one-point
  :class:`~structreg.solvers.SquareLossPath`): Cholesky when H is positive definite,
  Bunch-Kaufman when it is safely nonsingular but indefinite (an indefinite M, as DRLSC/GDR/LDR
  subtract a between-class term), else the eigendecomposition with a pseudo-inverse; the
  choice and its reasons are in :mod:`structreg.solvers.factor`.
* ``method="cg"`` never forms H: conjugate gradients with matrix-free products
  (:func:`_iterative`).

When H has a negative eigenvalue the objective is unbounded below and the stationary point is
a saddle -- this is what the papers' closed forms compute; the solution reports
``convex=False`` and a warning is issued.

A singular Gram matrix never reaches this routine: the feature map drops the null space.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# re-exported (imported "as" themselves): names defined here until the factorisations moved
# to solvers/factor.py, the assembly to solvers/design.py and the solution to
# solvers/solution.py, still importable from this module
from ..exceptions import NonConvexObjectiveWarning as NonConvexObjectiveWarning
from .cg import conjugate_gradient
from .design import dense_array, design_penalty_diagonal, penalty_products
from .design import design_penalty_gram as design_penalty_gram
from .factor import cholesky_attempt as cholesky_attempt
from .factor import cholesky_factor as cholesky_factor
from .factor import cholesky_solve as cholesky_solve
from .factor import eigh_factor as eigh_factor
from .factor import eigh_solve as eigh_solve
from .factor import inverse_quadratic_forms as inverse_quadratic_forms
from .factor import ldl_factor as ldl_factor
from .factor import ldl_solve as ldl_solve
from .factor import solve_symmetric as solve_symmetric
from .path import SquareLossPath
from .solution import LeastSquaresSolution, warn_nonconvex
from .solution import leave_one_out_outputs as leave_one_out_outputs


def _iterative(Z, c, penalty, ridge, fit_intercept, rhs, tol, max_iter, x0=None):
    """Matrix-free conjugate gradients on the normal equations ``H x = rhs``, all columns as
    one block through :func:`~structreg.solvers.cg.conjugate_gradient`, Jacobi-scaled: CG runs
    on ``D^{-1/2} H D^{-1/2} y = D^{-1/2} rhs``, ``x = D^{-1/2} y``, with ``D = |diag(H)|``
    (computed once in O(nnz(M) p + nnz(Z))).  Its stopping rule is therefore
    ``||D^{-1/2} (rhs - H x)||_2 <= tol ||D^{-1/2} rhs||_2``, and a column meeting non-positive
    curvature (an indefinite M) is finished by MINRES on the scaled system.

    Each product costs one pass over Z and one over M: O(nnz(Z) + nnz(M)) per iteration.
    Returns ``(x, factorization, convex, n_iter)``.
    """
    n, p = Z.shape
    size = p + int(fit_intercept)
    reg = np.full((size, 1), ridge)
    if fit_intercept:
        reg[-1] = 0.0
    # Jacobi scaling: |diag(H)|, diag(H)_j = sum_i c_i Z_ij^2 + (Z^T M Z)_jj + ridge
    sq = Z.multiply(Z) if sp.issparse(Z) else Z * Z
    diag = np.asarray(sq.T @ c).ravel() + ridge
    if fit_intercept:
        diag = np.concatenate([diag, [c.sum()]])
    diag += design_penalty_diagonal(Z, penalty, fit_intercept=fit_intercept)
    diag = np.abs(diag)
    diag[diag <= np.finfo(float).tiny] = 1.0
    scale = 1.0 / np.sqrt(diag)[:, None]

    def hessian(V):  # H V = A^T (C + M) A V + R V,  A = [Z, 1]
        F = dense_array(Z @ V[:p])
        if fit_intercept:
            F += V[p]
        G = c[:, None] * F + penalty_products(penalty, F)
        top = dense_array(Z.T @ G)
        out = np.vstack([top, G.sum(axis=0, keepdims=True)]) if fit_intercept else top
        return out + reg * V

    def apply(V, _):
        return scale * hessian(scale * V)

    start = None if x0 is None else x0 / scale
    res = conjugate_gradient(apply, scale * rhs, x0=start, tol=tol, max_iter=max_iter)
    how = "minres" if res.minres.any() else "cg"
    convex = False if res.negative_curvature else None
    return scale * res.x, how, convex, res.n_iter


def solve_penalized_least_squares(
    Z,
    Y: np.ndarray,
    loss_weights: np.ndarray,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = False,
    method: str = "direct",
    tol: float = 1e-8,
    max_iter: int | None = None,
    x0: np.ndarray | None = None,
    leverage_rows: np.ndarray | None = None,
) -> LeastSquaresSolution:
    """Minimise ``sum_i c_i ||z_i theta + b - Y_i||^2 + ridge ||theta||^2 + tr(F^T M F)``.

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
        Design: explicit features or a kernel feature map (sparse only with ``method="cg"``).
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
    method : {"direct", "cg"}
        ``"direct"`` factorises the (p+1) x (p+1) normal equations (module docstring);
        ``"cg"`` never forms them: conjugate gradients with matrix-free products
        (O(nnz(Z) + nnz(M)) each), switching to MINRES on non-positive curvature
        (:func:`structreg.solvers.cg.conjugate_gradient`, Jacobi-scaled).
    tol, max_iter : float, int
        Relative residual tolerance (of the Jacobi-scaled system) and iteration cap of the
        iterative method (default ``10 (p + fit_intercept)``); not reaching ``tol`` issues a
        ``ConvergenceWarning``.
    x0 : ndarray of shape (p, n_outputs), or (p + 1, n_outputs) with the intercept last
        Starting point of the iterative method (e.g. the solution at a neighbouring grid
        point: a warm start); ignored by ``"direct"``.
    leverage_rows : ndarray of int, optional
        ``"direct"`` only: also return the leverages ``h_i = c_i a_i^T H^{-1} a_i`` of these
        samples, from the factorisation of the solve (see
        :meth:`~structreg.solvers.SquareLossPath.solve`), from which
        ``leave_one_out_outputs`` gives their exact leave-one-out outputs.
    """
    Y = np.asarray(Y, dtype=float)
    c = np.asarray(loss_weights, dtype=float)
    if method == "cg":
        active = np.flatnonzero(c)  # only the labeled rows carry loss
        p = Z.shape[1]
        Z_act = Z[active]
        rhs = np.asarray(Z_act.T @ (c[active, None] * Y[active]))
        if fit_intercept:
            rhs = np.vstack([rhs, (c[active, None] * Y[active]).sum(axis=0)])
        start = None
        if x0 is not None:
            start = np.zeros((p + int(fit_intercept), Y.shape[1]))
            x0 = np.asarray(x0, dtype=float).reshape(-1, Y.shape[1])
            if x0.shape[0] not in (p, p + int(fit_intercept)):
                raise ValueError(f"x0 must have {p} (or {p + 1} with the intercept) rows")
            start[: x0.shape[0]] = x0
        x, how, convex, n_iter = _iterative(
            Z, c, penalty, ridge, fit_intercept, rhs, tol, max_iter, start
        )
        singular = False
        if convex is False:
            warn_nonconvex("negative curvature met by conjugate gradients")
        coef, intercept = (x[:p], x[p]) if fit_intercept else (x, np.zeros(Y.shape[1]))
        return LeastSquaresSolution(coef, intercept, how, convex, singular, n_iter)
    # the direct solve is a one-point path
    penalties = [] if penalty is None else [penalty]
    path = SquareLossPath(Z, Y, c, penalties, fit_intercept=fit_intercept)
    return path.solve(ridge, leverage_rows=leverage_rows)
