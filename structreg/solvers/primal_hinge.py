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

Solving the Newton systems
--------------------------
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
:func:`~structreg.solvers.factor.solve_symmetric` (eigh pseudo-inverse) and the solution
reports ``singular=True``.  This is Melacci & Belkin's "Newton with Cholesky rank-1
updates" variant in a form whose per-iteration cost does not depend on n or q.
Every hinge-loss estimator reaches this solver with a kernel feature map (q <= n or the m
Nystroem centres), where forming ``H_0`` once is what the Woodbury step needs anyway; there is
no matrix-free (truncated-Newton CG) variant.

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
from scipy.linalg import LinAlgWarning, solve
from sklearn.exceptions import ConvergenceWarning

from .design import dense_array as _dense
from .design import design_penalty_gram
from .factor import cholesky_solve, solve_symmetric

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
        Every column reached the active-set certificate before ``max_iter``.
    objective : ndarray of shape (k,)
        ``J`` at the solution, per column.
    active : ndarray of shape (n, k), bool
        ``c_i > 0 and y_i f_i < 1`` at the solution (the support vectors).
    n_iter_columns : ndarray of shape (k,)
        Newton iterations per column.
    stop_reason : list of str
        Per column: "active_set" (exact certificate), "stalled" (the line search made no
        progress) or "max_iter".
    factorization : {"woodbury", "cholesky", "eigh"}
        How the Newton systems were solved ("eigh": at least one needed the pseudo-inverse).
    singular : bool
        Some Newton system was numerically singular (pseudo-inverse).
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray
    active: np.ndarray
    n_iter_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    stop_reason: list = field(default_factory=list)
    factorization: str = "cholesky"
    singular: bool = False


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
    return X, objective, active, n_iter, reasons, how, singular


def solve_squared_hinge(
    Z,
    Y,
    loss_weights,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = True,
    max_iter: int = 100,
    factorization: str = "auto",
) -> SquaredHingeSolution:
    """Minimise ``sum_i c_i max(0, 1 - y_i f_i)^2 + ridge ||theta||^2 + f^T M f`` per column.

    ``f = Z theta + 1 b`` at all n training points; Newton / active-set iterations with exact
    line search (module docstring: algorithm, costs, stopping rule).

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
    max_iter : int
        Maximum Newton iterations per column (the method stops on the exact active-set
        certificate).
    factorization : {"auto", "woodbury", "cholesky"}
        The labeled-space low-rank update ("auto" when l + 1 < q) or a Cholesky factorisation
        of H_S each iteration (``A^T M A`` is formed once either way).

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
    if factorization not in ("auto", "woodbury", "cholesky"):
        raise ValueError(
            f"factorization must be 'auto', 'woodbury' or 'cholesky': {factorization!r}"
        )
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    design = _Design(Z, fit_intercept)
    out = _solve_direct(design, Y, c, penalty, float(ridge), max_iter, factorization)
    X, objective, active, n_iter, reasons, how, singular = out
    converged = all(r == "active_set" for r in reasons)
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
        factorization=how,
        singular=singular,
    )
