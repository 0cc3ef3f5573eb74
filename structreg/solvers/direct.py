"""The direct solve of one setting ``(ridge, w)`` of the square-loss normal equations.

``H x = r`` is solved by the rule of :func:`~structreg.solvers.factor.solve_symmetric`
(Cholesky, Bunch-Kaufman, then the eigendecomposition with a pseudo-inverse), with two
refinements that keep the numerical tests meaningful:

* without a ridge, a rank-deficient design makes H singular whatever the weights; the system
  is then solved on the complement of the design's null space
  (:mod:`structreg.solvers.complement`), factored when its reciprocal condition number
  exceeds :data:`PROJECTED_MIN_RCOND` (``factorization="projected-cholesky"`` /
  ``"projected-ldl"``), else through the eigendecomposition of H's restriction to its range;
* a ridge that dominates a rescaled system (a design far below unit scale) is solved in the
  original coordinates (:func:`_solve_unscaled`).

The Cholesky or Bunch-Kaufman factor can be kept for the leverages
``h_i = c_i a_i^T H^{-1} a_i`` of the exact leave-one-out outputs (:func:`leverages`).
"""

from __future__ import annotations

import numpy as np

from .design import add_weighted
from .factor import (
    cholesky_attempt,
    eigh_solve,
    inverse_quadratic_forms,
    ldl_solve,
    solve_symmetric,
)
from .normal_equations import NormalEquations

RIDGE_DOMINANT = 2.0**60
"""A ridge of the rescaled system above this is solved in the original coordinates
(:func:`_solve_unscaled`)."""

PROJECTED_MIN_RCOND = float(np.sqrt(np.finfo(float).eps))
"""Reciprocal condition number from which a system restricted to the complement of the
design's null space is factored (see :func:`solve_setting`).  Below it the restricted system
is nearly singular itself, its minimum-norm solution depends on which small eigenvalues count
as zero, and the eigendecomposition of the whole system decides as before."""


def solve_setting(
    equations: NormalEquations,
    ridge: float,
    weights: list[float],
    cholesky: bool = True,
    kept: dict | None = None,
) -> tuple:
    """Solve ``H x = r`` of one setting (``ridge`` as solved, divided by ``s^2``).

    ``solve_symmetric`` on ``H``, with one more step for systems without a ridge: when
    the design ``A`` has a numerical null space (e.g. the bias column lies in the span of
    a full-rank kernel factor), every ``A^T X A`` part vanishes on it, so H is singular
    whatever the weights, and its minimum-norm solution is the solution of the system
    restricted to the complement, ``x = V (V^T H V)^{-1} V^T r``, factored by Cholesky or
    Bunch-Kaufman when its reciprocal condition number exceeds
    :data:`PROJECTED_MIN_RCOND`.  V is scaled so that ``A V`` has orthonormal columns and
    the restricted parts are built once from ``A V`` itself
    (:meth:`~structreg.solvers.normal_equations.NormalEquations.complement`): the restricted
    system ``(AV)^T (C + sum_k w_k M_k) (AV)`` is then conditioned like the loss and
    penalties on the design's range, not squared by the spread of the design's singular
    values (a smooth kernel's factor spans 1e7 of them).  Without a ridge the complement is
    therefore looked for first (once per design), and H itself, singular then, is not
    factored; when the restricted system is numerically singular too, the pseudo-inverse of
    H comes from the eigendecomposition of H's restriction to its range ``U_+^T H U_+`` (the
    same spectrum, without forming H).  Otherwise Cholesky, Bunch-Kaufman on H, then the
    eigendecomposition with a pseudo-inverse, as
    :func:`~structreg.solvers.factor.solve_symmetric`.

    ``cholesky=False`` skips the Cholesky attempt (the caller knows the system is not
    positive definite).  Returns ``(x, factorization, convex, singular, not_pd)``, with
    ``not_pd`` True when a Cholesky factorisation met a non-positive pivot.  ``kept``: a
    dict that receives the Cholesky or Bunch-Kaufman factorisation (and the complement's
    basis V)."""
    gram, rhs = equations.gram, equations.rhs
    if gram.shape[0] == 0:
        return (*solve_symmetric(gram, rhs), False)
    complement = equations.complement() if ridge == 0 else None
    if complement is not None:  # singular on the design's null space, whatever the weights:
        V, G_r, P_r, r_r, root = complement  # no factorisation of H itself can pass its test
        if kept is not None:
            kept["complement"] = V
        if V.shape[1] == 0:
            raise ValueError(
                "the design's Gram matrix A^T A is numerically zero (its entries underflow "
                "float64), so the normal equations carry no information; rescale the design "
                "(e.g. to unit scale) or add a ridge"
            )
        H_r = add_weighted(G_r.copy(), weights, P_r)
        x_r, how, convex, not_pd = _factored(H_r, r_r, cholesky, kept, PROJECTED_MIN_RCOND)
        if x_r is not None:
            return V @ x_r, f"projected-{how}", convex, True, not_pd
        # H's minimum-norm solution lies in range(H), inside span(U_+) = range(A^T), and
        # U_+^T H U_+ = S H_r S with S = Lambda_+^(1/2): the eigendecomposition of that
        # restriction is H's own on its range, and H is never formed
        K = H_r * root[:, None] * root[None, :]
        z, psd, _ = eigh_solve(0.5 * (K + K.T), root[:, None] * r_r, gram.shape[0])
        return (V * root) @ z, "eigh", psd, True, not_pd
    H = equations.system(ridge, weights)
    H = 0.5 * (H + H.T)
    if kept is None and equations.scale != 1.0 and ridge > RIDGE_DOMINANT:
        return _solve_unscaled(equations, H, cholesky)
    x, how, convex, not_pd = _factored(H, rhs, cholesky, kept, None)
    if x is not None:
        return x, how, convex, False, not_pd
    x, psd, singular = eigh_solve(H, rhs)
    return x, "eigh", psd, singular, not_pd


