"""Kernel matrices, PSD factorisations and the empirical kernel map.

Every kernel solver in structreg works with a factor ``V`` of the training Gram
matrix, ``K ~= V V^T`` with ``V`` of shape ``(n, r)`` and ``r = rank(K)``.  The
factor is what makes singular Gram matrices harmless (duplicate points, a linear
kernel with ``d < n``): the solvers only ever factorise ``r x r`` matrices that
are positive definite by construction.  A low-rank (Nystroem) factor plugs into
the same solvers.

Kernel names and parameters follow scikit-learn (``gamma`` as in
:func:`sklearn.metrics.pairwise.rbf_kernel`: ``k(x, z) = exp(-gamma ||x - z||^2)``).

``kernel="precomputed"`` follows :class:`sklearn.svm.SVC`: ``fit`` takes the square Gram
matrix ``K`` of the training samples, ``transform`` / ``predict`` the rectangular kernel
between new samples and the training samples (one column per training sample).  The maps
then store training-sample *indices* (``basis_``) instead of points.  What needs distances
between training points (kNN graphs, clustering) uses the kernel-induced distance
``d(i, j)^2 = K_ii + K_jj - 2 K_ij``: the Euclidean distance between the rows of the factor
``V`` (``V V^T = K``) that :class:`KernelFeatureMap` computes, see :func:`kernel_points`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
from scipy.linalg import cholesky, eigh, lapack, solve_triangular
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.cluster import kmeans_plusplus
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._chunks import row_blocks, rows_per_block
from ._numerics import (
    NonFiniteError,
    check_finite,
    check_representable,
    unit_scaled,
)
from ._params import constraints_for
from ._resources import blas_threads, kernel_store_bytes, thread_controller
from ._resources import block_bytes as budget_bytes

KERNELS = ("linear", "rbf", "poly")

_Map = TypeVar("_Map")

PRECOMPUTED_SYMMETRY_RTOL = 1e-8
"""A precomputed Gram matrix is refused when ``max |K - K^T|`` exceeds this share of
``max |K|``."""


def check_precomputed_gram(K: np.ndarray, owner: str) -> None:
    """Refuse a training Gram matrix that is not square or not symmetric (see
    :data:`PRECOMPUTED_SYMMETRY_RTOL`); ``owner`` names the estimator in the message."""
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"{owner} with kernel='precomputed' fits on the square (n_samples, n_samples) "
            f"Gram matrix of the training samples; got an array of shape {K.shape}"
        )
    scale = float(np.abs(K).max()) if K.size else 0.0
    asymmetry = float(np.abs(K - K.T).max()) if K.size else 0.0
    if asymmetry > PRECOMPUTED_SYMMETRY_RTOL * scale:
        raise ValueError(
            f"{owner} with kernel='precomputed': the Gram matrix is not symmetric "
            f"(max |K - K^T| = {asymmetry:.3g}, max |K| = {scale:.3g})"
        )


def validated_samples(estimator: BaseEstimator, X, **kwargs) -> np.ndarray:
    """``validate_data(estimator, X, reset=False, **kwargs)`` for ``transform`` / ``predict``;
    with ``kernel="precomputed"`` a wrong number of columns says they are the training
    samples."""
    try:
        return validate_data(estimator, X, reset=False, **kwargs)
    except ValueError as exc:
        n_train = getattr(estimator, "n_features_in_", None)
        if estimator.kernel != "precomputed" or f"expecting {n_train} features" not in str(exc):
            raise
        raise ValueError(
            f"{exc} With kernel='precomputed', {type(estimator).__name__} takes the "
            f"(n_samples, n_train) kernel between the samples and its {n_train} training "
            "samples, one column per training sample."
        ) from exc


def select_centers(
    X: np.ndarray, n_centers: int, method: str = "uniform", random_state=None
) -> np.ndarray:
    """Row indices of ``n_centers`` Nystroem centres among the rows of ``X``.

    ``"uniform"``: a uniform sample without replacement, O(n).  ``"k-means++"``: the
    k-means++ seeding of scikit-learn (:func:`sklearn.cluster.kmeans_plusplus`, D^2 sampling,
    O(n m d log m)), which spreads the centres over the data and usually gives a better
    approximation for the same m.  ``n_centers >= n`` returns every row.
    """
    n = X.shape[0]
    if n_centers >= n:
        return np.arange(n)
    rng = check_random_state(random_state)
    if method == "uniform":
        return np.sort(rng.choice(n, n_centers, replace=False))
    if method == "k-means++":
        _, idx = kmeans_plusplus(X, n_centers, random_state=rng)
        return np.unique(idx)
    raise ValueError(f"centers must be 'uniform' or 'k-means++', got {method!r}")


def resolve_gamma(X: np.ndarray, kernel: str | Callable, gamma: float | str | None) -> float | None:
    """Return the numeric kernel width for ``X``.

    ``gamma="scale"`` means ``1 / (n_features * X.var())`` as in :class:`sklearn.svm.SVC`
    (1.0 for data of zero variance); ``None`` means ``1 / n_features``.  The linear kernel,
    callables and precomputed kernels ignore gamma.  For data far from unit scale the variance
    is computed on X divided by a power of two near its largest value
    (``unit_scaled``): exactly the same number where ``X.var()`` is
    representable, and no overflow in its sums where it is not; a width float64 cannot hold
    is a ValueError.
    """
    if kernel in ("linear", "precomputed") or callable(kernel):
        return None
    if gamma == "scale":
        s, Xs = unit_scaled(X, far_only=True)
        var = Xs.var()
        if not var > 0:
            return 1.0
        value = 1.0 / (X.shape[1] * var) / s / s
        if not (value > 0 and np.isfinite(value)):
            raise ValueError(
                f"gamma='scale' = 1 / (n_features * X.var()) is not representable in float64 for "
                f"X of variance {var:.3g} * {s * s:.3g} (largest absolute value "
                f"{s:.3g}-{2 * s:.3g}); rescale X or give gamma a number"
            )
        return value
    if gamma is None:
        return 1.0 / X.shape[1]
    return float(gamma)


def kernel_matrix(
    X: np.ndarray,
    Y: np.ndarray | None = None,
    *,
    kernel: str | Callable = "rbf",
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
) -> np.ndarray:
    """Gram matrix ``k(X, Y)`` for ``kernel`` in ``{"linear", "rbf", "poly"}`` or a callable.

    ``rbf``: ``exp(-gamma ||x-z||^2)``; ``poly``: ``(gamma <x,z> + coef0)^degree``;
    a callable gets ``(X, Y)`` and must return the ``(len(X), len(Y))`` matrix.
    ``gamma`` must already be numeric (see :func:`resolve_gamma`).  A matrix with NaN or
    infinite values is a ``NonFiniteError`` naming the kernel and
    its parameters (e.g. a polynomial kernel whose ``gamma <x, z>`` is far above 1).
    """
    if callable(kernel):
        K = np.asarray(kernel(X, X if Y is None else Y), dtype=float)
        expected = (X.shape[0], (X if Y is None else Y).shape[0])
        if K.shape != expected:
            raise ValueError(f"kernel callable returned shape {K.shape}, expected {expected}")
    elif kernel in KERNELS and _plain(X) and (Y is None or _plain(Y)):
        K = _named_kernel(X, X if Y is None else Y, kernel, gamma, degree, coef0)
    else:
        params: dict = {}
        if kernel in ("rbf", "poly"):
            params["gamma"] = gamma
        if kernel == "poly":
            params.update(degree=degree, coef0=coef0)
        with np.errstate(over="ignore", invalid="ignore"):
            K = pairwise_kernels(X, Y, metric=kernel, **params)
    check_finite(
        K, "kernel values", lambda: _kernel_cause(kernel, X.shape[1], gamma, degree, coef0)
    )
    return K


def _kernel_cause(kernel, n_features: int, gamma, degree, coef0) -> str:
    """What produced a kernel matrix, for :func:`kernel_matrix`'s error message."""
    gamma = 1.0 / n_features if gamma is None else gamma
    if callable(kernel):
        return f"the kernel callable {getattr(kernel, '__name__', kernel)!r} returned them"
    if kernel == "poly":
        return (
            f"kernel='poly' with gamma={gamma:.3g}, degree={degree}, coef0={coef0:.3g}: "
            "(gamma <x, z> + coef0)^degree overflows float64 on these points"
        )
    if kernel == "rbf":
        return f"kernel='rbf' with gamma={gamma:.3g} on these points"
    return f"kernel={kernel!r}: the inner products of these points overflow float64"


