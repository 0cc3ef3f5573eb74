"""Factor once, solve many: the square-loss normal equations along a grid of weights.

The problem of :mod:`structreg.solvers.square` with several weighted penalties,

    J(theta, b) = sum_i c_i ||a_i x - Y_i||^2 + ridge ||theta||^2 + sum_k w_k tr(F^T M_k F),
    A = [Z, 1] (or Z),  x = [theta; b],  F = A x,

has the normal equations ``(G + sum_k w_k P_k + ridge D) x = r`` with the parts

    G = A^T C A,   P_k = A^T M_k A,   r = A^T C Y,   D = diag(1, ..., 1, 0),

which do not depend on ``(ridge, w)``.  :class:`SquareLossPath` assembles them once (the
expensive O(n q^2 + nnz(M) q) step) and then solves any ``(ridge, w)`` in O(q^3):

* :meth:`SquareLossPath.solve` -- one setting, by the same rule as a single fit (Cholesky when
  the system is safely positive definite, Bunch-Kaufman when it is safely nonsingular, else
  the eigendecomposition with a pseudo-inverse; see
  :func:`~structreg.solvers.square.solve_symmetric`);
* :meth:`SquareLossPath.ridge_path` -- many ridges at fixed penalty weights from ONE symmetric
  eigendecomposition (the spectral shortcut of scikit-learn's ``RidgeCV``) when there are
  enough of them to pay for it, else one factorisation per ridge.  The unpenalised
  bias is eliminated first by its Schur complement, which is exact when its diagonal entry
  ``1^T (C + sum_k w_k M_k) 1`` is positive (always with loss weights on at least one sample
  and penalties that annihilate constants); otherwise every ridge is solved directly.

Indefinite penalties (a subtracted between-class term) are allowed: a setting whose system
has a negative eigenvalue reports ``convex=False`` and gets the stationary point (a saddle);
a singular one gets the minimum-norm solution, exactly as in a single fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg import eigh

from .square import (
    LeastSquaresSolution,
    dense_array,
    design_penalty_gram,
    solve_symmetric,
    warn_nonconvex,
)

__all__ = ["EIGH_PER_CHOLESKY", "SquareLossPath"]

EIGH_PER_CHOLESKY = 24
"""Ridges from which :meth:`SquareLossPath.ridge_path` prefers one eigendecomposition to a
Cholesky factorisation per ridge: LAPACK's symmetric eigensolver took 14-49 times a Cholesky
factorisation of the same matrix (q = 150..1500, one thread, this project's 2-core machines)."""


class SquareLossPath:
    """The parts of the square-loss normal equations, assembled once for many weights.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Design: explicit features or a kernel feature map.
    Y : ndarray of shape (n, n_outputs)
        Targets (rows with zero loss weight are ignored).
    loss_weights : ndarray of shape (n,)
        Non-negative ``c_i``.
    penalties : sequence of (sparse matrix, ndarray, LinearOperator or None)
        The symmetric ``M_k`` (n x n), unweighted; None entries contribute nothing.
    fit_intercept : bool, default=False
        Add the unpenalised bias ``b``.

    Attributes
    ----------
    gram_ : ndarray of shape (q, q)
        ``A^T C A``.
    projected_ : list of ndarray of shape (q, q)
        ``A^T M_k A`` per penalty.
    rhs_ : ndarray of shape (q, n_outputs)
        ``A^T C Y``.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.solvers import SquareLossPath, solve_penalized_least_squares
    >>> rng = np.random.default_rng(0)
    >>> Z, Y = rng.normal(size=(20, 3)), rng.normal(size=(20, 1))
    >>> c = np.full(20, 1 / 20)
    >>> path = SquareLossPath(Z, Y, c, fit_intercept=True)
    >>> sols = path.ridge_path([0.1, 1.0])
    >>> direct = solve_penalized_least_squares(Z, Y, c, ridge=1.0, fit_intercept=True)
    >>> bool(np.allclose(sols[1].coef, direct.coef))
    True
    """

    def __init__(
        self,
        Z,
        Y: np.ndarray,
        loss_weights: np.ndarray,
        penalties: Sequence = (),
        *,
        fit_intercept: bool = False,
    ) -> None:
        Z = dense_array(Z)
        Y = np.asarray(Y, dtype=float)
        c = np.asarray(loss_weights, dtype=float)
        n, p = Z.shape
        self.n_features_ = p
        self.fit_intercept = bool(fit_intercept)
        self.n_outputs_ = Y.shape[1]
        active = np.flatnonzero(c)
        Za, ca = Z[active], c[active]
        q = p + int(fit_intercept)
        G = np.zeros((q, q))
        G[:p, :p] = Za.T @ (ca[:, None] * Za)
        CY = ca[:, None] * Y[active]
        rhs = Za.T @ CY
        if fit_intercept:
            G[:p, p] = G[p, :p] = Za.T @ ca
            G[p, p] = ca.sum()
            rhs = np.vstack([rhs, CY.sum(axis=0)])
        self.gram_ = G
        self.rhs_ = rhs
        self.projected_ = [
            design_penalty_gram(Z, M, fit_intercept=fit_intercept) for M in penalties
        ]

    # -- assembly ----------------------------------------------------------------------------
    def _weights(self, weights: Sequence[float] | None) -> list[float]:
        w = [1.0] * len(self.projected_) if weights is None else [float(v) for v in weights]
        if len(w) != len(self.projected_):
            raise ValueError(f"got {len(w)} penalty weights for {len(self.projected_)} penalties")
        return w

    def system(self, ridge: float, weights: Sequence[float] | None = None) -> np.ndarray:
        """The matrix ``H = G + sum_k w_k P_k + ridge D`` of one setting."""
        H = self._penalised(self._weights(weights))
        p = self.n_features_
        H[np.arange(p), np.arange(p)] += ridge
        return H

    def _penalised(self, weights: list[float]) -> np.ndarray:
        H = self.gram_.copy()
        for w, P in zip(weights, self.projected_, strict=True):
            if w != 0:
                H += w * P
        return H

    def _solution(self, x, how, convex, singular) -> LeastSquaresSolution:
        p = self.n_features_
        if self.fit_intercept:
            return LeastSquaresSolution(x[:p], x[p], how, convex, singular)
        return LeastSquaresSolution(x, np.zeros(self.n_outputs_), how, convex, singular)

    # -- solves ------------------------------------------------------------------------------
    def solve(
        self, ridge: float, weights: Sequence[float] | None = None, *, warn: bool = True
    ) -> LeastSquaresSolution:
        """Solve one setting ``(ridge, weights)`` (weights default to 1 for every penalty).

        Cholesky when the system is safely positive definite, else the eigendecomposition
        with a pseudo-inverse (stationary point; minimum-norm when singular).  ``warn``: issue
        :class:`~structreg.solvers.NonConvexObjectiveWarning` for a non-convex setting.
        """
        x, how, convex, singular = solve_symmetric(self.system(ridge, weights), self.rhs_)
        if warn and not convex:
            warn_nonconvex("the normal equations have a negative eigenvalue")
        return self._solution(x, how, convex, singular)

    def ridge_path(
        self,
        ridges: Sequence[float],
        weights: Sequence[float] | None = None,
        *,
        warn: bool = True,
        method: str = "auto",
    ) -> list[LeastSquaresSolution]:
        """Solve every ridge in ``ridges`` at fixed penalty ``weights``.

        ``method="eigh"``: one symmetric eigendecomposition serves every ridge
        (``factorization="eigh-path"``); eigenvalues of the ridge-shifted system within
        ``q eps max|lambda|`` of zero are treated as zero (minimum-norm solution, as in a single
        fit).  ``"factor"``: :meth:`solve` per ridge (a Cholesky or Bunch-Kaufman
        factorisation each).  ``"auto"``: an eigendecomposition costs about as much as
        :data:`EIGH_PER_CHOLESKY` such factorisations, so it is used for that many ridges or
        more, and as soon as one ridge's system is numerically singular (its single solve needs
        an eigendecomposition anyway); otherwise one factorisation per ridge.

        Returns one :class:`~structreg.solvers.LeastSquaresSolution` per ridge, in order.
        """
        if method not in ("auto", "eigh", "factor"):
            raise ValueError(f"method must be 'auto', 'eigh' or 'factor', got {method!r}")
        ridges = [float(r) for r in ridges]
        if method == "factor" or (method == "auto" and len(ridges) < EIGH_PER_CHOLESKY):
            out: list[LeastSquaresSolution] = []
            for i, ridge in enumerate(ridges):
                sol = self.solve(ridge, weights, warn=warn)
                if method == "auto" and sol.factorization == "eigh" and i + 1 < len(ridges):
                    return (
                        out
                        + [sol]
                        + self.ridge_path(ridges[i + 1 :], weights, warn=warn, method="eigh")
                    )
                out.append(sol)
            return out
        B = self._penalised(self._weights(weights))
        B = 0.5 * (B + B.T)
        p = self.n_features_
        r = self.rhs_
        if self.fit_intercept:
            b22 = B[p, p]
            scale = max(float(np.abs(B).max(initial=0.0)), 1e-300)
            if not b22 > (p + 1) * np.finfo(float).eps * scale:  # no Schur elimination
                return [self.solve(ridge, weights, warn=warn) for ridge in ridges]
            b12 = B[:p, p]
            S = B[:p, :p] - np.outer(b12, b12) / b22
            rt = r[:p] - np.outer(b12, r[p]) / b22
        else:
            S, rt = B, r
        lam, U = eigh(0.5 * (S + S.T), check_finite=False)
        Urt = U.T @ rt
        out = []
        any_nonconvex = False
        for ridge in ridges:
            shifted = lam + ridge
            top = float(np.abs(shifted).max(initial=0.0))
            tol = (p + int(self.fit_intercept)) * np.finfo(float).eps * max(top, 1e-300)
            keep = np.abs(shifted) > tol
            theta = U[:, keep] @ (Urt[keep] / shifted[keep][:, None])
            convex = bool(shifted.min(initial=np.inf) >= -tol)
            any_nonconvex |= not convex
            singular = bool(not keep.all())
            if self.fit_intercept:
                b = (r[p] - b12 @ theta) / b22
                x = np.vstack([theta, b[None, :]])
            else:
                x = theta
            out.append(self._solution(x, "eigh-path", convex, singular))
        if warn and any_nonconvex:
            warn_nonconvex("the normal equations have a negative eigenvalue")
        return out
