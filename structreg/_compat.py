"""Compatibility with the supported versions of scikit-learn, SciPy and pandas, in one module.

In the spirit of imbalanced-learn's ``sklearn_compat``, every name that structreg takes from
the private API of a dependency -- a name that starts with an underscore or lives in a private
module, such as ``sklearn.utils._param_validation`` -- is imported here and nowhere else
(``tests/test_compat.py`` walks the package's syntax trees and fails on any other module that
imports one), and every difference between the supported versions of SciPy and pandas that
structreg meets is bridged here.  A change in a dependency is then a change of this one file.

scikit-learn (private names, the same in every supported version, >= 1.6.0):

* the parameter-validation helpers :class:`Interval`, :class:`StrOptions`,
  :class:`HasMethods`, :func:`validate_parameter_constraints`, :func:`make_constraint` and
  :class:`InvalidParameterError` (``sklearn.utils._param_validation``);
* :func:`safe_indexing` (``_safe_indexing``: rows of an array, a sparse matrix, a DataFrame or
  a list), :func:`safe_split` (``metaestimators._safe_split``: the train/test rows of X -- and
  the train columns of a precomputed Gram matrix -- and of y), :func:`get_feature_names` and
  :func:`check_feature_names` (``validation._get_feature_names`` / ``_check_feature_names``).

pandas (optional; the floor is 1.5.0):

* :func:`label_array`: ``np.asarray`` of a label Series, with a nullable integer Series
  (``Int64`` holding ``pd.NA``) as float64 with NaN, as pandas 2 converts it (pandas 1.5 gives
  an object array of ints and ``pd.NA``).

SciPy (the floor is 1.9.2):

* :func:`minres`: the tolerance is ``rtol`` since SciPy 1.12 (``tol`` before; ``tol`` removed
  in 1.14);
* :func:`sytrs`: the solve with a Bunch-Kaufman factorisation from LAPACK ``?sytrf``:
  ``lapack.dsytrs`` where SciPy wraps it (1.15 and later), else the same algorithm in NumPy;
* :func:`highs_class`: the HiGHS model class of SciPy's bindings (``scipy.optimize._highspy``,
  private; SciPy >= 1.15) or of ``highspy``, None where neither is there.
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy.linalg import lapack
from scipy.sparse import linalg as _sparse_linalg
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)
from sklearn.utils.metaestimators import _safe_split
from sklearn.utils.validation import _check_feature_names, _get_feature_names

try:  # the module that defines it (scikit-learn >= 1.4)
    from sklearn.utils._indexing import _safe_indexing
except ImportError:  # pragma: no cover - re-exported from sklearn.utils in every version
    from sklearn.utils import _safe_indexing

__all__ = [
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "check_feature_names",
    "get_feature_names",
    "highs_class",
    "label_array",
    "make_constraint",
    "minres",
    "safe_indexing",
    "safe_split",
    "sytrs",
    "validate_parameter_constraints",
]

# ------------------------------------------------------------------------------ scikit-learn
safe_indexing = _safe_indexing
"""``safe_indexing(X, indices, axis=0)``: ``sklearn.utils._safe_indexing``."""

safe_split = _safe_split
"""``safe_split(estimator, X, y, indices, train_indices=None)``:
``sklearn.utils.metaestimators._safe_split`` (a precomputed Gram matrix is cut on both axes)."""

get_feature_names = _get_feature_names
"""``get_feature_names(X)``: X's column names (a DataFrame's), else None."""

check_feature_names = _check_feature_names
"""``check_feature_names(estimator, X, *, reset)``: set or check ``feature_names_in_``."""


# ------------------------------------------------------------------------------------ pandas
def label_array(y) -> np.ndarray:
    """``np.asarray(y)``, except that a pandas nullable integer Series or array (``Int64``,
    ``UInt8``, ...) that holds ``pd.NA`` becomes float64 with NaN there, whatever the pandas
    version (pandas 2 converts it so; pandas 1.5 gives an object array of ints and ``pd.NA``)."""
    dtype = getattr(y, "dtype", None)
    if (
        dtype is not None
        and not isinstance(dtype, np.dtype)
        and getattr(dtype, "kind", None) in ("i", "u")
        and hasattr(y, "to_numpy")
        and bool(y.isna().any())
    ):
        return y.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(y)


# ------------------------------------------------------------------------------------- SciPy
MINRES_TOL = "rtol" if "rtol" in inspect.signature(_sparse_linalg.minres).parameters else "tol"
"""The name of :func:`scipy.sparse.linalg.minres`' relative tolerance in this SciPy."""


def minres(A, b, *, x0=None, rtol=1e-5, maxiter=None, callback=None):
    """:func:`scipy.sparse.linalg.minres` with the relative tolerance ``rtol`` under the name
    that the installed SciPy takes (``rtol`` from 1.12, ``tol`` before).  Returns
    ``(x, info)``."""
    return _sparse_linalg.minres(
        A, b, x0=x0, maxiter=maxiter, callback=callback, **{MINRES_TOL: rtol}
    )


