"""Primal Laplacian SVM with the squared hinge loss: finite Newton (active-set) method.

For a design ``Z`` (n x p) -- explicit features, the exact kernel feature map ``V`` with
``K = V V^T`` or a Nystroem map on m centres -- and one binary target column
``y_i in {-1, +1}`` on the labeled rows, the solver minimises

    J(theta, b) = sum_i c_i max(0, 1 - y_i f_i)^2 + ridge ||theta||^2 + f^T M f,
    f = Z theta + 1 b,

over all n training points (labeled and unlabeled), with loss weights ``c_i`` (``1/l`` on
labeled rows, 0 on unlabeled ones), a symmetric PSD structure penalty ``M`` and an optional
unpenalised bias ``b``.  Each column of ``Y`` is an independent binary problem (one-vs-rest is
done by the caller) with its own active set.

Factor conventions
------------------
* With ``Z = V``, ``theta = V^T alpha`` and ``||theta||^2 = alpha^T K alpha`` (the RKHS norm),
  so this is the LapSVM of Belkin, Niyogi & Sindhwani (2006) with the squared hinge:
  ``c_i = 1/l``, ``ridge = gamma_A``, ``M = gamma_I / n^2 * L``.
* Melacci & Belkin (2011) minimise ``1/2 (sum_{i in L} max(0, 1 - y_i f_i)^2 + gamma_A
  ||f||_K^2 + gamma_I f^T L f)``: the same minimiser with ``c_i = 1``, ``ridge = gamma_A``,
  ``M = gamma_I L``.
* There is no factor 1/2 in ``J``: its gradient is ``2 (H_S x - A_S^T C_S y_S)`` (below).
* With ``M = None`` this is the primal L2-SVM; ``J / (2 ridge)`` is liblinear's
  ``1/2 ||w||^2 + C sum_i max(0, 1 - y_i f_i)^2`` with ``C = 1 / (2 ridge l)``.

Newton / active-set iterations (Chapelle 2007; Keerthi & DeCoste 2006)
-----------------------------------------------------------------------
Write ``x = [theta; b]``, ``A = [Z, 1]`` (q = p + 1 columns; ``A = Z`` without intercept) and
``R = diag(ridge, ..., ridge, 0)``.  For the active set ``S = {labeled i : y_i f_i < 1}``,
``(1 - y_i f_i)^2 = (y_i - f_i)^2`` (as ``y_i^2 = 1``), so on the region where S is the
active set ``J`` is the quadratic with (generalised) Hessian ``2 H_S`` and Newton point

    H_S x_S = A_S^T C_S y_S,      H_S = H_0 + A_S^T C_S A_S,      H_0 = A^T M A + R.

Starting from ``x = 0`` (S = all labeled rows, i.e. the first step is LapRLSC) each iteration
computes ``x_S``; if the active set of ``x_S`` equals S, ``x_S`` is the exact minimiser of
``J`` (the gradient of J there is that of the quadratic, zero) and the method stops
("active_set" certificate, finite termination; points within 1e-9 of the margin may
disagree, as they add nothing to the gradient either way).  Otherwise it moves to the exact
minimiser of ``J`` on the segment ``[x, x_S]``: ``J`` restricted to a line is a convex
piecewise quadratic whose breakpoints are where a labeled point crosses the margin, minimised
exactly by sorting them (:func:`exact_line_search`).  Usually the step is 1 (Chapelle's full
Newton step); the line search is what guarantees monotone decrease and finite convergence.

``method="direct"``
    ``H_0`` is the same for every iteration and every column, so it is formed once, in row
    blocks of Z (:func:`design_penalty_gram`, O(n q^2 + nnz(M) q) flops and O(q^2 + block * q)
    memory).  The per-iteration solve is then a low-rank update in *labeled space*
    (``factorization="woodbury"``, chosen by ``"auto"`` when l + 1 < q): with
    ``G_0 = H_0 + tau e_b e_b^T`` (the bias made definite by ``tau = sum_i c_i``; a Laplacian
    gives ``1^T M 1 = 0``) factored once by Cholesky and ``W = G_0^{-1} U``,
    ``B = U^T W`` for ``U = [A_L^T, e_b]`` (shared by all columns), the Woodbury identity gives

        x_S = W (d - t),   (diag(1/c_S, -1/tau) + B_RR) t_R = B_R: d,   d = [C_S y_S; 0],

    with R = S plus the bias, i.e. an (|S| + 1)-square symmetric solve per iteration:
    O(|S|^3 + l q + q^2) instead of re-factoring the (q x q) H_S, O(|dS| q^2 + q^3/3) with
    H_S updated by the |dS| rows that entered or left S (``factorization="cholesky"``, used
    when l + 1 >= q or when G_0 is not safely positive definite).  The small system is
    singular exactly when H_S is (determinant lemma); then, and whenever H_S is not safely
    positive definite, that step is solved through
    :func:`~structreg.solvers.square.solve_symmetric` (eigh pseudo-inverse) and the solution
    reports ``singular=True``.  This is Melacci & Belkin's "Newton with Cholesky rank-1
    updates" variant in a form whose per-iteration cost does not depend on n or q.

``method="cg"`` (truncated Newton; ``A^T M A`` is never formed)
    Each Newton system is solved by preconditioned conjugate gradients, matrix-free (one
    product ``H_S V`` = two passes over Z and one over M, all columns at once), warm-started
    from the current iterate.  Preconditioner: ``P_S = D + A_S^T C_S A_S`` with D the
    diagonal of ``H_0`` (``ridge + diag(A^T M A)``, one pass over ``M Z`` in blocks), applied
    exactly through the Woodbury identity in |S|-space (O(q |S|) per application; by a q x q
    Cholesky factor of P_S when |S| >= q).  It removes
    the rank-|S| loss part, whose eigenvalues dominate ``H_S``.  (Melacci & Belkin precondition
    their nonlinear CG in the expansion coefficients alpha by K; in the feature coordinates
    theta = V^T alpha used here that preconditioning is already built in.)
    Early stopping: the inner PCG of outer step k stops when its residual, measured in the
    preconditioned norm ``||r||_* = sqrt(r^T P_S^{-1} r)`` (~ the square root of the gap of the
    quadratic model to its minimum), is below ``max(cg_tol ||b||_*, min(0.1, rho_k)
    ||r_0||_*)``, with ``r_0`` the residual of the warm start (minus half the gradient of J),
    ``b = A_S^T C_S y_S`` and ``rho_k = ||r_0||_* / ||b||_*``: loose solves while the active set
    still changes, quadratic forcing near the end.  The outer loop stops (i) on the active-set
    certificate above, accepted only if that inner solve reached ``cg_tol``, or (ii) on
    stability: the fraction of the n training points whose ``sign(f)`` changed since the
    previous outer iterate is <= tol and the relative decrease of J is <= tol (the
    outer-iteration analogue of Melacci & Belkin's stability check, which stops their
    nonlinear CG when fewer than 1.5 % of the unlabeled predictions changed over the last
    sqrt(n)/2 iterations), or (iii) after ``max_iter`` outer steps.

The caller guarantees that M is positive semi-definite (for an indefinite M the objective is
not convex and Newton's method is meaningless); a negative eigenvalue met on the way raises a
``ValueError``.  ``ridge > 0`` (or an M positive definite on the span of the design) makes
``H_S`` nonsingular, except in the bias direction when ``1^T M 1 = 0`` (a Laplacian) and no
labeled point is active; such a step takes the minimum-norm (pseudo-inverse) solution.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgWarning, cho_factor, cho_solve, solve
from sklearn.exceptions import ConvergenceWarning

from .square import (
    cholesky_solve,
    design_penalty_diagonal,
    design_penalty_gram,
    penalty_products,
    solve_symmetric,
)
from .square import (
    dense_array as _dense,
)

__all__ = [
    "SquaredHingeSolution",
    "exact_line_search",
    "solve_squared_hinge",
]

_MARGIN_TIE = 1e-9  # |1 - y f| below this: on the margin, in or out of S alike


def _same_active_set(S: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """Per column: the active set at ``margins`` (``y f``) equals S, up to points on the margin.

    A point with ``|1 - y_i f_i| <= 1e-9`` adds at most ``2e-9 c_i |a_i|`` to the gradient
    whether it is counted active or not, so rounding cannot make the certificate cycle.
    """
    differ = (margins < 1) != S
    return ~np.any(differ & (np.abs(1.0 - margins) > _MARGIN_TIE), axis=0)


@dataclass
class SquaredHingeSolution:
    """Result of :func:`solve_squared_hinge`.

    Attributes
    ----------
    coef : ndarray of shape (p, k)
    intercept : ndarray of shape (k,)
    n_iter : int
        Newton (outer) iterations, the maximum over the columns.
    converged : bool
        Every column stopped on its rule (active-set certificate, or stability for "cg")
        before ``max_iter``.
    objective : ndarray of shape (k,)
        ``J`` at the solution, per column.
    active : ndarray of shape (n, k), bool
        ``c_i > 0 and y_i f_i < 1`` at the solution (the support vectors).
    n_iter_columns : ndarray of shape (k,)
        Newton iterations per column.
    stop_reason : list of str
        Per column: "active_set" (exact certificate), "stable" (cg early stop), "stalled" (the
        line search made no progress) or "max_iter".
    method : {"direct", "cg"}
    factorization : {"woodbury", "cholesky", "eigh", "cg"}
        How the Newton systems were solved ("eigh": at least one needed the pseudo-inverse).
    singular : bool
        Some Newton system was numerically singular (pseudo-inverse / zero curvature in CG).
    cg_iter : ndarray of shape (k,) or None
        Total inner PCG iterations per column (``method="cg"``).
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray
    active: np.ndarray
    n_iter_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    stop_reason: list = field(default_factory=list)
    method: str = "direct"
    factorization: str = "cholesky"
    singular: bool = False
    cg_iter: np.ndarray | None = None