def _plain(A) -> bool:
    return type(A) is np.ndarray and A.dtype == np.float64 and A.ndim == 2


def _named_kernel(X, Y, kernel: str, gamma, degree: int, coef0: float) -> np.ndarray:
    """:func:`sklearn.metrics.pairwise.pairwise_kernels` for dense float64 arrays, the same
    operations in the same order (so the same bits), without its per-call validation layers
    (three nested parameter checks and input conversions, which cost more than the kernel
    itself on the small blocks of a grid search; measured in the scale guide,
    :doc:`/user_guide/scale`, "Measurements behind the solvers' settings").

    No rescaling is needed here: training data are refused where their squared distances
    would over- or underflow (:func:`~structreg._numerics.check_representable`), and
    ``gamma="scale"`` is resolved scale-safely (:func:`resolve_gamma`); what still overflows
    (e.g. a polynomial kernel on points far from the training data's scale) is caught by
    :func:`kernel_matrix`'s finiteness check."""
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"Incompatible dimension for X and Y matrices: X.shape[1] == {X.shape[1]} while "
            f"Y.shape[1] == {Y.shape[1]}"
        )
    for A in (X,) if Y is X else (X, Y):
        if not np.isfinite(A).all():
            raise ValueError("Input contains NaN or infinity (kernel matrix).")
    if kernel == "linear":
        return X @ Y.T
    gamma = 1.0 / X.shape[1] if gamma is None else gamma
    if kernel == "poly":
        K = X @ Y.T
        K *= gamma
        K += coef0
        K **= degree
        return K
    XX = np.einsum("ij,ij->i", X, X)[:, None]  # squared distances as euclidean_distances
    YY = XX.T if Y is X else np.einsum("ij,ij->i", Y, Y)[None, :]
    K = -2 * (X @ Y.T)
    K += XX
    K += YY
    np.maximum(K, 0, out=K)
    if Y is X:
        np.fill_diagonal(K, 0)
    K *= -gamma
    np.exp(K, out=K)
    return K