HAVE_LAPACK_SYTRS = hasattr(lapack, "dsytrs")
"""Whether SciPy wraps LAPACK ``?sytrs`` (SciPy >= 1.15)."""


def sytrs(ldu: np.ndarray, ipiv: np.ndarray, b: np.ndarray, lower: int = 0):
    """Solve ``A x = b`` from the Bunch-Kaufman factorisation ``A = U D U^T`` that LAPACK
    ``dsytrf(A, lower=0)`` returned as ``(ldu, ipiv)``; ``b`` of shape (n,) or (n, k).
    Returns ``(x, info)`` like ``scipy.linalg.lapack.dsytrs``, which it calls where SciPy has
    it; else :func:`_sytrs_upper` (the same algorithm in NumPy; ``lower=0`` only)."""
    if HAVE_LAPACK_SYTRS:
        return lapack.dsytrs(ldu, ipiv, b, lower=lower)
    if lower:  # pragma: no cover - structreg factors the upper triangle only
        raise NotImplementedError("sytrs without LAPACK ?sytrs: lower=0 only")
    return _sytrs_upper(ldu, ipiv, b), 0


def _sytrs_upper(ldu: np.ndarray, ipiv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK ``DSYTRS`` (``UPLO = 'U'``) in NumPy: ``x = A^{-1} b`` with ``A = U D U^T``.

    ``ldu`` and ``ipiv`` as ``dsytrf`` returns them: D's 1x1 blocks (``ipiv[k] > 0``, row k
    swapped with row ``ipiv[k] - 1``, 1-based pivots as LAPACK's) and 2x2 blocks (rows
    ``k - 1, k`` with ``ipiv[k - 1] = ipiv[k] < 0``, row ``k - 1`` swapped with
    ``-ipiv[k] - 1``) on and above the diagonal, the unit upper triangular U's multipliers
    above them; the strict lower triangle is not read.  Two sweeps over the columns, each a
    rank-one (two for a 2x2 block) update of the right-hand sides, as in the reference
    implementation: ``U D y = b`` from the last column to the first, then ``U^T x = y``.
    """
    A = np.asarray(ldu, dtype=float)
    piv = np.asarray(ipiv)
    vector = np.ndim(b) == 1
    B = np.array(b, dtype=float, copy=True, ndmin=2, order="F")
    if vector:
        B = B.T
    n = A.shape[0]
    if B.shape[0] != n or A.shape != (n, n) or piv.shape != (n,):
        raise ValueError(f"sytrs: shapes {A.shape}, {piv.shape}, {np.shape(b)} do not match")

    def swap(i: int, j: int) -> None:
        if i != j:
            B[[i, j]] = B[[j, i]]

    # U D y = b: from the last column to the first
    k = n - 1
    while k >= 0:
        if piv[k] > 0:  # 1x1 block
            swap(k, piv[k] - 1)
            B[:k] -= np.outer(A[:k, k], B[k])
            B[k] /= A[k, k]
            k -= 1
        else:  # 2x2 block in rows k - 1, k
            swap(k - 1, -piv[k] - 1)
            B[: k - 1] -= np.outer(A[: k - 1, k], B[k])
            B[: k - 1] -= np.outer(A[: k - 1, k - 1], B[k - 1])
            akm1k = A[k - 1, k]
            akm1 = A[k - 1, k - 1] / akm1k
            ak = A[k, k] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = B[k - 1] / akm1k
            bk = B[k] / akm1k
            B[k - 1] = (ak * bkm1 - bk) / denom
            B[k] = (akm1 * bk - bkm1) / denom
            k -= 2
    # U^T x = y: from the first column to the last
    k = 0
    while k < n:
        if piv[k] > 0:
            B[k] -= A[:k, k] @ B[:k]
            swap(k, piv[k] - 1)
            k += 1
        else:  # 2x2 block in rows k, k + 1
            B[k] -= A[:k, k] @ B[:k]
            B[k + 1] -= A[:k, k + 1] @ B[:k]
            swap(k, -piv[k] - 1)
            k += 2
    return B[:, 0] if vector else B


def highs_class():
    """The HiGHS model class (``_Highs``) from SciPy's bindings (SciPy >= 1.15) or from
    ``highspy``; None when neither is installed (callers then use
    :func:`scipy.optimize.linprog`)."""
    try:
        from scipy.optimize._highspy._core import _Highs

        return _Highs
    except ImportError:
        pass
    try:  # pragma: no cover - depends on the installed SciPy
        from highspy._core import _Highs

        return _Highs
    except ImportError:  # pragma: no cover
        return None
