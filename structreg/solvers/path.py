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
  :func:`~structreg.solvers.square.solve_symmetric`; without a ridge, a design with a null
  space -- the bias in the span of a full-rank kernel factor -- is solved on its range, in a
  basis that keeps the system as well conditioned as the loss and penalties);
* :meth:`SquareLossPath.ridge_path` -- many ridges at fixed penalty weights from ONE symmetric
  eigendecomposition (the spectral shortcut of scikit-learn's ``RidgeCV``) when there are
  enough of them to pay for it, else one factorisation per ridge.  The unpenalised
  bias is eliminated first by its Schur complement, which is exact when its diagonal entry
  ``1^T (C + sum_k w_k M_k) 1`` is positive (always with loss weights on at least one sample
  and penalties that annihilate constants); otherwise every ridge is solved directly.
* :meth:`SquareLossPath.solve_grid` -- a whole grid: the semi-supervised two-parameter grid
  from one eigendecomposition, ridge paths per weight setting, and single settings from the
  top of the Loewner order down: with the penalties declared PSD (``psd=``), a setting whose
  weights on them are no larger (and equal on the others) has ``H`` no larger, so once
  Cholesky's factorisation meets a non-positive pivot the settings below skip the attempt
  (DRLSC's ``eta`` weights ``eta P_w - (1 - eta) P_b``: one line, monotone in ``eta``).

Indefinite penalties (a subtracted between-class term) are allowed: a setting whose system
has a negative eigenvalue reports ``convex=False`` and gets the stationary point (a saddle);
a singular one gets the minimum-norm solution, exactly as in a single fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh

from .._numerics import far_scale
from .square import (
    LeastSquaresSolution,
    cholesky_attempt,
    dense_array,
    design_penalty_gram,
    eigh_solve,
    inverse_quadratic_forms,
    ldl_solve,
    solve_symmetric,
    warn_nonconvex,
)

__all__ = ["EIGH_PER_CHOLESKY", "RIDGE_PATH_MIN_RIDGES", "SquareLossPath"]

RIDGE_MAX = 1e250
"""Largest ridge of the solved (unit-scale) system: squares of it stay finite."""
RIDGE_DOMINANT = 2.0**60
"""A ridge of the rescaled system above this is solved in the original coordinates
(:meth:`SquareLossPath._solve_unscaled`)."""

EIGH_PER_CHOLESKY = 24
"""Settings from which :meth:`SquareLossPath.solve_grid` tries its one-eigendecomposition
grid: LAPACK's symmetric eigensolver took 14-49 times a Cholesky factorisation of the same
matrix (q = 150..1500, one thread, this project's 2-core machines)."""

RIDGE_PATH_MIN_RIDGES = 10
"""Ridges from which :meth:`SquareLossPath.ridge_path` (``method="auto"``) solves them all from
one eigendecomposition.  Lower than :data:`EIGH_PER_CHOLESKY`: a solve per ridge also pays the
assembly, the condition estimate and the bookkeeping of a point, O(q^2) each; the supervised
LapRLSC search of ``structreg reproduce drlsc`` (21 ridges per graph weight, q ~ 500) took
10-11.6 s with one eigendecomposition per graph weight against 15.6-16.1 s with a Cholesky
factorisation per ridge, choosing the same parameters."""


PROJECTED_MIN_RCOND = float(np.sqrt(np.finfo(float).eps))
"""Reciprocal condition number from which a system restricted to the complement of the
design's null space is factored (see ``SquareLossPath._solve_system``).  Below it the
restricted system is nearly singular itself, its minimum-norm solution depends on which small
eigenvalues count as zero, and the eigendecomposition of the whole system decides as before."""


def _weighted_gram(A: np.ndarray, c: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """``[A, 1]^T diag(c) [A, 1]`` (or ``A^T diag(c) A``), the ones column not formed."""
    p = A.shape[1]
    G = np.empty((p + int(fit_intercept),) * 2)
    G[:p, :p] = A.T @ (c[:, None] * A)
    if fit_intercept:
        G[:p, p] = G[p, :p] = A.T @ c
        G[p, p] = c.sum()
    return G


def _add_weighted(H: np.ndarray, weights, parts) -> np.ndarray:
    """``H += sum_k w_k parts_k`` in place (zero weights skipped); returns H."""
    for w, P in zip(weights, parts, strict=True):
        if w != 0:
            H += w * P
    return H


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
    design_cache : dict, optional
        Shared by paths built on the same design ``Z`` and ``fit_intercept`` (e.g. one kernel
        factor with several graphs): what depends on the design alone -- the basis of the
        complement of its null space, an eigendecomposition of ``A^T A`` -- is computed once,
        and so are the loss parts ``G``, ``r`` (and their restriction to that complement) of
        the paths with equal loss weights and targets.
    psd : sequence of bool, optional
        Which penalties are known to be positive semi-definite (default: none).  Along a grid,
        raising a PSD penalty's weight (or the ridge) can only raise H in the Loewner order;
        :meth:`solve_grid` uses it to skip Cholesky attempts that must fail.

    With ``fit_intercept`` and a design far from unit scale
    (:func:`~structreg._numerics.far_scale`), the system is assembled and solved for
    ``[s theta; b]`` on the design ``Z / s`` (``s`` a power of two near its largest entry,
    the ridge divided by ``s^2``): the same problem, whose numerical tests no longer depend on
    the scale of Z; the attributes, :meth:`system` and the solutions are in the original
    coordinates.  A singular system's minimum-norm solution is then minimum-norm in
    ``[s theta; b]``.

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
        design_cache: dict | None = None,
        psd: Sequence[bool] | None = None,
    ) -> None:
        Z = dense_array(Z)
        Y = np.asarray(Y, dtype=float)
        c = np.asarray(loss_weights, dtype=float)
        # with a bias, the rank and definiteness tests compare the features' part of the
        # system with the bias column's (of order 1): on the design at unit scale, so that
        # features of small scale (X * 1e-8: eigenvalues 1e-16 times the bias's) count
        self._scale = far_scale(Z) if fit_intercept else 1.0
        if self._scale != 1.0:
            Z = Z / self._scale  # solved for [s theta; b]: see the class docstring
        n, p = Z.shape
        self.n_features_ = p
        self.fit_intercept = bool(fit_intercept)
        self.n_outputs_ = Y.shape[1]
        active = np.flatnonzero(c)
        Za, ca = Z[active], c[active]
        q = p + int(fit_intercept)
        CY = ca[:, None] * Y[active]
        self._design_cache = {} if design_cache is None else design_cache
        self._loss = self._loss_parts(c, Y)
        if "gram" not in self._loss:
            rhs = Za.T @ CY
            if fit_intercept:
                rhs = np.vstack([rhs, CY.sum(axis=0)])
            self._loss["gram"] = _weighted_gram(Za, ca, fit_intercept)
            self._loss["rhs"] = rhs
        self._gram = self._loss["gram"]
        self._rhs = self._loss["rhs"]
        self._Z = Z
        # C^(1/2) Z, C^(1/2) 1, C^(1/2) Y on the rows with loss: the factors of G and r that
        # _spectral_grid needs, kept only where it can apply (few such rows), so a large
        # supervised fit holds no second copy of its design
        self._roots = None
        if len(active) + 2 <= q / 3:
            root = np.sqrt(ca)
            self._roots = (root[:, None] * Za, root, root[:, None] * Y[active])
        self._complement: tuple | None = None  # see _design_complement
        self._penalties = list(penalties)
        self._psd = [False] * len(self._penalties) if psd is None else [bool(v) for v in psd]
        if len(self._psd) != len(self._penalties):
            raise ValueError(
                f"psd has {len(self._psd)} entries for {len(self._penalties)} penalties"
            )
        self._loss_rows = (active, ca, CY)
        self._projected: list[np.ndarray] | None = None

    def _loss_parts(self, c: np.ndarray, Y: np.ndarray) -> dict:
        """The design cache's entry for these loss weights and targets (G, r and their
        restriction to the design's complement, filled on first use), found by value: paths on
        one design with other graphs share them, ones with other weights do not."""
        entries = self._design_cache.setdefault("loss_parts", [])
        for c0, Y0, parts in entries:
            if np.array_equal(c0, c) and np.array_equal(Y0, Y):
                return parts
        entries.append((c.copy(), Y.copy(), {}))
        return entries[-1][2]

    @property
    def _parts(self) -> list[np.ndarray]:
        """``A^T M_k A`` per penalty (of the design as solved), built on first use (a system
        solved on the complement of the design's null space never needs them)."""
        if self._projected is None:
            self._projected = [
                design_penalty_gram(self._Z, M, fit_intercept=self.fit_intercept)
                for M in self._penalties
            ]
        return self._projected

    # -- the original coordinates (the design scale s, see the class docstring) -------------
    def _original(self, A: np.ndarray) -> np.ndarray:
        """A (q, q) part of the solved system, or a (q, k) right-hand side, in the original
        coordinates: rows (and columns) of theta times s."""
        if self._scale == 1.0:
            return A
        p, s = self.n_features_, self._scale
        A = A.copy()
        A[:p] *= s
        if A.shape[1] == A.shape[0] and A.shape[0] == p + int(self.fit_intercept):
            A[:, :p] *= s
        return A

    def _ridge(self, ridge: float) -> float:
        """The ridge of the solved system: ``ridge / s^2``, at most ``RIDGE_MAX``.  A design
        far below unit scale (GRBFN's units of a narrow kernel, all below 1e-160) can make it
        overflow (``s^2`` underflowed to 0 before); then the features' share of the fit is
        below the rounding of the intercept either way, and the capped ridge gives that fit
        (theta ~ 0, the intercept alone)."""
        scaled = ridge / self._scale / self._scale
        return min(scaled, RIDGE_MAX) if ridge > 0 else scaled

    @property
    def gram_(self) -> np.ndarray:
        return self._original(self._gram)

    @property
    def rhs_(self) -> np.ndarray:
        return self._original(self._rhs)

    @property
    def projected_(self) -> list[np.ndarray]:
        return [self._original(P) for P in self._parts]

    # -- assembly ----------------------------------------------------------------------------
    def _weights(self, weights: Sequence[float] | None) -> list[float]:
        k = len(self._penalties)
        w = [1.0] * k if weights is None else [float(v) for v in weights]
        if len(w) != k:
            raise ValueError(f"got {len(w)} penalty weights for {k} penalties")
        return w

    def system(self, ridge: float, weights: Sequence[float] | None = None) -> np.ndarray:
        """The matrix ``H = G + sum_k w_k P_k + ridge D`` of one setting."""
        return self._original(self._system(self._ridge(ridge), self._weights(weights)))

    def _system(self, ridge: float, weights: list[float]) -> np.ndarray:
        """:meth:`system` as solved (``ridge`` already divided by ``s^2``)."""
        H = self._penalised(weights)
        p = self.n_features_
        H[np.arange(p), np.arange(p)] += ridge
        return H

    def _penalised(self, weights: list[float]) -> np.ndarray:
        return _add_weighted(self._gram.copy(), weights, self._parts)

    def _solution(self, x, how, convex, singular) -> LeastSquaresSolution:
        p = self.n_features_
        if self._scale != 1.0:
            x = np.vstack([x[:p] / self._scale, x[p:]])
        if self.fit_intercept:
            return LeastSquaresSolution(x[:p], x[p], how, convex, singular)
        return LeastSquaresSolution(x, np.zeros(self.n_outputs_), how, convex, singular)

    # -- solves ------------------------------------------------------------------------------
    def solve(
        self,
        ridge: float,
        weights: Sequence[float] | None = None,
        *,
        warn: bool = True,
        leverage_rows: np.ndarray | None = None,
    ) -> LeastSquaresSolution:
        """Solve one setting ``(ridge, weights)`` (weights default to 1 for every penalty).

        Cholesky when the system is safely positive definite, else the eigendecomposition
        with a pseudo-inverse (stationary point; minimum-norm when singular).  ``warn``: issue
        :class:`~structreg.solvers.NonConvexObjectiveWarning` for a non-convex setting.
        ``leverage_rows``: samples whose leverages ``c_i a_i^T H^{-1} a_i`` the solution also
        carries (``leverages``), from the same factorisation (one triangular solve each);
        None there when the system was singular.
        """
        w = self._weights(weights)
        kept: dict | None = None if leverage_rows is None else {}
        x, how, convex, singular, _ = self._solve_system(self._ridge(ridge), w, kept=kept)
        if warn and not convex:
            warn_nonconvex("the normal equations have a negative eigenvalue")
        sol = self._solution(x, how, convex, singular)
        if kept is not None:
            sol.leverages = self._leverages(leverage_rows, kept)
        return sol

    def _solve_one(self, ridge: float, weights: list[float], warn: bool) -> LeastSquaresSolution:
        """:meth:`solve` of a ridge as solved (divided by ``s^2``), without leverages."""
        x, how, convex, singular, _ = self._solve_system(ridge, weights)
        if warn and not convex:
            warn_nonconvex("the normal equations have a negative eigenvalue")
        return self._solution(x, how, convex, singular)

    def _solve_system(
        self, ridge: float, weights: list[float], cholesky: bool = True, kept: dict | None = None
    ) -> tuple:
        """``solve_symmetric`` on ``H``, with one more step for systems without a ridge: when
        the design ``A`` has a numerical null space (e.g. the bias column lies in the span of
        a full-rank kernel factor), every ``A^T X A`` part vanishes on it, so H is singular
        whatever the weights, and its minimum-norm solution is the solution of the system
        restricted to the complement, ``x = V (V^T H V)^{-1} V^T r``, factored by Cholesky or
        Bunch-Kaufman when its reciprocal condition number exceeds
        :data:`PROJECTED_MIN_RCOND`.  V is scaled so that ``A V`` has orthonormal columns and
        the restricted parts are built once from ``A V`` itself (:meth:`_design_complement`):
        the restricted system ``(AV)^T (C + sum_k w_k M_k) (AV)`` is then conditioned like the
        loss and penalties on the design's range, not squared by the spread of the design's
        singular values (a smooth kernel's factor spans 1e7 of them).  Without a ridge the
        complement is therefore looked for first (once per design), and H itself, singular
        then, is not factored; when the restricted system is numerically singular too, the
        pseudo-inverse of H comes from the eigendecomposition of H's restriction to its range
        ``U_+^T H U_+`` (the same spectrum, without forming H).  Otherwise Cholesky,
        Bunch-Kaufman on H, then the eigendecomposition with a pseudo-inverse, as
        :func:`~structreg.solvers.square.solve_symmetric`.

        ``cholesky=False`` skips the Cholesky attempt (the caller knows the system is not
        positive definite).  Returns ``(x, factorization, convex, singular, not_pd)``, with
        ``not_pd`` True when a Cholesky factorisation met a non-positive pivot.  ``kept``: a
        dict that receives the Cholesky or Bunch-Kaufman factorisation (and the complement's
        basis V)."""
        if self._gram.shape[0] == 0:
            return (*solve_symmetric(self._gram, self._rhs), False)
        complement = self._design_complement() if ridge == 0 else None
        if complement is not None:  # singular on the design's null space, whatever the weights:
            V, G_r, P_r, r_r, root = complement  # no factorisation of H itself can pass its test
            if kept is not None:
                kept["complement"] = V
            H_r = _add_weighted(G_r.copy(), weights, P_r)
            x_r, factored = (
                cholesky_attempt(H_r, r_r, PROJECTED_MIN_RCOND, kept) if cholesky else (None, False)
            )
            if x_r is not None:
                return V @ x_r, "projected-cholesky", True, True, False
            not_pd = cholesky and not factored
            ldl = ldl_solve(H_r, r_r, PROJECTED_MIN_RCOND, kept)
            if ldl is not None:
                return V @ ldl[0], "projected-ldl", ldl[1] == 0, True, not_pd
            # H's minimum-norm solution lies in range(H), inside span(U_+) = range(A^T), and
            # U_+^T H U_+ = S H_r S with S = Lambda_+^(1/2): the eigendecomposition of that
            # restriction is H's own on its range, and H is never formed
            K = H_r * root[:, None] * root[None, :]
            z, psd, _ = eigh_solve(0.5 * (K + K.T), root[:, None] * r_r, self._gram.shape[0])
            return (V * root) @ z, "eigh", psd, True, not_pd
        H = self._system(ridge, weights)
        H = 0.5 * (H + H.T)
        if kept is None and self._scale != 1.0 and ridge > RIDGE_DOMINANT:
            return self._solve_unscaled(H, cholesky)
        x, factored = cholesky_attempt(H, self._rhs, keep=kept) if cholesky else (None, False)
        if x is not None:
            return x, "cholesky", True, False, False
        not_pd = cholesky and not factored
        ldl = ldl_solve(H, self._rhs, keep=kept)
        if ldl is not None:
            return ldl[0], "ldl", ldl[1] == 0, False, not_pd
        x, psd, singular = eigh_solve(H, self._rhs)
        return x, "eigh", psd, singular, not_pd

    def _solve_unscaled(self, H: np.ndarray, cholesky: bool) -> tuple:
        """:meth:`_solve_system` of a ridge that dominates the rescaled system (a design far
        below unit scale): solved in the original coordinates, where that ridge is of the
        order of the intercept's block instead of ``1 / s^2`` times it, so that the tests for
        a safe pivot or a zero eigenvalue (relative to the largest entry) keep the intercept;
        the solution is returned in the rescaled coordinates."""
        p, s = self.n_features_, self._scale
        H, rhs = self._original(H), self._original(self._rhs)
        x, how, convex, singular = solve_symmetric(H, rhs)
        x = x.copy()
        x[:p] *= s  # [theta; b] -> [s theta; b]
        return x, how, convex, singular, cholesky and how != "cholesky"

    def _design_complement(self) -> tuple | None:
        """``(V, (AV)^T C (AV), [(AV)^T M_k (AV)], (AV)^T C Y, Lambda_+^(1/2))`` for the scaled
        basis V of the complement of the design's null space (:meth:`_complement_basis`), or
        None when the design has full column rank.  The parts come from ``A V`` directly:
        forming them as ``V^T G V`` from the Gram matrix would lose the small singular values'
        digits."""
        if self._complement is None:
            basis = self._design_cache.get("complement_basis", False)
            if basis is False:
                basis = self._design_cache["complement_basis"] = self._complement_basis()
            if basis is None:
                self._complement = (None,)
            else:
                V, AV, root = basis
                if "complement" not in self._loss:
                    active, ca, CY = self._loss_rows
                    AVa = AV[active]
                    self._loss["complement"] = (_weighted_gram(AVa, ca, False), AVa.T @ CY)
                G_r, r_r = self._loss["complement"]
                self._complement = (
                    V,
                    G_r,
                    [design_penalty_gram(AV, M, fit_intercept=False) for M in self._penalties],
                    r_r,
                    root,
                )
        return None if self._complement[0] is None else self._complement

    def _complement_basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(V, A V, Lambda_+^(1/2))`` with ``V = U_+ Lambda_+^{-1/2}`` from
        ``A^T A = U Lambda U^T``, ``U_+`` the eigenvectors whose eigenvalues exceed
        ``q eps max`` (the threshold of the eigendecomposition solve); None when the design has
        full column rank.

        ``A V`` is computed from A, and each column divided by the eigenvalue's square root
        (not by its own computed norm): a direction that only rounding put above the threshold
        (e.g. a redundant linear feature) then gets a column near zero, which the restricted
        system's condition estimate rejects, instead of a unit column of rounding noise."""
        Z = self._Z
        p = self.n_features_
        q = p + int(self.fit_intercept)
        active, ca, _ = self._loss_rows
        if 0 < len(active) == Z.shape[0] and np.all(ca == ca[0]):  # A^T A: the loss Gram / c
            T = self._gram / ca[0]
        else:
            T = _weighted_gram(Z, np.ones(Z.shape[0]), self.fit_intercept)
        lam, U = eigh(T, check_finite=False)
        keep = lam > q * np.finfo(float).eps * max(float(lam[-1]), 1e-300)
        if keep.all():
            return None
        root = np.sqrt(lam[keep])
        V = U[:, keep] / root
        AV = Z @ V[:p]
        if self.fit_intercept:
            AV += V[p]
        return V, AV, root

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
        factorisation each).  ``"auto"``: the eigendecomposition for
        :data:`RIDGE_PATH_MIN_RIDGES` ridges or more, and as soon as one ridge's system is
        numerically singular (its single solve needs an eigendecomposition anyway); otherwise
        one factorisation per ridge.

        Returns one :class:`~structreg.solvers.LeastSquaresSolution` per ridge, in order.
        """
        if method not in ("auto", "eigh", "factor"):
            raise ValueError(f"method must be 'auto', 'eigh' or 'factor', got {method!r}")
        return self._ridge_path(
            [self._ridge(float(r)) for r in ridges], self._weights(weights), warn, method
        )

    def _ridge_path(
        self, ridges: list[float], weights: list[float], warn: bool, method: str
    ) -> list[LeastSquaresSolution]:
        """:meth:`ridge_path` with the ridges as solved (divided by ``s^2``)."""
        if method == "factor" or (method == "auto" and len(ridges) < RIDGE_PATH_MIN_RIDGES):
            out: list[LeastSquaresSolution] = []
            for i, ridge in enumerate(ridges):
                sol = self._solve_one(ridge, weights, warn)
                if method == "auto" and sol.factorization == "eigh" and i + 1 < len(ridges):
                    return out + [sol] + self._ridge_path(ridges[i + 1 :], weights, warn, "eigh")
                out.append(sol)
            return out
        B = self._penalised(weights)
        B = 0.5 * (B + B.T)
        p = self.n_features_
        r = self._rhs
        if self.fit_intercept:
            b22 = B[p, p]
            scale = max(float(np.abs(B).max(initial=0.0)), 1e-300)
            if not b22 > (p + 1) * np.finfo(float).eps * scale:  # no Schur elimination
                return [self._solve_one(ridge, weights, warn) for ridge in ridges]
            b12 = B[:p, p]
            S = B[:p, :p] - np.outer(b12, b12) / b22
            rt = r[:p] - np.outer(b12, r[p]) / b22
        else:
            S, rt = B, r
        lam, U = eigh(0.5 * (S + S.T), check_finite=False)
        Urt = U.T @ rt
        shifted = lam[:, None] + np.asarray(ridges)[None, :]  # (p, n_ridges)
        top = np.abs(shifted).max(axis=0, initial=0.0)
        tol = (p + int(self.fit_intercept)) * np.finfo(float).eps * np.maximum(top, 1e-300)
        keep = np.abs(shifted) > tol
        inverse = np.divide(1.0, shifted, out=np.zeros_like(shifted), where=keep)
        # every ridge's theta in one product: U (Urt / shifted), ridges side by side
        thetas = U @ (Urt[:, None, :] * inverse[:, :, None]).reshape(len(lam), -1)
        thetas = thetas.reshape(p, len(ridges), -1)
        out = []
        any_nonconvex = False
        for j in range(len(ridges)):
            theta = np.ascontiguousarray(thetas[:, j, :])
            convex = bool(shifted[:, j].min(initial=np.inf) >= -tol[j])
            any_nonconvex |= not convex
            singular = bool(not keep[:, j].all())
            if self.fit_intercept:
                b = (r[p] - b12 @ theta) / b22
                x = np.vstack([theta, b[None, :]])
            else:
                x = theta
            out.append(self._solution(x, "eigh-path", convex, singular))
        if warn and any_nonconvex:
            warn_nonconvex("the normal equations have a negative eigenvalue")
        return out

    # -- a whole grid ------------------------------------------------------------------------
    def solve_grid(
        self, settings: Sequence[tuple[float, Sequence[float] | None]], *, warn: bool = True
    ) -> list[LeastSquaresSolution]:
        """Solve every ``(ridge, weights)`` in ``settings``, sharing what the grid allows.

        When the penalty weights of all settings are multiples ``t w`` of one direction, the
        loss covers few samples (``l`` rows with ``c_i > 0``, ``l + 2 <= q / 3``) and there
        are at least :data:`EIGH_PER_CHOLESKY` settings, the whole two-parameter grid
        ``(ridge, t)`` comes from ONE eigendecomposition ``P = Q diag(mu) Q^T`` of the
        penalty block: ``ridge I + t P = Q diag(ridge + t mu) Q^T`` is diagonal in Q, the loss
        Gram is the rank-l product ``U U^T`` (``U = Z^T C^(1/2)``) added by the Woodbury
        identity, and the bias by its Schur complement, all in O(q l^2) per setting
        (``factorization="spectral-path"``; a setting whose diagonal is not safely positive is
        solved directly).  This is the semi-supervised case (LapRLSC: few labels, one graph).
        Otherwise the settings are grouped by their weights and each group solved by
        :meth:`ridge_path`; a group of one setting by :meth:`solve`, the largest first in the
        Loewner order of the penalties declared ``psd``: a system that Cholesky's
        factorisation found not positive definite has no positive definite one below it
        (``H(s) <= H(s')`` when s has the same ridge kind, no larger ridge, no larger weight
        on each PSD penalty and the same weight on the others), so those skip the attempt and
        start with Bunch-Kaufman (DRLSC's ``eta``, weighting ``eta P_w - (1 - eta) P_b``, is
        such a line).  Returns one solution per setting, in order.
        """
        settings = [(self._ridge(float(r)), self._weights(w)) for r, w in settings]
        out: list[LeastSquaresSolution | None] = [None] * len(settings)
        if len(settings) >= EIGH_PER_CHOLESKY:
            self._spectral_grid(settings, out)
        groups: dict[tuple, list[int]] = {}
        for i, (_, w) in enumerate(settings):
            if out[i] is None:
                groups.setdefault(tuple(w), []).append(i)
        singles = []
        for w, idx in groups.items():
            if len(idx) == 1:
                singles.append(idx[0])
                continue
            sols = self._ridge_path([settings[i][0] for i in idx], list(w), False, "auto")
            for i, sol in zip(idx, sols, strict=True):
                out[i] = sol
        self._solve_monotone(settings, singles, out)
        if warn and not all(s.convex for s in out):
            warn_nonconvex("the normal equations have a negative eigenvalue")
        return out

    def _solve_monotone(self, settings: list, todo: list[int], out: list) -> None:
        """Solve ``settings[i]`` into ``out[i]`` for i in ``todo``, from the top of the
        Loewner order down, without the Cholesky attempts that an earlier failure rules out
        (see :meth:`solve_grid`)."""

        def height(i: int) -> float:
            ridge, w = settings[i]
            return ridge + sum(v for v, psd in zip(w, self._psd, strict=True) if psd)

        not_pd: list[tuple[float, list[float]]] = []  # settings whose H Cholesky refused
        for i in sorted(todo, key=height, reverse=True):
            ridge, w = settings[i]
            known = any(self._below(settings[i], top) for top in not_pd)
            x, how, convex, singular, refused = self._solve_system(ridge, w, cholesky=not known)
            if refused:
                not_pd.append(settings[i])
            out[i] = self._solution(x, how, convex, singular)

    def _below(self, a: tuple[float, list[float]], b: tuple[float, list[float]]) -> bool:
        """Whether ``H(a) <= H(b)`` in the Loewner order, for settings solved on the same
        system (both with or both without a ridge: without one, a rank-deficient design's
        system is restricted to its complement)."""
        (ra, wa), (rb, wb) = a, b
        if ra > rb or (ra == 0) != (rb == 0):
            return False
        return all(x <= y if psd else x == y for x, y, psd in zip(wa, wb, self._psd, strict=True))

    def _spectral_grid(self, settings: list, out: list) -> None:
        """Fill ``out`` for the settings the one-eigendecomposition grid can serve (see
        :meth:`solve_grid`); leave the others None.

        With ``S = ridge I + t P_pp + U U^T`` (p x p block) written in the eigenbasis Q of
        ``P_pp`` as ``D + U~ U~^T`` (D diagonal), the right-hand side ``r = U s`` and the loss
        part of the bias column ``U u0`` lie in the range of ``U``, so the push-through
        identity ``S^{-1} U~ = D^{-1} U~ K^{-1}`` with the SPD ``K = I + U~^T D^{-1} U~``
        (l x l) gives them without cancellation; only the penalty's own bias column ``e``
        (zero for Laplacians) needs the general Woodbury formula."""
        if self._roots is None or not self._parts:
            return
        U, u0, s_root = self._roots  # C^(1/2) Z (l, p), C^(1/2) 1, C^(1/2) Y
        p = self.n_features_
        q = p + int(self.fit_intercept)
        l_active = U.shape[0]
        direction = next((np.asarray(w) for _, w in settings if any(w)), None)
        if direction is None:
            return
        scale = [float(w @ direction) / float(direction @ direction) for _, w in settings]
        if any(
            not np.allclose(w, t * direction, rtol=1e-12, atol=0)
            for (_, w), t in zip(settings, scale, strict=True)
        ):
            return
        P = self._penalised_only(direction)
        mu, Q = eigh(0.5 * (P[:p, :p] + P[:p, :p].T), check_finite=False)
        Ut = Q.T @ U.T  # (p, l)
        pb, p22 = (Q.T @ P[:p, p], P[p, p]) if self.fit_intercept else (None, 0.0)
        eps = np.finfo(float).eps
        top = float(np.abs(mu).max(initial=0.0))
        loss_top = float(np.abs(np.diag(self._gram)).max(initial=0.0))
        eye = np.eye(l_active)
        for i, ((ridge, _), t) in enumerate(zip(settings, scale, strict=True)):
            d = ridge + t * mu
            if not d.min(initial=np.inf) > q * eps * max(top * abs(t) + ridge, loss_top, 1e-300):
                continue  # not safely positive: solved directly
            B = Ut / d[:, None]  # D^{-1} U~
            K = cho_factor(eye + Ut.T @ B, check_finite=False)
            ks = cho_solve(K, s_root, check_finite=False)
            theta = B @ ks  # S^{-1} r
            if self.fit_intercept:
                ku = cho_solve(K, u0, check_finite=False)
                e = t * pb
                Se = e / d - B @ cho_solve(K, Ut.T @ (e / d), check_finite=False)
                y_h = B @ ku + Se  # S^{-1} (U~ u0 + e)
                schur = u0 @ ku + t * p22 - 2.0 * e @ (B @ ku) - e @ Se
                if not schur > q * eps * max(abs(self._gram[p, p] + t * p22), 1e-300):
                    continue
                b = (u0 @ ks - e @ theta) / schur
                x = np.vstack([Q @ (theta - np.outer(y_h, b)), b[None, :]])
            else:
                x = Q @ theta
            out[i] = self._solution(x, "spectral-path", True, False)

    def _penalised_only(self, weights) -> np.ndarray:
        return _add_weighted(np.zeros_like(self._gram), weights, self._parts)

    def _leverages(self, rows: np.ndarray, kept: dict) -> np.ndarray | None:
        """``h_i = c_i a_i^T H^{-1} a_i`` of the samples ``rows`` from the factorisation
        :meth:`_solve_system` kept (``a_i`` and H restricted to the complement of the design's
        null space when the solve was, where every row lies, so Sherman-Morrison is exact
        there too); None when it kept none (a pseudo-inverse is no inverse)."""
        if "cholesky" not in kept and "ldl" not in kept:
            return None
        rows = np.asarray(rows, dtype=int)
        active, ca, _ = self._loss_rows
        c = np.zeros(self._Z.shape[0])
        c[active] = ca
        Zr = self._Z[rows]
        if "complement" in kept:
            V, p = kept["complement"], self.n_features_
            B = Zr @ V[:p] + (V[p] if self.fit_intercept else 0.0)
        else:
            B = np.hstack([Zr, np.ones((len(rows), 1))]) if self.fit_intercept else Zr
        return c[rows] * inverse_quadratic_forms(kept, B)
