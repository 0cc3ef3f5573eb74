"""Factor once, solve many: the square-loss normal equations along a grid of weights.

The problem of :mod:`structreg.solvers.square` with several weighted penalties,

    J(theta, b) = sum_i c_i ||a_i x - Y_i||^2 + ridge ||theta||^2 + sum_k w_k tr(F^T M_k F),
    A = [Z, 1] (or Z),  x = [theta; b],  F = A x,

has the normal equations ``(G + sum_k w_k P_k + ridge D) x = r`` with the parts

    G = A^T C A,   P_k = A^T M_k A,   r = A^T C Y,   D = diag(1, ..., 1, 0),

which do not depend on ``(ridge, w)``.  :class:`SquareLossPath` assembles them once (the
expensive O(n q^2 + nnz(M) q) step,
:class:`~structreg.solvers.normal_equations.NormalEquations`) and then solves any
``(ridge, w)`` in O(q^3), choosing among these strategies:

* one setting (:meth:`SquareLossPath.solve`, :mod:`structreg.solvers.direct`) -- by the same
  rule as a single fit (Cholesky when the system is safely positive definite, Bunch-Kaufman
  when it is safely nonsingular, else the eigendecomposition with a pseudo-inverse; see
  :mod:`structreg.solvers.factor`); without a ridge, a design with a null space -- the bias
  in the span of a full-rank kernel factor -- is solved on its range, in a basis that keeps
  the system as well conditioned as the loss and penalties
  (:mod:`structreg.solvers.complement`);
* many ridges at fixed penalty weights (:meth:`SquareLossPath.ridge_path`,
  :mod:`structreg.solvers.ridge_path`) -- from ONE symmetric eigendecomposition (the spectral
  shortcut of scikit-learn's ``RidgeCV``) when there are enough of them to pay for it, else
  one factorisation per ridge.  The unpenalised bias is eliminated first by its Schur
  complement, which is exact when its diagonal entry ``1^T (C + sum_k w_k M_k) 1`` is
  positive (always with loss weights on at least one sample and penalties that annihilate
  constants); otherwise every ridge is solved directly;
* a whole grid (:meth:`SquareLossPath.solve_grid`) -- the semi-supervised two-parameter grid
  from one eigendecomposition (:mod:`structreg.solvers.spectral_grid`), ridge paths per
  weight setting, and single settings from the top of the Loewner order down
  (:mod:`structreg.solvers.loewner`): with the penalties declared PSD (``psd=``), a setting
  whose weights on them are no larger (and equal on the others) has ``H`` no larger, so once
  Cholesky's factorisation meets a non-positive pivot the settings below skip the attempt
  (DRLSC's ``eta`` weights ``eta P_w - (1 - eta) P_b``: one line, monotone in ``eta``).

Indefinite penalties (a subtracted between-class term) are allowed: a setting whose system
has a negative eigenvalue reports ``convex=False`` and gets the stationary point (a saddle);
a singular one gets the minimum-norm solution, exactly as in a single fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .direct import leverages, solve_setting
from .loewner import solve_monotone
from .normal_equations import NormalEquations
from .ridge_path import eigh_ridge_path
from .solution import LeastSquaresSolution, warn_nonconvex
from .spectral_grid import spectral_grid

__all__ = ["EIGH_PER_CHOLESKY", "RIDGE_PATH_MIN_RIDGES", "SquareLossPath"]

EIGH_PER_CHOLESKY = 24
"""Settings from which :meth:`SquareLossPath.solve_grid` tries its one-eigendecomposition
grid: LAPACK's symmetric eigensolver took 14-49 times a Cholesky factorisation of the same
matrix (q = 150..1500, one thread, this project's 2-core machines)."""

RIDGE_PATH_MIN_RIDGES = 10
"""Ridges from which :meth:`SquareLossPath.ridge_path` (``method="auto"``) solves them all from
one eigendecomposition.  Lower than :data:`EIGH_PER_CHOLESKY`: a solve per ridge also pays the
assembly, the condition estimate and the bookkeeping of a point, O(q^2) each; the supervised
LapRLSC search of ``structreg reproduce drlsc`` (21 ridges per graph weight, q ~ 500) took
about two thirds of the time with one eigendecomposition per graph weight as with a Cholesky
factorisation per ridge, choosing the same parameters (measured in the scale guide,
:doc:`/user_guide/scale`, "Measurements behind the solvers' settings")."""

_NONCONVEX = "the normal equations have a negative eigenvalue"


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
        self._equations = NormalEquations(
            Z, Y, loss_weights, penalties, fit_intercept=fit_intercept, design_cache=design_cache
        )
        self.n_features_ = self._equations.n_features
        self.fit_intercept = self._equations.fit_intercept
        self.n_outputs_ = self._equations.n_outputs
        k = len(self._equations.penalties)
        self._psd = [False] * k if psd is None else [bool(v) for v in psd]
        if len(self._psd) != k:
            raise ValueError(f"psd has {len(self._psd)} entries for {k} penalties")

    @property
    def gram_(self) -> np.ndarray:
        return self._equations.original(self._equations.gram)

    @property
    def rhs_(self) -> np.ndarray:
        return self._equations.original(self._equations.rhs)

    @property
    def projected_(self) -> list[np.ndarray]:
        return [self._equations.original(P) for P in self._equations.parts]

    def system(self, ridge: float, weights: Sequence[float] | None = None) -> np.ndarray:
        """The matrix ``H = G + sum_k w_k P_k + ridge D`` of one setting."""
        equations = self._equations
        H = equations.system(equations.solved_ridge(ridge), equations.checked_weights(weights))
        return equations.original(H)

    # -- one setting -------------------------------------------------------------------------
    def solve(
        self,
        ridge: float,
        weights: Sequence[float] | None = None,
        *,
        warn: bool = True,
        leverage_rows: np.ndarray | None = None,
    ) -> LeastSquaresSolution:
        """Solve one setting ``(ridge, weights)`` (weights default to 1 for every penalty).

        Cholesky when the system is safely positive definite, else Bunch-Kaufman when it is
        safely nonsingular, else the eigendecomposition with a pseudo-inverse (stationary
        point; minimum-norm when singular; :mod:`structreg.solvers.direct`).  ``warn``: issue
        :class:`~structreg.solvers.NonConvexObjectiveWarning` for a non-convex setting.
        ``leverage_rows``: samples whose leverages ``c_i a_i^T H^{-1} a_i`` the solution also
        carries (``leverages``), from the same factorisation (one triangular solve each);
        None there when the system was singular.
        """
        equations = self._equations
        w = equations.checked_weights(weights)
        kept: dict | None = None if leverage_rows is None else {}
        x, how, convex, singular, _ = solve_setting(
            equations, equations.solved_ridge(ridge), w, kept=kept
        )
        if warn and not convex:
            warn_nonconvex(_NONCONVEX)
        sol = equations.solution(x, how, convex, singular)
        if kept is not None:
            sol.leverages = self._leverages(leverage_rows, kept)
        return sol

    def _leverages(self, rows: np.ndarray, kept: dict) -> np.ndarray | None:
        """:func:`~structreg.solvers.direct.leverages` (a method, so that a benchmark can time
        it)."""
        return leverages(self._equations, rows, kept)

    def _solve_one(self, ridge: float, weights: list[float], warn: bool) -> LeastSquaresSolution:
        """:meth:`solve` of a ridge as solved (divided by ``s^2``), without leverages."""
        x, how, convex, singular, _ = solve_setting(self._equations, ridge, weights)
        if warn and not convex:
            warn_nonconvex(_NONCONVEX)
        return self._equations.solution(x, how, convex, singular)

    # -- many ridges -------------------------------------------------------------------------
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
        (``factorization="eigh-path"``, :mod:`structreg.solvers.ridge_path`); eigenvalues of
        the ridge-shifted system within ``q eps max|lambda|`` of zero are treated as zero
        (minimum-norm solution, as in a single fit).  ``"factor"``: :meth:`solve` per ridge
        (a Cholesky or Bunch-Kaufman factorisation each).  ``"auto"``: the eigendecomposition
        for :data:`RIDGE_PATH_MIN_RIDGES` ridges or more, and as soon as one ridge's system is
        numerically singular (its single solve needs an eigendecomposition anyway); otherwise
        one factorisation per ridge.

        Returns one :class:`~structreg.solvers.LeastSquaresSolution` per ridge, in order.
        """
        if method not in ("auto", "eigh", "factor"):
            raise ValueError(f"method must be 'auto', 'eigh' or 'factor', got {method!r}")
        equations = self._equations
        solved = [equations.solved_ridge(float(r)) for r in ridges]
        return self._ridge_path(solved, equations.checked_weights(weights), warn, method)

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
        out = eigh_ridge_path(self._equations, ridges, weights)
        if out is None:  # the bias cannot be eliminated: every ridge solved directly
            return [self._solve_one(ridge, weights, warn) for ridge in ridges]
        if warn and not all(s.convex for s in out):
            warn_nonconvex(_NONCONVEX)
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
        (``factorization="spectral-path"``, :mod:`structreg.solvers.spectral_grid`; a setting
        whose diagonal is not safely positive is solved directly).  This is the
        semi-supervised case (LapRLSC: few labels, one graph).  Otherwise the settings are
        grouped by their weights and each group solved by :meth:`ridge_path`; a group of one
        setting by :meth:`solve`, the largest first in the Loewner order of the penalties
        declared ``psd`` (:mod:`structreg.solvers.loewner`): a system that Cholesky's
        factorisation found not positive definite has no positive definite one below it
        (``H(s) <= H(s')`` when s has the same ridge kind, no larger ridge, no larger weight
        on each PSD penalty and the same weight on the others), so those skip the attempt and
        start with Bunch-Kaufman (DRLSC's ``eta``, weighting ``eta P_w - (1 - eta) P_b``, is
        such a line).  Returns one solution per setting, in order.
        """
        equations = self._equations
        settings = [
            (equations.solved_ridge(float(r)), equations.checked_weights(w)) for r, w in settings
        ]
        out: list[LeastSquaresSolution | None] = [None] * len(settings)
        if len(settings) >= EIGH_PER_CHOLESKY:
            spectral_grid(equations, settings, out)
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
        solve_monotone(equations, settings, singles, out, self._psd)
        if warn and not all(s.convex for s in out):
            warn_nonconvex(_NONCONVEX)
        return out