class _Design:
    """``A = [Z, 1]`` (or ``Z``) without ever materialising the ones column next to Z."""

    def __init__(self, Z, fit_intercept: bool):
        self.Z = Z
        self.fit_intercept = fit_intercept
        self.n, self.p = Z.shape
        self.q = self.p + int(fit_intercept)

    def dot(self, V: np.ndarray) -> np.ndarray:
        """``A V`` for V of shape (q, k)."""
        out = _dense(self.Z @ V[: self.p])
        return out + V[self.p] if self.fit_intercept else out

    def tdot(self, U: np.ndarray) -> np.ndarray:
        """``A^T U`` for U of shape (n, k)."""
        top = _dense(self.Z.T @ U)
        if not self.fit_intercept:
            return top
        return np.vstack([top, U.sum(axis=0, keepdims=True)])

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """Dense ``A[idx]``."""
        Zi = _dense(self.Z[idx])
        return np.hstack([Zi, np.ones((len(idx), 1))]) if self.fit_intercept else Zi


def exact_line_search(
    margins: np.ndarray, step_margins: np.ndarray, weights: np.ndarray, q1: float, q2: float
) -> float:
    """Exact minimiser over ``t >= 0`` of a convex piecewise quadratic.

    ``phi(t) = sum_i w_i max(0, 1 - m_i - t mu_i)^2 + 2 q1 t + q2 t^2`` (``m = y f``,
    ``mu = y Delta f``); ``phi'(t) / 2 = q1 + t q2 + sum_{m_i + t mu_i < 1} w_i mu_i
    (m_i + t mu_i - 1)`` is continuous and non-decreasing.  The breakpoints
    ``t_i = (1 - m_i) / mu_i > 0`` are sorted and swept with cumulative sums: O(l log l).

    Returns
    -------
    t : float
        The minimiser (0 if ``phi`` does not decrease along the direction).
    """
    m, mu, w = (np.asarray(a, dtype=float) for a in (margins, step_margins, weights))
    slack = 1.0 - m
    act = (slack > 0) | ((slack == 0) & (mu < 0))  # active just after t = 0
    a0 = q1 - np.sum(w[act] * mu[act] * slack[act])
    b0 = q2 + np.sum(w[act] * mu[act] ** 2)
    nz = mu != 0
    tb = np.full(m.shape, -1.0)
    tb[nz] = slack[nz] / mu[nz]
    tog = np.flatnonzero(nz & (tb > 0))
    order = tog[np.argsort(tb[tog], kind="stable")]
    sgn = -np.sign(mu[order])  # mu > 0: leaves the active set at t_i; mu < 0: enters it
    a = np.concatenate([[a0], a0 - np.cumsum(sgn * w[order] * mu[order] * slack[order])])
    b = np.concatenate([[b0], b0 + np.cumsum(sgn * w[order] * mu[order] ** 2)])
    left = np.concatenate([[0.0], tb[order]])
    right = np.concatenate([tb[order], [np.inf]])
    with np.errstate(invalid="ignore", over="ignore"):
        slope_right = np.where(np.isinf(right), np.where(b > 0, np.inf, a), a + b * right)
    ok = np.flatnonzero(slope_right >= 0)
    if ok.size == 0:  # phi decreases without bound (not for a convex J with q2 > 0)
        return 1.0
    j = ok[0]
    return float(max(left[j], -a[j] / b[j])) if b[j] > 0 else float(left[j])