SECTION_THREAD_ROWS = 1024
"""Rows per worker thread below which :func:`rbf_section` runs on the calling thread."""


def section_threads(n_rows: int) -> int:
    """Worker threads for a kernel section of ``n_rows`` rows: as many as the BLAS libraries
    use now (the fit's setting, :func:`~structreg._resources.blas_threads_for`, or a caller's
    limit), each given at least :data:`SECTION_THREAD_ROWS` rows."""
    info = thread_controller().select(user_api="blas").info()
    limit = min((lib["num_threads"] for lib in info), default=1)
    return int(max(1, min(limit, n_rows // SECTION_THREAD_ROWS)))


def rbf_section(X: np.ndarray, Y: np.ndarray, gamma: float, threads: int | None = 1) -> np.ndarray:
    """``k(X, Y) = exp(-gamma ||x - y||^2)`` for dense float64 X, Y with finite entries (a
    block of rows of a kernel section: the Nystroem features formed by rows).

    The exponent ``2 gamma x.y - gamma |x|^2 - gamma |y|^2`` is one matrix product of
    ``[X, |x|^2, 1]`` and ``[2 gamma Y, -gamma, -gamma |y|^2]`` (inner dimension d + 2),
    clamped at 0 (the squared distance at 0) and exponentiated in place: three passes over
    the ``len(X) x len(Y)`` result instead of the seven of :func:`kernel_matrix`, which keeps
    scikit-learn's bits (and checks finiteness: not needed here, every value is in [0, 1]).
    Both sides are first centred on the mean of Y (the distances do not change; the
    cancellation in the exponent, which scales with the squared norms, shrinks), so the
    values agree with it to rounding, or are closer to the exact ones.

    ``threads`` (None: :func:`section_threads`) worker threads take a share of the rows each
    (the exponential, most of the time, runs on one core per call), the BLAS libraries held
    to one thread meanwhile; the values do not depend on it.
    """
    mean = Y.mean(axis=0)
    X, Y = X - mean, Y - mean
    d = X.shape[1]
    XA = np.empty((X.shape[0], d + 2))
    XA[:, :d] = X
    XA[:, d] = np.einsum("ij,ij->i", X, X)
    XA[:, d + 1] = 1.0
    YA = np.empty((Y.shape[0], d + 2))
    np.multiply(Y, 2.0 * gamma, out=YA[:, :d])
    YA[:, d] = -gamma
    YA[:, d + 1] = -gamma * np.einsum("ij,ij->i", Y, Y)
    K = np.empty((X.shape[0], Y.shape[0]))

    def fill(rows: slice) -> None:
        np.matmul(XA[rows], YA.T, out=K[rows])
        np.minimum(K[rows], 0.0, out=K[rows])
        np.exp(K[rows], out=K[rows])

    threads = section_threads(len(X)) if threads is None else max(1, int(threads))
    if threads == 1:
        fill(slice(None))
        return K
    bounds = np.linspace(0, len(X), threads + 1).astype(int)
    with blas_threads(1), ThreadPoolExecutor(threads) as pool:
        list(pool.map(fill, [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]))
    return K


class NystroemApproximationWarning(UserWarning):
    """The Nystroem centres leave a large share of the kernel unexplained (see
    ``LandmarkFeatureMap.unexplained_trace_``): the fit may differ markedly from the
    exact-kernel solution.  Use more centres or an exact solver."""


def kernel_diagonal(
    X: np.ndarray,
    *,
    kernel: str | Callable = "rbf",
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
) -> np.ndarray:
    """``k(x_i, x_i)`` for every row of X, without forming ``k(X, X)``.

    Closed forms for the named kernels (``rbf``: 1; ``linear``: ``||x||^2``; ``poly``:
    ``(gamma ||x||^2 + coef0)^degree``); a callable is evaluated on diagonal blocks of 256
    rows: it returns whole blocks, of which only the diagonal is kept, so blocks are kept small
    to bound that waste (not memory: 512 KiB each).  ``gamma`` must already be numeric (see
    :func:`resolve_gamma`).
    """
    if kernel == "rbf":
        return np.ones(X.shape[0])
    if kernel in ("linear", "poly"):
        sq = np.einsum("ij,ij->i", X, X)
        return sq if kernel == "linear" else (gamma * sq + coef0) ** degree
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], 256):
        block = X[start : start + 256]
        out[start : start + len(block)] = np.diag(
            kernel_matrix(block, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
        )
    return out


KernelFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``kernel_fn(A, B)`` returns the Gram block ``k(A, B)`` of shape ``(len(A), len(B))``."""


def kernel_blocks(
    kernel_fn: KernelFunction,
    A: np.ndarray,
    B: np.ndarray,
    *,
    block_bytes: int | None = None,
    block_rows: int | None = None,
) -> Iterator[tuple[slice, np.ndarray]]:
    """Row-blocked kernel evaluation: ``(rows, k(A[rows], B))`` covering the rows of A.

    Each block holds at most ``block_bytes`` (default the memory budget, the
    ``working_memory`` of :func:`structreg.set_config`) of float64, i.e. ``block_bytes /
    (8 len(B))`` rows (at least one), or exactly ``block_rows`` rows when given.
    """
    for rows in row_blocks(A.shape[0], B.shape[0], block_bytes, rows=block_rows):
        yield rows, np.asarray(kernel_fn(A[rows], B), dtype=float)


def kernel_product(
    kernel_fn: KernelFunction,
    A: np.ndarray,
    B: np.ndarray,
    V: np.ndarray,
    *,
    transpose: bool = False,
    block_bytes: int | None = None,
    block_rows: int | None = None,
) -> np.ndarray:
    """The kernel matrix-vector product (FALKON's ``Kernel.mmv``) in row blocks of A.

    ``k(A, B) @ V = [k(A_b, B) @ V]_b`` (V of shape (len(B), m)), or with ``transpose=True``
    ``k(A, B)^T @ V = sum_b k(A_b, B)^T V_b`` (V of shape (len(A), m)); blocks as in
    :func:`kernel_blocks`, so no ``len(A) x len(B)`` array is formed.  A 1-D V gives a 1-D
    result.
    """
    V = np.asarray(V, dtype=float)
    flat = V.ndim == 1
    V2 = V[:, None] if flat else V
    out = np.zeros((B.shape[0] if transpose else A.shape[0], V2.shape[1]))
    for rows, Kb in kernel_blocks(kernel_fn, A, B, block_bytes=block_bytes, block_rows=block_rows):
        if transpose:
            out += Kb.T @ V2[rows]
        else:
            out[rows] = Kb @ V2
    return out[:, 0] if flat else out


class KernelOperator(LinearOperator):
    """``K = k(A, B)`` (``k(A, A)`` when B is None) as a linear operator: the one kernel operator.

    If the whole matrix takes at most ``max_bytes`` it is computed once and stored (products
    are then one BLAS call); otherwise every product ``K @ V`` / ``K^T @ U`` recomputes row
    blocks through ``kernel_product``, each block holding at most the memory budget (the
    ``working_memory`` of :func:`structreg.set_config`) and ``max_bytes`` (at least one
    row), so no ``len(A) x len(B)`` array is ever allocated.  The symmetric operator (B None)
    is its own transpose: ``K^T U`` is ``K U``.

    Parameters
    ----------
    A : ndarray of shape (n, d)
        Row points.
    kernel_fn : callable
        ``kernel_fn(A, B)`` returns the Gram block ``k(A, B)`` of shape ``(len(A), len(B))``,
        e.g. ``functools.partial(kernel_matrix, kernel="rbf", gamma=0.5)``.
    B : ndarray of shape (m, d) or None
        Column points (None: A, the symmetric Gram matrix).
    max_bytes : int or None
        Largest matrix (in bytes, float64) that is stored; default 16 blocks of the memory
        budget (:func:`structreg._resources.kernel_store_bytes`, 1 GiB by default).
    block_size : int or None
        Rows per recomputed block (default from the memory budget above).

    Attributes
    ----------
    stored : bool
        Whether the full matrix is stored.
    matrix : ndarray of shape (n, m) or None
        The stored matrix (None when blockwise).
    block_size : int or None
        Rows per block of a blockwise product (None when stored).
    """

    def __init__(
        self,
        A: np.ndarray,
        kernel_fn: KernelFunction,
        B: np.ndarray | None = None,
        *,
        max_bytes: int | None = None,
        block_size: int | None = None,
    ) -> None:
        A = np.asarray(A, dtype=float)
        self.symmetric = B is None
        B = A if B is None else np.asarray(B, dtype=float)
        if A.ndim != 2 or B.ndim != 2:
            raise ValueError(f"points must be 2-D, got shapes {A.shape} and {B.shape}")
        n, m = A.shape[0], B.shape[0]
        super().__init__(dtype=np.dtype(float), shape=(n, m))
        self.A, self.B, self.kernel_fn = A, B, kernel_fn
        max_bytes = kernel_store_bytes() if max_bytes is None else int(max_bytes)
        self.stored = n * m * 8 <= max_bytes
        self.matrix = np.asarray(kernel_fn(A, B), dtype=float) if self.stored else None
        if self.stored:
            self.block_size = None
        elif block_size is None:
            rows = rows_per_block(m, min(budget_bytes(), max_bytes))
            self.block_size = int(min(rows, max(n, 1)))
        else:
            self.block_size = int(min(max(1, block_size), max(n, 1)))

    def _matmat(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        if self.stored:
            return self.matrix @ V
        return kernel_product(self.kernel_fn, self.A, self.B, V, block_rows=self.block_size)

    def _rmatmat(self, U: np.ndarray) -> np.ndarray:
        if self.symmetric:
            return self._matmat(U)
        U = np.asarray(U, dtype=float)
        if self.stored:
            return self.matrix.T @ U
        return kernel_product(
            self.kernel_fn, self.A, self.B, U, transpose=True, block_rows=self.block_size
        )

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        return self._matmat(np.reshape(v, (-1, 1))).ravel()

    def _rmatvec(self, v: np.ndarray) -> np.ndarray:
        return self._rmatmat(np.reshape(v, (-1, 1))).ravel()

    def _adjoint(self) -> LinearOperator:
        return self if self.symmetric else super()._adjoint()

    def _transpose(self) -> LinearOperator:
        return self if self.symmetric else super()._transpose()


def _pivoted_cholesky(K: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Rank-revealing ``P^T K P = R^T R`` (LAPACK ``?pstrf``); returns (pivots, R[:r])."""
    R, piv, rank, info = lapack.dpstrf(K, lower=0, tol=tol)
    if info < 0:
        raise ValueError(f"pivoted Cholesky failed (LAPACK info={info})")
    return piv[:rank] - 1, np.triu(R[:rank]), piv - 1


def internal_map(feature_map: _Map) -> _Map:
    """``feature_map`` set to NumPy output (``set_output(transform="default")``) whatever the
    global ``sklearn.set_config(transform_output=...)``: the maps a model keeps compute on
    arrays.  Objects without ``set_output`` are returned as they are."""
    set_output = getattr(feature_map, "set_output", None)
    if set_output is not None:
        set_output(transform="default")
    return feature_map


_REBUILT_ON_DEMAND = "rebuilt on demand"
"""Stands for a pickled kernel map's Cholesky factor (see ``KernelFeatureMap.__getstate__``)."""


def output_dtype(X) -> type:
    """The dtype a kernel map returns for the input X: float32 for float32 input (the kernel
    and its factor are computed in float64 and rounded once at the end), else float64."""
    return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64


def in_dtype_of(X, Z: np.ndarray) -> np.ndarray:
    """Z (float64) in :func:`output_dtype` of X."""
    if isinstance(Z, np.ndarray):
        return Z.astype(output_dtype(X), copy=False)
    return Z.astype(output_dtype(X))  # a data frame (set_output): pandas copies lazily


class KernelFeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Explicit finite-dimensional feature map of a kernel over the training samples.

    The training Gram matrix ``K`` (numerical rank r) is written ``K = V V^T`` and every
    sample x gets coordinates ``phi(x) = P^T k(X_basis, x)`` with ``phi(x_i) = V_i`` on the
    training set, so ``phi(x)^T phi(z) = k(x, z)`` whenever x or z is a training point.
    A linear model on ``phi`` is therefore exactly a kernel model ``f(x) = sum_i alpha_i
    k(x_i, x)`` with ``alpha = P beta``: the kernel solvers of structreg are linear solvers on
    this map, which makes singular Gram matrices (duplicates, low-rank kernels) harmless.

    Two factorisations are offered:

    * ``method="cholesky"`` (default): pivoted Cholesky ``?pstrf``, O(n^2 r).  Only the r
      pivot samples ("basis") are needed to map new points:
      ``phi(x) = R_11^{-T} k(X_pivots, x)``.
    * ``method="eigh"``: ``K = U Lambda U^T``, ``phi(x) = Lambda_r^{-1/2} U_r^T k(X, x)``, the
      classical empirical kernel map (coordinates along the kernel principal axes).

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the (n_samples, n_samples) Gram matrix of the
        training samples (square and symmetric, else ``ValueError``), ``transform`` the
        (n, n_samples) kernel between new samples and the training samples.
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn (``"scale"``: ``1 / (n_features * X.var())``).
    degree : int, default=3
    coef0 : float, default=1.0
    method : {"cholesky", "eigh"}, default="cholesky"
    rtol : float, optional
        Pivots / eigenvalues below ``rtol * max(diag(K))`` are dropped (default ``n * eps``).

    Attributes
    ----------
    gamma_ : float or None
        Numeric kernel width used.
    basis_ : ndarray of shape ``(n_basis, n_features_in_)``
        Training samples needed to map new points (all of them for ``"eigh"``);
        ``kernel="precomputed"``: their indices, shape (n_basis,) (the columns of the kernel
        matrices given to ``transform`` that are read).
    basis_indices_ : ndarray of shape (n_basis,)
        Their row indices in the training set.
    cholesky_factor_ : ndarray of shape ``(n_components_, n_components_)`` or None
        ``"cholesky"``: upper-triangular ``R_11``, ``transform(X) = k(X, basis_) R_11^{-1}``.
    projection_ : ndarray of shape ``(n_basis, n_components_)`` or None
        ``"eigh"``: ``U_r Lambda_r^{-1/2}`` with ``transform(X) = k(X, basis_) @ projection_``.
    n_components_ : int
        Numerical rank r of the training Gram matrix.

    Notes
    -----
    The output columns are named ``kernelfeaturemap0``, ``kernelfeaturemap1``, ... (the class
    name, lower case, and the column number; ``get_feature_names_out``), as for
    scikit-learn's :class:`~sklearn.kernel_approximation.Nystroem`, so
    ``set_output(transform="pandas")`` returns DataFrames.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.kernels import KernelFeatureMap
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> Z = KernelFeatureMap(kernel="rbf", gamma=0.5).fit_transform(X)
    >>> bool(np.allclose(Z @ Z.T, np.exp(-0.5 * ((X[:, None] - X) ** 2).sum(-1))))
    True
    """

    def __init__(
        self, kernel="rbf", gamma="scale", degree=3, coef0=1.0, method="cholesky", rtol=None
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.rtol = rtol

    def kernel_(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """The fitted kernel ``k(X, Y)`` (with the resolved ``gamma_``).

        ``kernel="precomputed"``: X holds kernel values against the training samples, so
        ``Y=None`` returns X (the training Gram matrix) and an index array ``Y`` (e.g.
        ``basis_``) X's columns at those training samples."""
        if self.kernel == "precomputed":
            return X if Y is None else X[:, Y]
        try:
            return kernel_matrix(
                X, Y, kernel=self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0
            )
        except NonFiniteError as exc:
            if not (isinstance(self.gamma, str) and self.gamma == "scale" and self.gamma_):
                raise
            variance = 1.0 / (self.n_features_in_ * self.gamma_)
            raise NonFiniteError(
                f"{exc} (gamma='scale' gave gamma={self.gamma_:.3g} = 1 / (n_features * "
                f"X.var()) for training data of variance {variance:.3g}; points far from the "
                "training data's scale overflow it: rescale X or give gamma a number)"
            ) from None

    def fit(self, X, y=None):
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit on X and return ``V`` with ``V V^T = K`` (up to the rank tolerance)."""
        return in_dtype_of(X, self._factor_basis(self._validated_training(X)))

    def _validated_training(self, X) -> np.ndarray:
        """Parameters and training data checked (a precomputed Gram matrix: square and
        symmetric); sets ``gamma_``."""
        self._validate_params()
        X = validate_data(self, X, dtype=float)
        if self.kernel == "precomputed":
            check_precomputed_gram(X, type(self).__name__)
        else:
            check_representable(X, type(self).__name__)
        self.gamma_ = resolve_gamma(X, self.kernel, self.gamma)
        return X

    def _validated_new(self, X) -> np.ndarray:
        """Samples to map, checked against the training data (``transform``)."""
        check_is_fitted(self)
        return validated_samples(self, X, dtype=float)

    def _factor_basis(self, B: np.ndarray) -> np.ndarray:
        """Factor ``k(B, B) = V V^T``; keep what is needed to map new points; return V."""
        K = self.kernel_(B)
        n = K.shape[0]
        scale = float(np.max(np.abs(np.diag(K)))) if n else 0.0
        if not np.isfinite(scale):
            raise ValueError("kernel matrix has non-finite entries")
        tol = (n * np.finfo(float).eps if self.rtol is None else self.rtol) * scale
        if scale == 0.0:
            idx, R, proj, V = np.zeros(0, int), None, np.zeros((0, 0)), np.zeros((n, 0))
        elif self._factorization() == "cholesky":
            idx, R, order = _pivoted_cholesky(K, tol)
            V = np.empty((n, len(idx)))
            V[order] = R.T
            R, proj = R[:, : len(idx)], None
        else:
            w, U = eigh(K)
            keep = w > tol
            w, U = w[keep][::-1], U[:, keep][:, ::-1]
            # LAPACK may return either sign of an eigenvector, and builds differ: fix it (the
            # entry of largest magnitude positive) so the map is the same with every build
            top = U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])]
            U = U * np.where(top < 0, -1.0, 1.0)
            idx, R, proj, V = np.arange(n), None, U / np.sqrt(w), U * np.sqrt(w)
        self.basis_indices_ = idx
        self.basis_ = idx if self.kernel == "precomputed" else B[idx]
        self.cholesky_factor_ = R
        self.projection_ = proj
        self.n_components_ = V.shape[1]
        return V

    def _factorization(self) -> str:
        return self.method

    # -- the Cholesky factor is not pickled: predict needs basis_ and the model's dual_coef_,
    # and R (O(n_basis^2)) is rebuilt from basis_ when transform or dual_coef needs it.
    @property
    def cholesky_factor_(self) -> np.ndarray | None:
        R = self.__dict__.get("_cholesky_factor")
        if isinstance(R, str):  # _REBUILT_ON_DEMAND (a pickled map)
            # k(basis_, basis_) = R^T R: the leading block of the pivoted factor, in pivot
            # order (Cholesky factors of a positive definite matrix are unique)
            R = cholesky(self.kernel_(self.basis_), lower=False, check_finite=False)
            self.__dict__["_cholesky_factor"] = R
        return R

    @cholesky_factor_.setter
    def cholesky_factor_(self, R: np.ndarray | None) -> None:
        self.__dict__["_cholesky_factor"] = R

    def __getstate__(self):
        state = super().__getstate__()
        R = state.get("_cholesky_factor")
        if isinstance(R, np.ndarray) and self.kernel != "precomputed":
            state = {**state, "_cholesky_factor": _REBUILT_ON_DEMAND}
        return state

    @property
    def _n_features_out(self) -> int:
        """Number of output columns (``get_feature_names_out``)."""
        return self.n_components_

    def transform(self, X):
        given, X = X, self._validated_new(X)
        return self._map(X, output_dtype(given))

    def _section_kernel(self, fused: bool) -> KernelFunction:
        """The kernel function of the sections ``k(X, basis_)``: :meth:`kernel_`, or with
        ``fused`` and the rbf kernel :func:`rbf_section` (the same values to rounding, in
        fewer passes: for the passes over many rows that a fit makes, not ``transform``)."""
        if fused and self.kernel == "rbf":
            return functools.partial(rbf_section, gamma=self.gamma_, threads=None)
        return self.kernel_

    def _map(self, X: np.ndarray, dtype=float, *, fused: bool = False) -> np.ndarray:
        """``transform`` of validated samples (no checks): the features of X's rows (the
        kernel sections by ``_section_kernel``)."""
        # row blocks keep the kernel section k(X, basis) at O(block * n_basis) memory
        n, p = X.shape[0], self.n_components_
        out = None
        sections = kernel_blocks(self._section_kernel(fused), X, self.basis_) if n * p else ()
        for rows, Kx in sections:
            if self.cholesky_factor_ is None:
                F = Kx @ self.projection_
            else:  # Kx R^{-1}: a triangular solve on Kx^T (Fortran-ordered), in place when
                # Kx is the block's own array (2-2.5x faster than a solve into a copy)
                own = not np.may_share_memory(Kx, X)
                F = solve_triangular(
                    self.cholesky_factor_, Kx.T, trans="T", overwrite_b=own, check_finite=False
                ).T
            if rows.stop - rows.start == n and F.dtype == dtype:
                return F  # one block: the features themselves, not copied
            if out is None:
                out = np.empty((n, p), dtype=dtype)
            out[rows] = F
        return np.empty((n, p), dtype=dtype) if out is None else out

    def decision(self, X: np.ndarray, dual_coef: np.ndarray, *, fused: bool = False) -> np.ndarray:
        """``k(X, basis_) @ dual_coef``, formed in row blocks (``kernel_product``; the kernel
        sections by ``_section_kernel``)."""
        return kernel_product(self._section_kernel(fused), X, self.basis_, dual_coef)

    def dual_coef(self, coef: np.ndarray) -> np.ndarray:
        """Expansion coefficients over ``basis_`` of the linear function ``phi(x) @ coef``."""
        if self.cholesky_factor_ is None:
            return self.projection_ @ coef
        return solve_triangular(self.cholesky_factor_, coef)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


KernelFeatureMap._parameter_constraints = constraints_for(KernelFeatureMap)


def kernel_points(K: np.ndarray) -> np.ndarray:
    """Points whose Euclidean geometry is that of a precomputed kernel: the rows of ``V``
    with ``V V^T = K`` (pivoted Cholesky, :class:`KernelFeatureMap`), so
    ``||v_i - v_j||^2 = K_ii + K_jj - 2 K_ij`` (the kernel-induced distance) and
    ``v_i^T v_j = K_ij`` (up to the rank tolerance).  What needs distances between training
    points (kNN graphs, clustering) runs on them when the kernel is precomputed."""
    return internal_map(KernelFeatureMap(kernel="precomputed")).fit_transform(K)


class LandmarkFeatureMap(KernelFeatureMap):
    """Kernel feature map spanned by given landmark points (centres).

    ``phi(x) = R^{-T} k(C_pivots, x)`` with ``k(C, C) = R^T R`` (pivoted Cholesky of the
    landmarks' Gram matrix), so ``phi(x)^T phi(z)`` is the Nystroem approximation of
    ``k(x, z)`` and a linear model on ``phi`` is ``f(x) = sum_j w_j k(c_j, x)`` with the RKHS
    norm ``w^T k(C, C) w = ||R w||^2``.  This is the hidden layer of a (generalized) RBF
    network with regularised output weights, and the Nystroem feature map.

    Parameters
    ----------
    landmarks : array-like of shape (n_landmarks, n_features)
        The centres.  ``gamma="scale"`` is resolved on the data given to ``fit``.
    kernel, gamma, degree, coef0, rtol
        As in :class:`KernelFeatureMap`, but for ``kernel="precomputed"``, which is refused
        (the landmarks are points).

    Attributes
    ----------
    basis_ : ndarray of shape ``(n_basis, n_features_in_)``
        Landmarks kept (a numerically independent subset).
    basis_indices_ : ndarray of shape (n_basis,)
        Their rows in ``landmarks``.
    cholesky_factor_, n_components_, gamma_
        As in :class:`KernelFeatureMap`.
    unexplained_trace_ : float
        Share of the kernel's trace over the samples given to ``fit_transform`` that the
        landmarks miss, ``1 - sum_i ||phi(x_i)||^2 / sum_i k(x_i, x_i)`` (in [0, 1]; 0 when
        every sample is in the span of the landmarks).  The Nystroem residual ``K - Phi
        Phi^T`` is positive semi-definite, and this is its trace relative to that of K: a
        cheap measure of how much of the kernel the approximation drops.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.kernels import LandmarkFeatureMap
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> LandmarkFeatureMap(landmarks=X[:5], gamma=1.0).fit_transform(X).shape
    (50, 5)
    """

    def __init__(self, landmarks=None, kernel="rbf", gamma="scale", degree=3, coef0=1.0, rtol=None):
        self.landmarks = landmarks
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.rtol = rtol

    def _factorization(self) -> str:
        return "cholesky"

    def fit_transform(self, X, y=None):
        given, X = X, self.fit_landmarks(X)
        Z = self._map(X, output_dtype(given))  # X is validated: no second check of its names
        self.set_explained(X, float(np.einsum("ij,ij->", Z, Z)))
        return in_dtype_of(given, Z)

    def fit_landmarks(self, X) -> np.ndarray:
        """Everything of ``fit_transform`` but mapping X and ``unexplained_trace_``: the
        parameters and X checked, ``gamma_`` resolved on X, the landmarks factored.  Returns
        the validated X, whose features a caller may then form a block of rows at a time
        (``transform``) and whose explained trace it passes to :meth:`set_explained`."""
        self._validate_params()
        if self.kernel == "precomputed":
            raise ValueError(
                "LandmarkFeatureMap does not take kernel='precomputed': its landmarks are "
                "points, whose kernel values a Gram matrix of the samples does not hold"
            )
        X = validate_data(self, X, dtype=float)
        check_representable(X, type(self).__name__)
        if self.landmarks is None:
            raise ValueError("LandmarkFeatureMap needs landmarks")
        C = np.asarray(self.landmarks, dtype=float)
        if C.ndim != 2 or C.shape[1] != X.shape[1] or not np.all(np.isfinite(C)):
            raise ValueError(
                f"landmarks must be a finite array of shape (n_landmarks, {X.shape[1]}), "
                f"got shape {C.shape}"
            )
        self.gamma_ = resolve_gamma(X, self.kernel, self.gamma)
        self._factor_basis(C)
        return X

    def set_explained(self, X: np.ndarray, explained: float) -> float:
        """Set and return ``unexplained_trace_`` from ``explained = sum_i ||phi(x_i)||^2``
        over the training samples X (validated)."""
        diag = kernel_diagonal(
            X, kernel=self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0
        )
        trace = float(diag.sum())
        self.unexplained_trace_ = max(0.0, 1.0 - explained / trace) if trace > 0 else 0.0
        return self.unexplained_trace_


class EmpiricalKernelMap(KernelFeatureMap):
    """The empirical kernel map ``phi(x) = Lambda_r^{-1/2} U_r^T k(X_train, x)``.

    A :class:`KernelFeatureMap` with ``method="eigh"``: coordinates along the kernel
    principal axes of the training set, ``phi(x_i)^T phi(x_j) = K_ij``.  DRLSC uses this map
    for its nonlinear version.  Parameters and attributes as in :class:`KernelFeatureMap`.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.kernels import EmpiricalKernelMap
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> Z = EmpiricalKernelMap(kernel="linear").fit_transform(X)
    >>> Z.shape
    (20, 3)
    """

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=1.0, rtol=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.rtol = rtol

    def _factorization(self) -> str:
        return "eigh"


class KernelExpansion(KernelFeatureMap):
    """The kernel section ``phi(x) = k(X_train, x)``: a model ``phi(x) @ alpha`` is the full
    kernel expansion ``f(x) = sum_i alpha_i k(x_i, x)`` over every training sample.

    Nothing is factored (``fit`` stores the samples), so it is what the iterative exact-kernel
    solver uses: that solver only needs products with the Gram matrix.  ``transform`` returns
    the ``(n_samples, n_train)`` section, and ``dual_coef(coef)`` is ``coef`` itself.
    Parameters as in :class:`KernelFeatureMap` (``method`` and ``rtol`` unused).
    """

    def fit(self, X, y=None):
        X = self._validated_training(X)
        self.basis_indices_ = np.arange(X.shape[0])
        self.basis_ = self.basis_indices_ if self.kernel == "precomputed" else X
        self.cholesky_factor_ = self.projection_ = None
        self.n_components_ = X.shape[0]
        return self

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)

    def transform(self, X):
        return in_dtype_of(X, self.kernel_(self._validated_new(X), self.basis_))

    def dual_coef(self, coef: np.ndarray) -> np.ndarray:
        return coef


EmpiricalKernelMap._parameter_constraints = constraints_for(EmpiricalKernelMap)
KernelExpansion._parameter_constraints = constraints_for(KernelExpansion)
LandmarkFeatureMap._parameter_constraints = constraints_for(LandmarkFeatureMap)
