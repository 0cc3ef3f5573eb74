"""Scale safety and finiteness: the checks shared by the kernels, graphs, solvers and models.

* Training data are refused where float64 cannot square them (:func:`check_representable`:
  ``max|X|`` below about 1.5e-154 or above about 6.7e153 / sqrt(n_features)); within that
  range squared distances, variances and kernel values are finite and normal.
* The quantities that do not depend on the scale of X in exact arithmetic, but whose
  intermediate sums could still overflow or whose solvers have absolute tolerances, are
  computed on ``X / s`` with ``s`` a power of two near ``max|X|`` -- exact, so the same bits as
  at unit scale -- and the one quantity that carries units is scaled back: the variance of
  ``gamma="scale"`` (:func:`~structreg.kernels.resolve_gamma`), the kNN graphs and their
  widths (``t=None`` heat weights, ``gamma="graph"``), Ward's and fuzzy c-means clusterings,
  SLMM's cone programs and the square-loss normal equations with a bias
  (:class:`~structreg.solvers.SquareLossPath`).  Data within a factor
  :data:`UNIT_SCALE_BAND` of unit scale are left as they are (:func:`far_scale`): nothing
  over- or underflows there, and arrays keep their identity (graph caches key on it).
* :func:`check_finite` refuses kernel matrices, fitted coefficients and decision values that
  are not finite (:class:`NonFiniteError`, naming what produced them), so no prediction is
  read off NaN or inf.
* :func:`check_not_degenerate` refuses training data with nothing to learn from (all samples
  the same point, e.g. an all-zero X).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

FLOAT = np.finfo(float)

SQUARE_MIN = math.sqrt(FLOAT.tiny)
"""Smallest largest-absolute-value of training data (about 1.5e-154): below it the squares of
every value underflow float64's normal range, so distances, variances and linear kernel values
are lost (0 or denormal)."""


class NonFiniteError(ValueError):
    """A kernel matrix, feature map, solution or decision value that is not finite; the
    message names what produced it."""


def max_abs(X) -> float:
    """``max |X|`` over the stored entries (0 for an empty array); dense or sparse."""
    data = X.data if sp.issparse(X) else np.asarray(X)
    if not data.size:
        return 0.0
    return float(max(np.max(data), -np.min(data)))  # no |X| temporary


def power_of_two(a: float) -> float:
    """The power of two ``s`` with ``a / s`` in [1, 2) (1.0 for 0 or a value not finite)."""
    if not (a > 0 and math.isfinite(a)):
        return 1.0
    return math.ldexp(1.0, math.frexp(a)[1] - 1)


def power_of_two_scale(X) -> float:
    """The power of two ``s`` with ``max|X| / s`` in [1, 2) (1.0 when X is empty, all zero or
    not finite): dividing by it is exact, and brings the data to unit scale."""
    return power_of_two(max_abs(X))


UNIT_SCALE_BAND = 2.0**16
"""Data whose largest value lies within this factor of 1 count as of unit scale for
:func:`far_scale`: solvers with absolute tolerances, or that compare the data's part of a
system with a bias column of order 1, still resolve them (the squares at least 2^-32 of 1)."""


def far_scale(X) -> float:
    """:func:`power_of_two_scale` of X when it lies outside [1 / UNIT_SCALE_BAND,
    UNIT_SCALE_BAND] (:data:`UNIT_SCALE_BAND`), else 1.0: the factor a solver that is exact
    only near unit scale divides its data by, leaving data of ordinary scale untouched."""
    return far_power_of_two(max_abs(X))


def far_power_of_two(a: float) -> float:
    """:func:`far_scale` of data whose largest absolute value is ``a``."""
    s = power_of_two(a)
    return s if not 1.0 / UNIT_SCALE_BAND <= s <= UNIT_SCALE_BAND else 1.0


def unit_scaled(X, *others, far_only: bool = False):
    """``(s, X / s, *(Y / s for Y in others))`` with ``s`` the power of two of X and the
    others together (:func:`power_of_two_scale`); arrays at unit scale (s = 1) are returned
    as given.  ``far_only``: only data far from unit scale are divided (:func:`far_scale`),
    so that data of ordinary scale keep their identity (e.g. as keys of a cache)."""
    arrays = (X, *others)
    s = max(power_of_two_scale(A) for A in arrays)
    if far_only and 1.0 / UNIT_SCALE_BAND <= s <= UNIT_SCALE_BAND:
        s = 1.0
    if s == 1.0:
        return (s, *arrays)
    return (s, *(A / s if sp.issparse(A) else np.asarray(A) / s for A in arrays))


def max_representable_abs(n_features: int) -> float:
    """Largest largest-absolute-value of training data with ``n_features`` columns whose
    squared distances (at most ``4 n_features max|X|^2``) stay finite."""
    return math.sqrt(FLOAT.max / (4.0 * max(int(n_features), 1)))


def check_representable(X, owner: str) -> None:
    """Refuse training data whose values float64 cannot square: a ValueError for
    ``max|X|`` below :data:`SQUARE_MIN` (squares underflow) or above
    :func:`max_representable_abs` (squared distances overflow).  All-zero data passes (see
    :func:`check_not_degenerate`)."""
    a = max_abs(X)
    if a == 0:
        return
    hint = "rescale X (e.g. sklearn.preprocessing.StandardScaler)"
    if a < SQUARE_MIN:
        raise ValueError(
            f"{owner}: X's largest absolute value is {a:.3g}; its square underflows float64 "
            f"(below {FLOAT.tiny:.3g}), so distances, variances and kernel values of X are not "
            f"representable; {hint}"
        )
    limit = max_representable_abs(X.shape[1])
    if a > limit:
        raise ValueError(
            f"{owner}: X's largest absolute value is {a:.3g}; squared distances (up to 4 "
            f"n_features max|X|^2) overflow float64 (above {FLOAT.max:.3g}) for values above "
            f"{limit:.3g}, so they are not representable; {hint}"
        )


def check_not_degenerate(X, owner: str) -> None:
    """Refuse training data of zero variance (two or more samples, every one the same point):
    a ValueError that says so (and whether X is all zero)."""
    n = X.shape[0]
    if n < 2 or X.shape[1] == 0:
        return
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        spread = X.max(axis=0) - X.min(axis=0)
        same = spread.nnz == 0
    else:
        same = bool(np.all(np.max(X, axis=0) == np.min(X, axis=0)))  # no n x d temporary
    if same:
        zero = max_abs(X) == 0
        what = "all zero" if zero else "the same point"
        raise ValueError(
            f"{owner}: X has zero variance: all {n} samples are {what}, so there is nothing "
            "to learn from"
        )


def check_finite(values, what: str, cause: str | Callable[[], str] = "") -> None:
    """Raise :class:`NonFiniteError` if ``values`` (an array, or several) has NaN or inf:
    ``what`` names the values, ``cause`` what produced them (or a function that says it, called
    only then).  One pass over the data."""
    arrays = values if isinstance(values, (list, tuple)) else (values,)
    bad = total = 0
    for A in arrays:
        if A is None:
            continue
        A = A.data if sp.issparse(A) else np.asarray(A)
        total += A.size
        if A.dtype.kind not in "fc":
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(A.sum()):  # NaN and inf propagate into the sum: one fast pass
                continue
        bad += int(A.size - np.count_nonzero(np.isfinite(A)))
    if bad:
        cause = cause() if callable(cause) else cause
        raise NonFiniteError(
            f"{what} are not finite ({bad} of {total} values NaN or infinite)"
            + (f": {cause}" if cause else "")
        )