def _nonconvex() -> ValueError:
    return ValueError(
        "the squared-hinge Newton system has a negative eigenvalue: the structure penalty is "
        "not positive semi-definite, so the objective is not convex. Use a PSD penalty "
        "(e.g. a graph Laplacian) or the square-loss solver for indefinite ones."
    )


class _LabeledSpaceNewton:
    """Newton points ``H_S^{-1} A_S^T C_S y_S`` through the Woodbury identity (module doc)."""

    def __init__(self, H0: np.ndarray, AL: np.ndarray, cL: np.ndarray, fit_intercept: bool):
        n_lab, q = AL.shape
        self.l, self.cL, self.fit_intercept = n_lab, cL, fit_intercept
        self.tau = float(cL.sum()) if n_lab else 1.0
        G0 = H0.copy()
        U = AL.T
        if fit_intercept:
            G0[-1, -1] += self.tau
            U = np.hstack([U, np.eye(q, 1, -(q - 1))])  # last column: e_b
        self.W = cholesky_solve(G0, U)
        self.ok = self.W is not None
        if self.ok:
            B = U.T @ self.W
            self.B = 0.5 * (B + B.T)

    def point(self, S: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        r = self.l + int(self.fit_intercept)
        R = np.flatnonzero(S)
        d_inv = 1.0 / self.cL[R]
        if self.fit_intercept:
            R = np.append(R, self.l)
            d_inv = np.append(d_inv, -1.0 / self.tau)
        dy = np.zeros(r)
        dy[: self.l][S] = self.cL[S] * y[S]
        t = np.zeros(r)
        if R.size:
            K = self.B[np.ix_(R, R)]
            K[np.diag_indices_from(K)] += d_inv
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", LinAlgWarning)
                    t[R] = solve(K, self.B[R] @ dy, assume_a="sym", check_finite=False)
            except (np.linalg.LinAlgError, LinAlgWarning):
                return None  # H_S (numerically) singular: the caller uses the pseudo-inverse
        return self.W @ (dy - t)


class _FullNewton:
    """Newton points by factoring ``H_S = H_0 + A_S^T C_S A_S`` (q x q) each iteration.

    ``H_S`` is kept from one iteration to the next and only the rows that entered or left
    S are added / subtracted: O(|dS| q^2) instead of O(|S| q^2), plus the O(q^3 / 3)
    Cholesky.  It is rebuilt from ``H_0`` when that is not cheaper (|dS| >= |S|), which also
    bounds the rounding drift of the downdates.
    """

    def __init__(self, H0: np.ndarray, AL: np.ndarray, cL: np.ndarray):
        self.H0, self.AL, self.cL = H0, AL, cL
        self.S = np.zeros(AL.shape[0], dtype=bool)
        self.H = H0.copy()

    def _add(self, rows: np.ndarray, sign: float) -> None:
        if rows.any():
            Ar = self.AL[rows]
            self.H += sign * (Ar.T @ (self.cL[rows, None] * Ar))

    def point(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
        """Returns ``(x_S, pseudo_inverse_used)``."""
        entered, left = S & ~self.S, self.S & ~S
        if entered.sum() + left.sum() >= S.sum():
            self.H = self.H0.copy()
            self._add(S, 1.0)
        else:
            self._add(entered, 1.0)
            self._add(left, -1.0)
        self.S = S.copy()
        rhs = (self.AL[S].T @ (self.cL[S] * y[S]))[:, None]
        x = cholesky_solve(self.H, rhs)
        if x is not None:
            return x[:, 0], False
        x, _, psd, _ = solve_symmetric(self.H, rhs)
        if not psd:
            raise _nonconvex()
        return x[:, 0], True


def _solve_direct(design, Y, c, penalty, ridge, max_iter, factorization):
    n, k = Y.shape
    p, q = design.p, design.q
    lab = np.flatnonzero(c > 0)
    AL, cL, YL = design.rows(lab), c[lab], Y[lab]
    H0 = design_penalty_gram(design.Z, penalty, fit_intercept=design.fit_intercept)
    H0[np.arange(p), np.arange(p)] += ridge
    woodbury = None
    if factorization == "woodbury" or (factorization == "auto" and lab.size + 1 < q):
        woodbury = _LabeledSpaceNewton(H0, AL, cL, design.fit_intercept)
        if not woodbury.ok:
            woodbury = None
    how = "woodbury" if woodbury is not None else "cholesky"
    singular = False
    X = np.zeros((q, k))
    n_iter = np.zeros(k, dtype=int)
    reasons = []
    for j in range(k):
        y = YL[:, j]
        x, fL = np.zeros(q), np.zeros(lab.size)
        S = y * fL < 1
        reason = "max_iter"
        full = None
        while n_iter[j] < max_iter:
            n_iter[j] += 1
            xN = woodbury.point(S, y) if woodbury is not None else None
            if xN is None:
                full = _FullNewton(H0, AL, cL) if full is None else full
                xN, pinv = full.point(S, y)
                if pinv:
                    singular, how = True, "eigh"
            fN = AL @ xN
            if _same_active_set(S, y * fN):  # x_S is the exact minimiser of J
                x, fL, reason = xN, fN, "active_set"
                break
            d, df = xN - x, fN - fL
            Hd = H0 @ d
            t = exact_line_search(y * fL, y * df, cL, float(x @ Hd), float(d @ Hd))
            if not t > 0:
                reason = "stalled"
                break
            x, fL = x + t * d, fL + t * df
            S = y * fL < 1
        X[:, j] = x
        reasons.append(reason)
    FL = AL @ X
    objective = np.sum(cL[:, None] * np.maximum(0.0, 1.0 - YL * FL) ** 2, axis=0)
    objective += np.einsum("ij,ij->j", X, H0 @ X)
    active = np.zeros((n, k), dtype=bool)
    active[lab] = YL * FL < 1
    return X, objective, active, n_iter, reasons, how, singular, None


class _LowRankPreconditioner:
    """``P_S^{-1}`` for ``P_S = D + U U^T``, ``U = A_S^T C_S^{1/2}``, per column.

    Through the Woodbury identity in |S|-space when |S| < q (O(q |S|) per application),
    else by a Cholesky factor of the (q x q) ``P_S`` (O(q^2) per application).
    """

    def __init__(self, dg: np.ndarray, AL: np.ndarray, cL: np.ndarray, S: np.ndarray):
        self.dg = dg
        self.parts = []
        q = dg.size
        for j in range(S.shape[1]):
            idx = np.flatnonzero(S[:, j])
            if idx.size >= q:
                AS = AL[idx]
                P = AS.T @ (cL[idx, None] * AS)
                P[np.diag_indices_from(P)] += dg
                self.parts.append(("dense", cho_factor(P), None))
                continue
            U = AL[idx].T * np.sqrt(cL[idx])
            DU = U / dg[:, None]
            K = U.T @ DU
            K[np.diag_indices_from(K)] += 1.0
            self.parts.append((U, DU, cho_factor(K) if idx.size else None))

    def __call__(self, Rm: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = Rm / self.dg[:, None]
        for i, j in enumerate(cols):
            U, DU, chol = self.parts[j]
            if isinstance(U, str):
                out[:, i] = cho_solve(DU, Rm[:, i])
            elif chol is not None:
                out[:, i] -= DU @ cho_solve(chol, U.T @ out[:, i])
        return out


def _block_pcg(hess, B, X0, precond, cg_tol, max_iter, hscale, eta_max=0.1):
    """PCG on the k independent SPD systems ``H_j x_j = b_j`` (columns), products in blocks.

    Residuals are measured in the preconditioned norm ``||r||_* = sqrt(r^T P^{-1} r)``
    (computed by PCG anyway): with ``P ~ H``, ``||r||_*^2 ~ r^T H^{-1} r`` is the gap of the
    quadratic model to its minimum, so the test tracks objective accuracy even when H is badly
    conditioned (tiny ridge), where ``||r||_2`` does not.  Column j stops at
    ``||r||_* <= max(cg_tol ||b_j||_*, eta_j ||r_0||_*)`` with the forcing term
    ``eta_j = min(eta_max, ||r_0||_* / ||b_j||_*)`` (r_0: residual of the warm start, i.e. minus
    half the gradient of J; quadratic forcing).  Returns ``(X, iterations, relative_residual,
    zero_curvature)``.  The target is floored at machine precision, ``eps ||b_j||_*``; a
    direction with ``p^T H p <= eps * hscale * ||p||^2`` (hscale ~ the largest diagonal entry
    of H) counts as zero curvature (H singular along it) and ends that column.
    """
    eps = np.finfo(float).eps
    k = B.shape[1]
    every = np.arange(k)
    X = X0.copy()
    Rm = B - hess(X, every)
    bPb = np.einsum("ij,ij->j", B, precond(B, every))
    bPb[~(bPb > 0)] = 1.0
    Zr = precond(Rm, every)
    rz = np.einsum("ij,ij->j", Rm, Zr)
    rel = np.sqrt(np.maximum(rz, 0.0) / bPb)
    target = np.maximum(max(cg_tol, eps), np.minimum(eta_max, rel) * rel) ** 2 * bPb  # r'P^-1 r
    iters = np.zeros(k, dtype=int)
    zero_curv = False
    live = np.flatnonzero(rz > target)
    P = Zr
    while live.size and iters[live].max() < max_iter:
        HP = hess(P[:, live], live)
        pHp = np.einsum("ij,ij->j", P[:, live], HP)
        if np.any(pHp < 0):
            raise _nonconvex()
        flat = pHp <= eps * hscale * np.einsum("ij,ij->j", P[:, live], P[:, live])
        zero_curv |= bool(flat.any())
        alpha = np.where(flat, 0.0, rz[live] / np.where(flat, 1.0, pHp))
        X[:, live] += alpha * P[:, live]
        Rm[:, live] -= alpha * HP
        iters[live] += 1
        Zr = precond(Rm[:, live], live)
        rz_new = np.einsum("ij,ij->j", Rm[:, live], Zr)
        beta = rz_new / rz[live]
        rz[live] = rz_new
        keep = (rz_new > target[live]) & ~flat
        P[:, live[keep]] = Zr[:, keep] + beta[keep] * P[:, live[keep]]
        live = live[keep]
    return X, iters, np.sqrt(np.maximum(rz, 0.0) / bPb), zero_curv


def _solve_cg(design, Y, c, penalty, ridge, tol, max_iter, cg_tol, cg_max_iter):
    n, k = Y.shape
    p, q = design.p, design.q
    lab = np.flatnonzero(c > 0)
    AL, cL, YL = design.rows(lab), c[lab], Y[lab]

    dg = design_penalty_diagonal(design.Z, penalty, fit_intercept=design.fit_intercept)
    dg[:p] += ridge
    scale = max(float(dg.max()), float(cL.sum()), np.finfo(float).tiny)
    if design.fit_intercept:  # 1^T M 1 = 0 for a Laplacian: give the bias the loss scale
        dg[p] = max(dg[p], 0.5 * float(cL.sum()))
    dg = np.maximum(dg, 1e-12 * scale)
    scale = max(scale, float(np.max(np.sum(cL[:, None] * AL**2, axis=0), initial=0.0)))

    def penalty_and_loss(FV, S_cols):
        E = penalty_products(penalty, FV)
        E[lab] += cL[:, None] * S_cols * FV[lab]
        return E

    X = np.zeros((q, k))
    F = np.zeros((n, k))
    MF = np.zeros((n, k))

    def objective(X, F, MF, cols):
        loss = np.sum(cL[:, None] * np.maximum(0.0, 1.0 - YL[:, cols] * F[lab]) ** 2, axis=0)
        return loss + ridge * np.sum(X[:p] ** 2, axis=0) + np.einsum("ij,ij->j", F, MF)

    J = objective(X, F, MF, np.arange(k))
    signs = np.sign(F)
    n_iter = np.zeros(k, dtype=int)
    cg_iter = np.zeros(k, dtype=int)
    reasons = ["max_iter"] * k
    live = np.arange(k)
    singular = False
    for _ in range(max_iter):
        if not live.size:
            break
        S = YL[:, live] * F[lab][:, live] < 1
        V = AL.T @ (cL[:, None] * YL[:, live] * S)
        precond = _LowRankPreconditioner(dg, AL, cL, S)

        def hess(Vc, cols, S=S):
            out = design.tdot(penalty_and_loss(design.dot(Vc), S[:, cols]))
            out[:p] += ridge * Vc[:p]
            return out

        XN, its, relres, flat = _block_pcg(
            hess, V, X[:, live], precond, cg_tol, cg_max_iter, hscale=scale
        )
        singular |= flat
        cg_iter[live] += its
        n_iter[live] += 1
        D = XN - X[:, live]
        dF = design.dot(D)
        MdF = penalty_products(penalty, dF)
        FL, dFL, yl = F[lab][:, live], dF[lab], YL[:, live]
        certified = _same_active_set(S, yl * (FL + dFL)) & (relres <= cg_tol)
        t = np.ones(live.size)
        for i, j in enumerate(live):
            if certified[i]:
                continue
            q1 = ridge * X[:p, j] @ D[:p, i] + F[:, j] @ MdF[:, i]
            q2 = ridge * D[:p, i] @ D[:p, i] + dF[:, i] @ MdF[:, i]
            t[i] = exact_line_search(yl[:, i] * FL[:, i], yl[:, i] * dFL[:, i], cL, q1, q2)
        X[:, live] += t * D
        F[:, live] += t * dF
        MF[:, live] += t * MdF
        J_new = objective(X[:, live], F[:, live], MF[:, live], live)
        new_signs = np.sign(F[:, live])
        changed = np.mean(new_signs != signs[:, live], axis=0)
        decrease = (J[live] - J_new) / np.maximum(np.abs(J_new), np.finfo(float).tiny)
        stable = (changed <= tol) & (decrease <= tol)
        J[live], signs[:, live] = J_new, new_signs
        finished = np.zeros(live.size, dtype=bool)
        for i, j in enumerate(live):
            if certified[i]:
                reasons[j], finished[i] = "active_set", True
            elif not t[i] > 0:
                reasons[j], finished[i] = "stalled", True
            elif stable[i]:
                reasons[j], finished[i] = "stable", True
        live = live[~finished]
    F = design.dot(X)  # recompute from scratch: no drift from the incremental updates
    objective_final = objective(X, F, penalty_products(penalty, F), np.arange(k))
    active = np.zeros((n, k), dtype=bool)
    active[lab] = YL * F[lab] < 1
    return X, objective_final, active, n_iter, reasons, "cg", singular, cg_iter


def solve_squared_hinge(
    Z,
    Y,
    loss_weights,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = True,
    method: str = "direct",
    tol: float = 1e-6,
    max_iter: int = 100,
    cg_tol: float | None = None,
    cg_max_iter: int | None = None,
    factorization: str = "auto",
) -> SquaredHingeSolution:
    """Minimise ``sum_i c_i max(0, 1 - y_i f_i)^2 + ridge ||theta||^2 + f^T M f`` per column.

    ``f = Z theta + 1 b`` at all n training points; Newton / active-set iterations with exact
    line search (module docstring: algorithm, costs, preconditioner, stopping rules).

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
        Design: explicit features or a kernel feature map (``K = Z Z^T``).
    Y : array-like of shape (n, k) or (n,)
        +-1 targets on the labeled rows (rows with ``c_i = 0`` are ignored, e.g. 0); each
        column is an independent binary problem.
    loss_weights : array-like of shape (n,)
        Non-negative ``c_i``; the labeled rows are those with ``c_i > 0``.
    penalty : sparse matrix, ndarray, LinearOperator or None
        Symmetric positive semi-definite M (n x n) on ``f`` (caller's guarantee).
    ridge : float
        Weight of ``||theta||^2`` (the RKHS norm for a kernel feature map), >= 0.
    fit_intercept : bool
        Add the unpenalised bias b.
    method : {"direct", "cg"}
        ``"direct"``: ``A^T M A`` formed once, Newton systems by a labeled-space low-rank
        update or Cholesky.  ``"cg"``: matrix-free truncated Newton with PCG.
    tol : float
        ``"cg"``: stability rule -- stop when at most this fraction of the training points
        changed sign and J decreased by at most this relative amount.  ``"direct"`` stops on
        the exact active-set certificate only.
    max_iter : int
        Maximum Newton (outer) iterations per column.
    cg_tol : float or None
        Relative residual (preconditioned norm) at which PCG has solved a Newton system
        exactly enough for the certificate (default: ``tol``); earlier steps use a looser
        forcing term.  Default ``1e-3 * tol``: the preconditioned norm underestimates the error
        in Laplacian-smooth directions, where diag(H_0) overestimates the curvature (two moons,
        ridge 1e-6: cg_tol = 1e-6 left a 4e-5 relative objective error, 1e-8 one of 1e-12).
    cg_max_iter : int or None
        PCG iterations per Newton system (default q = p + fit_intercept).
    factorization : {"auto", "woodbury", "cholesky"}
        ``"direct"`` only: the labeled-space low-rank update ("auto" when l + 1 < q) or a
        Cholesky factorisation of H_S each iteration.

    Returns
    -------
    SquaredHingeSolution

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.solvers.primal_hinge import solve_squared_hinge
    >>> Z = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> sol = solve_squared_hinge(Z, y, np.full(4, 0.25), ridge=0.01)
    >>> bool(np.all(np.sign(Z @ sol.coef[:, 0] + sol.intercept[0]) == y)), sol.converged
    (True, True)
    """
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=float)
    else:
        Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2:
        raise ValueError(f"Z must be 2-D, got shape {Z.shape}")
    n, p = Z.shape
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"Y must have shape ({n}, k), got {Y.shape}")
    c = np.asarray(loss_weights, dtype=float).ravel()
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"loss_weights must be {n} finite non-negative numbers")
    lab = c > 0
    if not np.all(np.abs(Y[lab]) == 1):
        raise ValueError("Y must be -1 or +1 on every labeled row (loss weight > 0)")
    if not np.all(np.isfinite(Z.data if sp.issparse(Z) else Z)):
        raise ValueError("Z contains NaN or infinite values")
    if not (np.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge must be finite and >= 0, got {ridge!r}")
    if penalty is not None and tuple(penalty.shape) != (n, n):
        raise ValueError(f"penalty must have shape ({n}, {n}), got {penalty.shape}")
    if method not in ("direct", "cg"):
        raise ValueError(f"method must be 'direct' or 'cg', got {method!r}")
    if factorization not in ("auto", "woodbury", "cholesky"):
        raise ValueError(
            f"factorization must be 'auto', 'woodbury' or 'cholesky': {factorization!r}"
        )
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    design = _Design(Z, fit_intercept)
    if method == "direct":
        out = _solve_direct(design, Y, c, penalty, float(ridge), max_iter, factorization)
    else:
        cg_tol = 1e-3 * tol if cg_tol is None else cg_tol
        cg_max_iter = design.q if cg_max_iter is None else cg_max_iter
        if not cg_tol > 0 or not (isinstance(cg_max_iter, (int, np.integer)) and cg_max_iter >= 1):
            raise ValueError("cg_tol must be > 0 and cg_max_iter a positive integer")
        out = _solve_cg(design, Y, c, penalty, float(ridge), tol, max_iter, cg_tol, cg_max_iter)
    X, objective, active, n_iter, reasons, how, singular, cg_iter = out
    converged = all(r in ("active_set", "stable") for r in reasons)
    if not converged:
        warnings.warn(
            f"squared-hinge Newton did not converge in {max_iter} iterations "
            f"(stop reasons per column: {reasons})",
            ConvergenceWarning,
            stacklevel=2,
        )
    coef, intercept = (X[:p], X[p].copy()) if fit_intercept else (X, np.zeros(Y.shape[1]))
    return SquaredHingeSolution(
        coef=coef,
        intercept=intercept,
        n_iter=int(n_iter.max(initial=0)),
        converged=converged,
        objective=objective,
        active=active,
        n_iter_columns=n_iter,
        stop_reason=reasons,
        method=method,
        factorization=how,
        singular=singular,
        cg_iter=cg_iter,
    )
