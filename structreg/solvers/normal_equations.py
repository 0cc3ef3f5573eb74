"""The parts of the square-loss normal equations, assembled once for many weight settings.

For the design ``A = [Z, 1]`` (or ``Z``), loss weights ``C``, targets ``Y`` and unweighted
penalties ``M_k`` the normal equations of a setting ``(ridge, w)`` are

    H x = r,   H = G + sum_k w_k P_k + ridge D,
    G = A^T C A,   P_k = A^T M_k A,   r = A^T C Y,   D = diag(1, ..., 1, 0),

whose parts do not depend on the setting.  :class:`NormalEquations` holds them, in the
coordinates they are solved in (a design far from unit scale is rescaled), and turns a
solved ``x`` back into a :class:`~structreg.solvers.LeastSquaresSolution` in the original
coordinates.  The strategies of :class:`~structreg.solvers.SquareLossPath` solve from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._numerics import far_scale
from .complement import Complement, complement_basis, restricted_loss, restricted_penalties
from .design import RowDesign, add_weighted, dense_array, design_penalty_gram, weighted_gram
from .solution import LeastSquaresSolution

RIDGE_MAX = 1e250
"""Largest ridge of the solved (unit-scale) system: squares of it stay finite."""

_UNSET = object()


class NormalEquations:
    """The parts ``G``, ``P_k``, ``r`` of the square-loss normal equations, as solved.

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
        Design.
    Y : ndarray of shape (n, n_outputs)
        Targets (rows with zero loss weight are ignored).
    loss_weights : ndarray of shape (n,)
        Non-negative ``c_i``.
    penalties : sequence of (sparse matrix, ndarray, LinearOperator or None)
        The symmetric ``M_k`` (n x n), unweighted.
    fit_intercept : bool
        Add the unpenalised bias ``b``.
    design_cache : dict or None
        Shared by the equations of one design (see :class:`~structreg.solvers.SquareLossPath`).

    With ``fit_intercept`` and a design far from unit scale
    (:func:`~structreg._numerics.far_scale`) the parts are those of ``[s theta; b]`` on the
    design ``Z / s`` (``scale`` = s; the ridge of a setting divided by ``s^2``,
    :meth:`solved_ridge`); :meth:`original` and :meth:`solution` give the original
    coordinates back.

    Attributes
    ----------
    Z : ndarray of shape (n, p)
        The design as solved (``Z / s``).
    gram : ndarray of shape (q, q)
        ``G = A^T C A``.
    rhs : ndarray of shape (q, n_outputs)
        ``r = A^T C Y``.
    parts : list of ndarray of shape (q, q)
        ``P_k = A^T M_k A``, built on first use.
    loss_rows : tuple
        ``(active, c[active], C Y on active)``: the rows with loss.
    roots : tuple or None
        ``(C^(1/2) Z, C^(1/2) 1, C^(1/2) Y)`` on the rows with loss, kept only when they are
        few (``l + 2 <= q / 3``: what the spectral grid needs).
    """

    def __init__(
        self,
        Z,
        Y: np.ndarray,
        loss_weights: np.ndarray,
        penalties: Sequence,
        *,
        fit_intercept: bool,
        design_cache: dict | None,
    ) -> None:
        Z = Z if isinstance(Z, RowDesign) else dense_array(Z)  # rows computed when read
        Y = np.asarray(Y, dtype=float)
        c = np.asarray(loss_weights, dtype=float)
        # with a bias, the rank and definiteness tests compare the features' part of the
        # system with the bias column's (of order 1): on the design at unit scale, so that
        # features of small scale (X * 1e-8: eigenvalues 1e-16 times the bias's) count
        self.scale = far_scale(Z) if fit_intercept else 1.0
        if self.scale != 1.0:
            Z = Z / self.scale  # solved for [s theta; b]: see the class docstring
        n, p = Z.shape
        self.n_features = p
        self.fit_intercept = bool(fit_intercept)
        self.n_outputs = Y.shape[1]
        active = np.flatnonzero(c)
        Za, ca = Z[active], c[active]
        q = p + int(fit_intercept)
        CY = ca[:, None] * Y[active]
        self.design_cache = {} if design_cache is None else design_cache
        self.loss = self._loss_parts(c, Y)
        if "gram" not in self.loss:
            rhs = Za.T @ CY
            if fit_intercept:
                rhs = np.vstack([rhs, CY.sum(axis=0)])
            self.loss["gram"] = weighted_gram(Za, ca, fit_intercept)
            self.loss["rhs"] = rhs
        self.gram = self.loss["gram"]
        self.rhs = self.loss["rhs"]
        self.Z = Z
        # C^(1/2) Z, C^(1/2) 1, C^(1/2) Y on the rows with loss: the factors of G and r that
        # the spectral grid needs, kept only where it can apply (few such rows), so a large
        # supervised fit holds no second copy of its design
        self.roots = None
        if len(active) + 2 <= q / 3:
            root = np.sqrt(ca)
            self.roots = (root[:, None] * Za, root, root[:, None] * Y[active])
        self.penalties = list(penalties)
        self.loss_rows = (active, ca, CY)
        self._parts: list[np.ndarray] | None = None
        self._complement = _UNSET

    def _loss_parts(self, c: np.ndarray, Y: np.ndarray) -> dict:
        """The design cache's entry for these loss weights and targets (G, r and their
        restriction to the design's complement, filled on first use), found by value: paths on
        one design with other graphs share them, ones with other weights do not."""
        entries = self.design_cache.setdefault("loss_parts", [])
        for c0, Y0, parts in entries:
            if np.array_equal(c0, c) and np.array_equal(Y0, Y):
                return parts
        entries.append((c.copy(), Y.copy(), {}))
        return entries[-1][2]

    @property
    def parts(self) -> list[np.ndarray]:
        """``A^T M_k A`` per penalty (of the design as solved), built on first use (a system
        solved on the complement of the design's null space never needs them)."""
        if self._parts is None:
            self._parts = [
                design_penalty_gram(self.Z, M, fit_intercept=self.fit_intercept)
                for M in self.penalties
            ]
        return self._parts

    def complement(self) -> Complement | None:
        """The normal equations restricted to the complement of the design's null space
        (:mod:`structreg.solvers.complement`), or None when the design has full column rank.
        Its basis is computed once per design (``design_cache``), its loss parts once per loss
        entry, its penalty parts once here."""
        if self._complement is _UNSET:
            basis = self.design_cache.get("complement_basis", False)
            if basis is False:
                basis = complement_basis(self.Z, self.gram, self.loss_rows, self.fit_intercept)
                self.design_cache["complement_basis"] = basis
            if basis is None:
                self._complement = None
            else:
                V, AV, root = basis
                if "complement" not in self.loss:
                    self.loss["complement"] = restricted_loss(AV, self.loss_rows)
                G_r, r_r = self.loss["complement"]
                P_r = restricted_penalties(AV, self.penalties)
                self._complement = Complement(V, G_r, P_r, r_r, root)
        return self._complement

    # -- the original coordinates (the design scale s, see the class docstring) -------------
    def original(self, A: np.ndarray) -> np.ndarray:
        """A (q, q) part of the solved system, or a (q, k) right-hand side, in the original
        coordinates: rows (and columns) of theta times s."""
        if self.scale == 1.0:
            return A
        p, s = self.n_features, self.scale
        A = A.copy()
        A[:p] *= s
        if A.shape[1] == A.shape[0] and A.shape[0] == p + int(self.fit_intercept):
            A[:, :p] *= s
        return A

    def solved_ridge(self, ridge: float) -> float:
        """The ridge of the solved system: ``ridge / s^2``, at most ``RIDGE_MAX``.  A design
        far below unit scale (GRBFN's units of a narrow kernel, all below 1e-160) can make it
        overflow (``s^2`` underflowed to 0 before); then the features' share of the fit is
        below the rounding of the intercept either way, and the capped ridge gives that fit
        (theta ~ 0, the intercept alone)."""
        scaled = ridge / self.scale / self.scale
        return min(scaled, RIDGE_MAX) if ridge > 0 else scaled

    def solution(self, x: np.ndarray, how: str, convex, singular: bool) -> LeastSquaresSolution:
        """The solved ``x = [s theta; b]`` (or ``s theta``) as a solution in the original
        coordinates."""
        p = self.n_features
        if self.scale != 1.0:
            x = np.vstack([x[:p] / self.scale, x[p:]])
        if self.fit_intercept:
            return LeastSquaresSolution(x[:p], x[p], how, convex, singular)
        return LeastSquaresSolution(x, np.zeros(self.n_outputs), how, convex, singular)

    # -- assembly ----------------------------------------------------------------------------
    def checked_weights(self, weights: Sequence[float] | None) -> list[float]:
        """The penalty weights as a list (default 1 for every penalty), one per penalty."""
        k = len(self.penalties)
        w = [1.0] * k if weights is None else [float(v) for v in weights]
        if len(w) != k:
            raise ValueError(f"got {len(w)} penalty weights for {k} penalties")
        return w

    def system(self, ridge: float, weights: list[float]) -> np.ndarray:
        """``H = G + sum_k w_k P_k + ridge D`` as solved (``ridge`` already divided by
        ``s^2``)."""
        H = self.penalised(weights)
        p = self.n_features
        H[np.arange(p), np.arange(p)] += ridge
        return H

    def penalised(self, weights: Sequence[float]) -> np.ndarray:
        """``G + sum_k w_k P_k``."""
        return add_weighted(self.gram.copy(), weights, self.parts)

    def penalty(self, weights: Sequence[float]) -> np.ndarray:
        """``sum_k w_k P_k``."""
        return add_weighted(np.zeros_like(self.gram), weights, self.parts)
