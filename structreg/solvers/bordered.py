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
from scipy.linalg import eigh, lapack

from .factor import cholesky_factor, eigh_factor


@dataclass
class BorderedSolution:
    """``intercept`` (n_outputs,), ``dual_coef`` (n, n_outputs) and how they were found;
    ``leverages`` (n_rows,) of the rows asked for when the system is nonsingular (see
    :func:`solve_bordered`)."""

    intercept: np.ndarray
    dual_coef: np.ndarray
    factorization: str
    singular: bool
    leverages: np.ndarray | None = None


def solve_bordered(
    Omega: np.ndarray,
    Y: np.ndarray,
    reg: float | np.ndarray,
    *,
    leverage_rows: np.ndarray | None = None,
) -> BorderedSolution:
    """Solve ``[[0, 1^T], [1, Omega + diag(reg)]] [b; Gamma] = [0; Y]`` (see module
    docstring); ``reg`` is a number (``reg I``) or one positive value per sample (the
    weighted LS-SVM: ``r_i = 1 / (C v_i)`` for the loss ``C/2 sum_i v_i e_i^2``).

    ``leverage_rows``: samples i that also get ``h_i = 1 - r_i [C^{-1}]_ii`` (C the bordered
    matrix, i in the Gamma block).  The outputs at the samples are ``f = Omega Gamma + b = Y -
    diag(r) Gamma``, and deleting sample i's row and column (dropping its error term) leaves
    the output ``y_i - Gamma_i / [C^{-1}]_ii`` there (Cawley & Talbot 2004): this is
    ``leave_one_out_outputs`` with these ``h_i``.  From the
    Cholesky factor ``A = Omega + diag(r) = R^T R``: ``[C^{-1}]_ii = ||R^{-T} e_i||^2 -
    (A^{-1} 1)_i^2 / 1^T A^{-1} 1``; None for a singular system.
    """
    Omega = np.asarray(Omega, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n = Omega.shape[0]
    A = Omega + reg * np.eye(n)  # a vector reg scales the columns of I: diag(reg)
    ones = np.ones((n, 1))
    c = cholesky_factor(0.5 * (A + A.T))
    sol = None if c is None else lapack.dpotrs(c, np.hstack([ones, Y]), lower=0)
    if sol is not None and sol[1] == 0:
        eta, nu = sol[0][:, :1], sol[0][:, 1:]
        b = (ones.T @ nu) / (ones.T @ eta)
        out = BorderedSolution(b.ravel(), nu - eta @ b, "cholesky+schur", False)
        if leverage_rows is not None:
            rows = np.asarray(leverage_rows, dtype=int)
            if 3 * len(rows) > n:  # A^{-1} = R^{-1} R^{-T}: its diagonal from R^{-1}'s rows
                R_inv = np.triu(lapack.dtrtri(c, lower=0)[0])[rows]
            else:  # one triangular solve per row
                E = np.zeros((n, len(rows)), order="F")
                E[rows, np.arange(len(rows))] = 1.0
                R_inv = lapack.dtrtrs(c, E, lower=0, trans=1)[0].T
            inverse = np.einsum("ij,ij->i", R_inv, R_inv) - eta[rows, 0] ** 2 / eta.sum()
            out.leverages = 1.0 - np.broadcast_to(reg, (n,))[rows] * inverse
        return out
    border = np.zeros((n + 1, n + 1))
    border[0, 1:] = border[1:, 0] = 1.0
    border[1:, 1:] = A
    U, w, _, singular = eigh_factor(border)
    x = U @ ((U.T @ np.vstack([np.zeros((1, Y.shape[1])), Y])) / w[:, None])
    out = BorderedSolution(x[0], x[1:], "eigh", singular)
    if leverage_rows is not None and not singular:
        rows = np.asarray(leverage_rows, dtype=int)
        Ur = U[1 + rows]
        out.leverages = 1.0 - np.broadcast_to(reg, (n,))[rows] * np.einsum("ij,ij->i", Ur, Ur / w)
    return out


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