def _factored(
    H: np.ndarray, rhs: np.ndarray, cholesky: bool, kept: dict | None, min_rcond: float | None
) -> tuple:
    """``(x, factorization, convex, not_pd)`` by Cholesky (unless ``cholesky=False``), else
    Bunch-Kaufman, each when H passes its condition test (``min_rcond``); ``x`` and the two
    next entries are None when neither did.  ``not_pd``: Cholesky met a non-positive pivot."""
    x, factored = cholesky_attempt(H, rhs, min_rcond, kept) if cholesky else (None, False)
    if x is not None:
        return x, "cholesky", True, False
    not_pd = cholesky and not factored
    ldl = ldl_solve(H, rhs, min_rcond, kept)
    if ldl is not None:
        return ldl[0], "ldl", ldl[1] == 0, not_pd
    return None, None, None, not_pd


def _solve_unscaled(equations: NormalEquations, H: np.ndarray, cholesky: bool) -> tuple:
    """:func:`solve_setting` of a ridge that dominates the rescaled system (a design far
    below unit scale): solved in the original coordinates, where that ridge is of the
    order of the intercept's block instead of ``1 / s^2`` times it, so that the tests for
    a safe pivot or a zero eigenvalue (relative to the largest entry) keep the intercept;
    the solution is returned in the rescaled coordinates."""
    p, s = equations.n_features, equations.scale
    H, rhs = equations.original(H), equations.original(equations.rhs)
    x, how, convex, singular = solve_symmetric(H, rhs)
    x = x.copy()
    x[:p] *= s  # [theta; b] -> [s theta; b]
    return x, how, convex, singular, cholesky and how != "cholesky"


def leverages(equations: NormalEquations, rows: np.ndarray, kept: dict) -> np.ndarray | None:
    """``h_i = c_i a_i^T H^{-1} a_i`` of the samples ``rows`` from the factorisation
    :func:`solve_setting` kept (``a_i`` and H restricted to the complement of the design's
    null space when the solve was, where every row lies, so Sherman-Morrison is exact
    there too); None when it kept none (a pseudo-inverse is no inverse)."""
    if "cholesky" not in kept and "ldl" not in kept:
        return None
    rows = np.asarray(rows, dtype=int)
    active, ca, _ = equations.loss_rows
    c = np.zeros(equations.Z.shape[0])
    c[active] = ca
    Zr = equations.Z[rows]
    if "complement" in kept:
        V, p = kept["complement"], equations.n_features
        B = Zr @ V[:p] + (V[p] if equations.fit_intercept else 0.0)
    else:
        B = np.hstack([Zr, np.ones((len(rows), 1))]) if equations.fit_intercept else Zr
    return c[rows] * inverse_quadratic_forms(kept, B)
