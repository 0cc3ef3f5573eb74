"""The bordered (saddle-point) system of LS-SVM and DRLSC.

Both LS-SVM (Suykens & Vandewalle 1999, in its regression form) and DRLSC (Xue, Chen & Yang
2009, Theorems 1-2) end in

    [ 0   1^T        ] [ b     ]   [ 0 ]
    [ 1   Omega + rI ] [ Gamma ] = [ Y ]

with a symmetric n x n ``Omega`` (the kernel matrix for LS-SVM, ``X S_eta^+ X^T`` for DRLSC),
``r > 0`` (``1/C`` for LS-SVM, 1 for DRLSC) and one column of ``Y`` per output.  The bordered
matrix is always indefinite (it is a saddle-point matrix), so it is not factorised directly
when it can be avoided:

* if ``A = Omega + rI`` is positive definite (always for LS-SVM with a PSD kernel; for DRLSC
  whenever ``S_eta`` is PSD), Cholesky of ``A`` and the Schur complement of the border:
  ``b = 1^T A^{-1} Y / 1^T A^{-1} 1``, ``Gamma = A^{-1} (Y - 1 b)``;
* otherwise (DRLSC with eta < 1 can make ``Omega`` indefinite) the whole bordered matrix is
  solved through its symmetric eigendecomposition with a pseudo-inverse: the unique solution
  when it is nonsingular, the minimum-norm solution when it is singular.

:class:`BorderedPath` solves many ``r`` (LS-SVM's ``1/C`` along a grid) from one symmetric
eigendecomposition ``Omega = U diag(w) U^T``: ``A^{-1} = U diag(1/(w + r)) U^T`` gives the
Schur complement for every ``r`` at O(n^2) each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh

from .square import cholesky_solve, eigh_solve


@dataclass
class BorderedSolution:
    """``intercept`` (n_outputs,), ``dual_coef`` (n, n_outputs) and how they were found."""

    intercept: np.ndarray
    dual_coef: np.ndarray
    factorization: str
    singular: bool


def solve_bordered(Omega: np.ndarray, Y: np.ndarray, reg: float | np.ndarray) -> BorderedSolution:
    """Solve ``[[0, 1^T], [1, Omega + diag(reg)]] [b; Gamma] = [0; Y]`` (see module
    docstring); ``reg`` is a number (``reg I``) or one positive value per sample (the
    weighted LS-SVM: ``r_i = 1 / (C v_i)`` for the loss ``C/2 sum_i v_i e_i^2``)."""
    Omega = np.asarray(Omega, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n = Omega.shape[0]
    A = Omega + reg * np.eye(n)  # a vector reg scales the columns of I: diag(reg)
    ones = np.ones((n, 1))
    sol = cholesky_solve(0.5 * (A + A.T), np.hstack([ones, Y]))
    if sol is not None:
        eta, nu = sol[:, :1], sol[:, 1:]
        b = (ones.T @ nu) / (ones.T @ eta)
        return BorderedSolution(b.ravel(), nu - eta @ b, "cholesky+schur", False)
    border = np.zeros((n + 1, n + 1))
    border[0, 1:] = border[1:, 0] = 1.0
    border[1:, 1:] = A
    x, _, singular = eigh_solve(border, np.vstack([np.zeros((1, Y.shape[1])), Y]))
    return BorderedSolution(x[0], x[1:], "eigh", singular)


class BorderedPath:
    """The bordered system of one ``Omega`` and ``Y`` for many ``reg``, factored once.

    Parameters
    ----------
    Omega : ndarray of shape (n, n)
        Symmetric.
    Y : ndarray of shape (n, n_outputs)

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.solvers import BorderedPath, solve_bordered
    >>> rng = np.random.default_rng(0)
    >>> V = rng.normal(size=(6, 3))
    >>> Omega, Y = V @ V.T, rng.normal(size=(6, 1))
    >>> sol = BorderedPath(Omega, Y).solve(0.5)
    >>> bool(np.allclose(sol.dual_coef, solve_bordered(Omega, Y, 0.5).dual_coef))
    True
    """

    def __init__(self, Omega: np.ndarray, Y: np.ndarray) -> None:
        self.Omega = 0.5 * (np.asarray(Omega, dtype=float) + np.asarray(Omega, dtype=float).T)
        self.Y = np.asarray(Y, dtype=float)
        self.eigenvalues_, self.U_ = eigh(self.Omega, check_finite=False)
        self._u1 = self.U_.sum(axis=0)  # U^T 1
        self._uY = self.U_.T @ self.Y

    def solve(self, reg: float) -> BorderedSolution:
        """The solution for ``reg``: the spectral Schur complement when ``Omega + reg I`` is
        safely positive definite, else :func:`solve_bordered` (eigh of the bordered matrix)."""
        shifted = self.eigenvalues_ + reg
        n = len(shifted)
        tol = n * np.finfo(float).eps * max(float(np.abs(shifted).max(initial=0.0)), 1e-300)
        if shifted.min(initial=np.inf) <= tol:
            return solve_bordered(self.Omega, self.Y, reg)
        d = 1.0 / shifted
        eta = self.U_ @ (d * self._u1)
        nu = self.U_ @ (d[:, None] * self._uY)
        b = nu.sum(axis=0) / eta.sum()
        return BorderedSolution(b, nu - np.outer(eta, b), "eigh-path+schur", False)
