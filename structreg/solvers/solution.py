"""What a square-loss solve returns: the solution, its leave-one-out outputs, and the one
warning for a non-convex (saddle-point) solution."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import NonConvexObjectiveWarning


@dataclass
class LeastSquaresSolution:
    """Result of :func:`~structreg.solvers.solve_penalized_least_squares`.

    Attributes
    ----------
    coef : ndarray of shape (p, n_outputs)
    intercept : ndarray of shape (n_outputs,)
    factorization : str
        How the normal equations were solved: ``"cholesky"``, ``"ldl"`` (Bunch-Kaufman),
        ``"eigh"`` (pseudo-inverse), ``"cg"``, ``"minres"``; along a grid also ``"eigh-path"``,
        ``"spectral-path"`` (:class:`~structreg.solvers.SquareLossPath`), and
        ``"projected-cholesky"`` / ``"projected-ldl"`` (a rank-deficient design's complement).
    convex : bool or None
        False when H had a negative eigenvalue (stationary point is a saddle); None when the
        iterative method did not check (it only detects negative curvature it meets).
    singular : bool
        True when H was numerically singular (minimum-norm solution returned).
    n_iter : int or None
        Iterations of the iterative method (None for the direct one).
    leverages : ndarray of shape (n_rows,) or None
        ``h_i = c_i a_i^T H^{-1} a_i`` of the rows asked for (``leverage_rows``) when H was
        factored (not for the iterative method or a singular H): the exact leave-one-out
        outputs follow (``leave_one_out_outputs``).
    """

    coef: np.ndarray
    intercept: np.ndarray
    factorization: str
    convex: bool | None
    singular: bool
    n_iter: int | None = None
    leverages: np.ndarray | None = None


def leave_one_out_outputs(
    fitted: np.ndarray, targets: np.ndarray, leverages: np.ndarray
) -> np.ndarray:
    """Exact leave-one-out outputs of a linear smoother: ``(f_i - h_i y_i) / (1 - h_i)``.

    For the square loss ``f = A H^{-1} A^T C Y`` dropping sample i's loss term
    (``H -> H - c_i a_i a_i^T``) gives, by Sherman-Morrison, the output
    ``f_i^{(-i)} = (f_i - h_i y_i) / (1 - h_i)`` at that sample, with the leverage
    ``h_i = c_i a_i^T H^{-1} a_i``, the same for every output column.  Rows with
    ``1 - h_i`` at rounding level (no leave-one-out solution) get NaN.

    Parameters
    ----------
    fitted, targets : ndarray of shape (l, n_outputs)
    leverages : ndarray of shape (l,)

    Returns
    -------
    ndarray of shape (l, n_outputs)
    """
    denominator = 1.0 - leverages
    ok = np.abs(denominator) > np.sqrt(np.finfo(float).eps)
    out = np.full(fitted.shape, np.nan)
    out[ok] = (fitted[ok] - leverages[ok, None] * targets[ok]) / denominator[ok, None]
    return out


def warn_nonconvex(detail: str) -> None:
    """Issue the library's one warning for a non-convex (saddle-point) solution."""
    warnings.warn(
        f"the structure penalty makes the objective non-convex ({detail}): it is unbounded "
        "below and the returned solution is its stationary point (a saddle), as the closed "
        "form defines it. For a convex problem raise the ridge (gamma_A) or the weight of the "
        "compactness terms (eta), or lower the weight of the subtracted ones (gamma_D, 1 - eta).",
        NonConvexObjectiveWarning,
        stacklevel=4,
    )
