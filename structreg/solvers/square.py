"""Square-loss solver for structure-regularised least squares.

One routine serves every square-loss model (RLSC, LapRLSC, DRLSC, GDR/LDR, S-RLSC, ...).
Given a design ``Z`` (n x p) -- explicit features, or the kernel feature map ``V`` with
``K = V V^T`` from :class:`structreg.kernels.KernelFeatureMap` -- it minimises

    J(theta, b) = sum_i c_i ||z_i theta + b - Y_i||^2 + ridge ||theta||^2 + tr(F^T M F),
    F = Z theta + 1 b,

with per-sample loss weights ``c`` (``1/l`` on labeled points, 0 on unlabeled ones), a
symmetric structure penalty ``M`` and an optional unpenalised bias ``b``.  With
``Z = V`` this is the kernel problem

    (1/l) ||J K alpha - Y||^2 + gamma_A alpha^T K alpha + alpha^T K M K alpha

in the coordinates ``beta = V^T alpha``; its stationary ``alpha = P beta`` satisfies the
papers' closed form ``(J K + l gamma_A I + l M K) alpha = J Y`` (checked in the tests).

Factorisation (the choice that is correct for the matrix at hand)
-----------------------------------------------------------------
The normal equations are ``H [theta; b] = A^T C Y`` with ``A = [Z, 1]`` and the symmetric
``H = A^T (C + M) A + diag(ridge, ..., ridge, 0)``, a (p+1) x (p+1) matrix whatever n is.

* If ``H`` is positive definite (the objective is strictly convex: always the case for a PSD
  ``M`` and ``ridge > 0``) it is solved by Cholesky, after checking its reciprocal condition
  number (LAPACK ``?pocon``) so that a numerically singular H is not trusted.
* Otherwise, if H is safely nonsingular (an indefinite M, as DRLSC/GDR/LDR subtract a
  between-class term), by the Bunch-Kaufman factorisation ``H = U D U^T`` (LAPACK ``?sytrf``,
  backward stable for indefinite matrices, at about the cost of a Cholesky factorisation and
  a small fraction of an eigendecomposition's); D's 1x1 and 2x2 blocks give H's number of
  negative eigenvalues (Sylvester's law of inertia): the exact stationary point, and whether
  it is a minimum.
* Otherwise (H singular or numerically so) through the symmetric eigendecomposition with a
  pseudo-inverse: the minimum-norm least-squares stationary point.

When H has a negative eigenvalue the objective is unbounded below and the stationary point is
a saddle -- this is what the papers' closed forms compute; the solution reports
``convex=False`` and a warning is issued.

A singular Gram matrix never reaches this routine: the feature map drops the null space.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, lapack

from .. import _chunks
from .._locality import locality_order
from ..exceptions import NonConvexObjectiveWarning
from .cg import conjugate_gradient


@dataclass
class LeastSquaresSolution:
    """Result of :func:`solve_penalized_least_squares`.

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


def penalty_products(M, A: np.ndarray) -> np.ndarray:
    """``M @ A`` for a sparse matrix, dense array or LinearOperator ``M`` (or 0 if None)."""
    if M is None:
        return np.zeros_like(A)
    MA = M @ A
    return np.asarray(MA.toarray() if hasattr(MA, "toarray") else MA, dtype=float)


def dense_array(a) -> np.ndarray:
    """``a`` as a dense float ndarray (sparse matrices densified)."""
    return np.asarray(a.toarray() if sp.issparse(a) else a, dtype=float)


def _row_sliceable(penalty) -> bool:
    return sp.issparse(penalty) or isinstance(penalty, np.ndarray)


def _penalty_blocks(Z, penalty, fit_intercept: bool, block_elements: int):
    """Yield ``(A_block, MA_block, axis, block)``: row blocks ``A[b]``, ``(M A)[b]`` (axis 0)
    for a sparse / dense M (a sparse M's rows in the order of
    :func:`~structreg._locality.locality_order`, so that a block's rows are graph neighbours),
    column blocks ``A[:, J]``, ``M A[:, J]`` (axis 1) for a LinearOperator.  Memory
    O(block * q) besides Z and M; ``sum_b A_b^T (M A)_b = A^T M A``."""
    n, p = Z.shape
    q = p + int(fit_intercept)
    if _row_sliceable(penalty):
        M = penalty.tocsr() if sp.issparse(penalty) else np.asarray(penalty, dtype=float)
        # a sparse M's rows in an order that keeps the rows of Z they read in cache (when
        # there is more than one block: one block is the product M Z itself)
        several = _chunks.rows_per_block(q, 8 * block_elements) < n
        order = locality_order(M) if several and isinstance(Z, np.ndarray) else None
        for blk in _chunks.row_blocks(n, q, 8 * block_elements):
            s, e = blk.start, blk.stop
            whole = s == 0 and e == n  # one block: the rows themselves, not sliced copies
            rows = blk if whole or order is None else order[s:e]
            Mb = M if whole else M[rows]
            MZ = dense_array(Mb @ Z)
            Ab = dense_array(Z if whole else Z[rows])
            if fit_intercept:
                MZ = np.hstack([MZ, dense_array(Mb.sum(axis=1)).reshape(-1, 1)])
                Ab = np.hstack([Ab, np.ones((e - s, 1))])
            yield Ab, MZ, 0, rows
    else:  # LinearOperator: only products are available
        for blk in _chunks.row_blocks(q, n, 8 * block_elements):  # blocks of columns
            s, e = blk.start, blk.stop
            cols = np.arange(s, e)
            Ab = np.empty((n, e - s))
            z = cols < p
            if z.any():
                Ab[:, z] = dense_array(Z[:, cols[z]])
            Ab[:, ~z] = 1.0
            yield Ab, penalty_products(penalty, Ab), 1, slice(s, e)


def design_penalty_gram(
    Z, penalty, *, fit_intercept: bool = True, block_elements: int | None = None
) -> np.ndarray:
    """``A^T M A`` for ``A = [Z, 1]`` (or Z), accumulated in blocks.

    ``(M A)[b] = M[b, :] @ A`` and ``A^T M A = sum_b A[b]^T (M A)[b]`` over row blocks b (for a
    sparse or dense M; a LinearOperator M is applied to column blocks of A instead), so the
    extra memory is O(q^2 + block * q), never O(n^2) or a copy of Z.  Cost O(n q^2 + nnz(M) q).

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
    penalty : sparse matrix, ndarray, LinearOperator or None
        Symmetric M (n x n).
    fit_intercept : bool
        Append the ones column to Z.
    block_elements : int
        Entries of one block of ``M A`` held at a time.

    Returns
    -------
    G : ndarray of shape (q, q), symmetric (zero if ``penalty`` is None)
    """
    block_elements = _chunks.BLOCK_BYTES // 8 if block_elements is None else block_elements
    q = Z.shape[1] + int(fit_intercept)
    G = np.zeros((q, q))
    if penalty is None:
        return G
    for Ab, MAb, axis, blk in _penalty_blocks(Z, penalty, fit_intercept, block_elements):
        if axis == 0:
            G += Ab.T @ MAb
        else:
            G[:, blk] = np.vstack([dense_array(Z.T @ MAb), MAb.sum(axis=0)])[:q]
    return 0.5 * (G + G.T)


def design_penalty_diagonal(
    Z, penalty, *, fit_intercept: bool = True, block_elements: int | None = None
) -> np.ndarray:
    """``diag(A^T M A)`` (``a_j^T M a_j`` per column of A) in O(nnz(Z) + nnz(M) q) flops.

    Parameters and memory as in :func:`design_penalty_gram`; returns shape (q,).
    """
    block_elements = _chunks.BLOCK_BYTES // 8 if block_elements is None else block_elements
    q = Z.shape[1] + int(fit_intercept)
    d = np.zeros(q)
    if penalty is None:
        return d
    for Ab, MAb, axis, blk in _penalty_blocks(Z, penalty, fit_intercept, block_elements):
        if axis == 0:
            d += np.einsum("ij,ij->j", Ab, MAb)
        else:
            d[blk] = np.einsum("ij,ij->j", Ab, MAb)
    return d


def _potrf(H: np.ndarray, min_rcond: float | None) -> tuple[np.ndarray | None, bool]:
    """``(R, factored)``: the upper Cholesky factor R (``H = R^T R``; the strict lower triangle
    holds junk) if H is safely positive definite (reciprocal condition number above
    ``min_rcond``, default ``p eps``), else None; ``factored`` is False when ``?potrf`` met a
    non-positive pivot (H is not numerically positive definite), True when H was factored.
    H is read, not changed (LAPACK ``?potrf`` / ``?pocon`` on one copy; no finiteness scan:
    callers pass assembled, finite systems)."""
    p = H.shape[0]
    anorm = float(np.abs(H).sum(axis=0).max(initial=0.0))
    c, info = lapack.dpotrf(H, lower=0, clean=0)
    if info != 0:
        return None, False
    rcond, info = lapack.dpocon(c, anorm)
    if info != 0 or rcond <= (p * np.finfo(float).eps if min_rcond is None else min_rcond):
        return None, True
    return c, True


def cholesky_factor(H: np.ndarray, min_rcond: float | None = None) -> np.ndarray | None:
    """The upper Cholesky factor R of a safely positive definite H, else None (see
    :func:`cholesky_attempt`)."""
    return _potrf(H, min_rcond)[0]


def cholesky_attempt(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> tuple[np.ndarray | None, bool]:
    """:func:`cholesky_solve`, saying why it gave up: ``(x, factored)`` with ``factored``
    False when ``?potrf`` met a non-positive pivot (H is not numerically positive definite;
    x is None) and True when H was factored (x is None only if its condition was too poor).
    ``keep``: a dict that receives the factor (``keep["cholesky"]``) for later solves
    (:func:`inverse_quadratic_forms`)."""
    c, factored = _potrf(H, min_rcond)
    if c is None:
        return None, factored
    x, info = lapack.dpotrs(c, rhs, lower=0)
    if info != 0:
        return None, True
    if keep is not None:
        keep["cholesky"] = c
    return x, True


def cholesky_solve(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> np.ndarray | None:
    """``H^{-1} rhs`` by Cholesky if H is safely positive definite (LAPACK ``?potrs``), else
    None (see :func:`cholesky_attempt`)."""
    return cholesky_attempt(H, rhs, min_rcond, keep)[0]


def ldl_factor(H: np.ndarray, min_rcond: float | None = None) -> tuple | None:
    """The Bunch-Kaufman factorisation ``H = U D U^T`` (LAPACK ``?sytrf``, backward stable for
    symmetric indefinite H) if H is safely nonsingular (``?sycon`` reciprocal condition number
    above ``min_rcond``, default ``q eps``), else None.  Returns ``(ldu, ipiv, number of
    negative eigenvalues)``: by Sylvester's law of inertia D (1x1 and 2x2 blocks) has H's
    signs."""
    q = H.shape[0]
    # the blocked factorisation needs the queried workspace: the wrapper's default (n) runs
    # LAPACK's unblocked code, 3-4x slower at q ~ 300
    lwork = int(lapack.dsytrf_lwork(q, lower=0)[0])
    ldu, ipiv, info = lapack.dsytrf(H, lower=0, lwork=max(lwork, 1))
    if info != 0:
        return None
    rcond, info = lapack.dsycon(ldu, ipiv, float(np.max(np.sum(np.abs(H), axis=0))), lower=0)
    if info != 0 or not rcond > (q * np.finfo(float).eps if min_rcond is None else min_rcond):
        return None
    # Sylvester's inertia from D: a 1x1 block (ipiv > 0) is negative or not; a 2x2 block
    # (rows k, k+1 with ipiv[k] = ipiv[k+1] < 0; pairs never overlap, so the negative entries
    # come as consecutive pairs) [[a, b], [b, c]] has one negative eigenvalue when its
    # determinant is negative, else two when a < 0
    d = np.diagonal(ldu)
    negative = int(np.count_nonzero(d[ipiv > 0] < 0))
    first = np.flatnonzero(ipiv < 0)[::2]
    if first.size:
        a, b, c = d[first], ldu[first, first + 1], d[first + 1]
        det = a * c - b * b
        negative += int(np.count_nonzero(det < 0) + 2 * np.count_nonzero((det >= 0) & (a < 0)))
    return ldu, ipiv, negative


def ldl_solve(
    H: np.ndarray, rhs: np.ndarray, min_rcond: float | None = None, keep: dict | None = None
) -> tuple[np.ndarray, int] | None:
    """``H^{-1} rhs`` by the Bunch-Kaufman factorisation (:func:`ldl_factor`) if H is safely
    nonsingular, else None.  Returns ``(x, number of negative eigenvalues)``.  ``keep``: a
    dict that receives the factorisation (``keep["ldl"]``)."""
    factor = ldl_factor(H, min_rcond)
    if factor is None:
        return None
    ldu, ipiv, negative = factor
    x, info = lapack.dsytrs(ldu, ipiv, rhs, lower=0)
    if info != 0:
        return None
    if keep is not None:
        keep["ldl"] = factor
    return x, negative


def inverse_quadratic_forms(factor: dict, B: np.ndarray) -> np.ndarray:
    """``b_i^T H^{-1} b_i`` for the rows ``b_i`` of B, from the factorisation of H that
    :func:`cholesky_solve` or :func:`ldl_solve` kept (``||R^{-T} b_i||^2`` from Cholesky:
    one triangular solve; ``b_i^T (U D U^T)^{-1} b_i`` from Bunch-Kaufman)."""
    Bt = np.asfortranarray(np.asarray(B, dtype=float).T)
    if "cholesky" in factor:
        W, info = lapack.dtrtrs(factor["cholesky"], Bt, lower=0, trans=1)
        return np.einsum("ij,ij->j", W, W)
    ldu, ipiv, _ = factor["ldl"]
    X, info = lapack.dsytrs(ldu, ipiv, Bt, lower=0)
    return np.einsum("ij,ij->j", Bt, X)


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


def eigh_factor(
    H: np.ndarray, size: int | None = None
) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """The pseudo-inverse of the symmetric H through ``eigh``: ``(U, w, psd, singular)`` with
    ``H^+ = U diag(1 / w) U^T`` over the eigenpairs kept.

    Eigenvalues below ``p * eps * max|lambda|`` in magnitude are treated as zero (``p``: H's
    order, or ``size`` when H is the restriction of a larger system to a subspace).
    """
    p = H.shape[0] if size is None else size
    w, U = eigh(H, check_finite=False)
    tol = p * np.finfo(float).eps * max(float(np.max(np.abs(w))), 1e-300)
    keep = np.abs(w) > tol
    return U[:, keep], w[keep], bool(w.min() >= -tol), bool(not keep.all())


def eigh_solve(
    H: np.ndarray, rhs: np.ndarray, size: int | None = None
) -> tuple[np.ndarray, bool, bool]:
    """Pseudo-inverse solve through ``eigh`` (:func:`eigh_factor`): returns
    ``(x, psd, singular)``; a singular H gets the minimum-norm solution."""
    U, w, psd, singular = eigh_factor(H, size)
    return U @ ((U.T @ rhs) / w[:, None]), psd, singular


def solve_symmetric(H: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, str, bool, bool]:
    """Solve ``H x = rhs`` for symmetric H: Cholesky if safely PD, else the Bunch-Kaufman
    ``LDL^T`` if safely nonsingular, else the eigh pseudo-inverse.

    Returns ``(x, factorization, positive_semidefinite, singular)``; see the module docstring.
    """
    H = 0.5 * (H + H.T)
    if H.shape[0] == 0:
        return np.zeros((0, rhs.shape[1])), "cholesky", True, False
    x = cholesky_solve(H, rhs)
    if x is not None:
        return x, "cholesky", True, False
    ldl = ldl_solve(H, rhs)
    if ldl is not None:
        return ldl[0], "ldl", ldl[1] == 0, False
    x, psd, singular = eigh_solve(H, rhs)
    return x, "eigh", psd, singular


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


def _iterative(Z, c, penalty, ridge, fit_intercept, rhs, tol, max_iter, x0=None):
    """Matrix-free conjugate gradients on the normal equations ``H x = rhs``, all columns as
    one block through :func:`~structreg.solvers.cg.conjugate_gradient`, Jacobi-scaled: CG runs
    on ``D^{-1/2} H D^{-1/2} y = D^{-1/2} rhs``, ``x = D^{-1/2} y``, with ``D = |diag(H)|``
    (computed once in O(nnz(M) p + nnz(Z))).  Its stopping rule is therefore
    ``||D^{-1/2} (rhs - H x)||_2 <= tol ||D^{-1/2} rhs||_2``, and a column meeting non-positive
    curvature (an indefinite M) is finished by MINRES on the scaled system.

    Each product costs one pass over Z and one over M: O(nnz(Z) + nnz(M)) per iteration.
    Returns ``(x, factorization, convex, n_iter)``.
    """
    n, p = Z.shape
    size = p + int(fit_intercept)
    reg = np.full((size, 1), ridge)
    if fit_intercept:
        reg[-1] = 0.0
    # Jacobi scaling: |diag(H)|, diag(H)_j = sum_i c_i Z_ij^2 + (Z^T M Z)_jj + ridge
    sq = Z.multiply(Z) if sp.issparse(Z) else Z * Z
    diag = np.asarray(sq.T @ c).ravel() + ridge
    if fit_intercept:
        diag = np.concatenate([diag, [c.sum()]])
    diag += design_penalty_diagonal(Z, penalty, fit_intercept=fit_intercept)
    diag = np.abs(diag)
    diag[diag <= np.finfo(float).tiny] = 1.0
    scale = 1.0 / np.sqrt(diag)[:, None]

    def hessian(V):  # H V = A^T (C + M) A V + R V,  A = [Z, 1]
        F = dense_array(Z @ V[:p])
        if fit_intercept:
            F += V[p]
        G = c[:, None] * F + penalty_products(penalty, F)
        top = dense_array(Z.T @ G)
        out = np.vstack([top, G.sum(axis=0, keepdims=True)]) if fit_intercept else top
        return out + reg * V

    def apply(V, _):
        return scale * hessian(scale * V)

    start = None if x0 is None else x0 / scale
    res = conjugate_gradient(apply, scale * rhs, x0=start, tol=tol, max_iter=max_iter)
    how = "minres" if res.minres.any() else "cg"
    convex = False if res.negative_curvature else None
    return scale * res.x, how, convex, res.n_iter


def solve_penalized_least_squares(
    Z,
    Y: np.ndarray,
    loss_weights: np.ndarray,
    penalty=None,
    *,
    ridge: float,
    fit_intercept: bool = False,
    method: str = "direct",
    tol: float = 1e-8,
    max_iter: int | None = None,
    x0: np.ndarray | None = None,
    leverage_rows: np.ndarray | None = None,
) -> LeastSquaresSolution:
    """Minimise ``sum_i c_i ||z_i theta + b - Y_i||^2 + ridge ||theta||^2 + tr(F^T M F)``.

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (n, p)
        Design: explicit features or a kernel feature map (sparse only with ``method="cg"``).
    Y : ndarray of shape (n, n_outputs)
        Targets (rows with zero loss weight are ignored).
    loss_weights : ndarray of shape (n,)
        Non-negative ``c_i``.
    penalty : sparse matrix, ndarray, LinearOperator or None
        Symmetric ``M`` (n x n) acting on ``F = Z theta + 1 b``.
    ridge : float
        Weight of ``||theta||^2`` (the RKHS norm when Z is a kernel feature map).
    fit_intercept : bool
        Add the unpenalised bias ``b``.
    method : {"direct", "cg"}
        ``"direct"`` factorises the (p+1) x (p+1) normal equations (module docstring);
        ``"cg"`` never forms them: conjugate gradients with matrix-free products
        (O(nnz(Z) + nnz(M)) each), switching to MINRES on non-positive curvature
        (:func:`structreg.solvers.cg.conjugate_gradient`, Jacobi-scaled).
    tol, max_iter : float, int
        Relative residual tolerance (of the Jacobi-scaled system) and iteration cap of the
        iterative method (default ``10 (p + fit_intercept)``); not reaching ``tol`` issues a
        ``ConvergenceWarning``.
    x0 : ndarray of shape (p, n_outputs), or (p + 1, n_outputs) with the intercept last
        Starting point of the iterative method (e.g. the solution at a neighbouring grid
        point: a warm start); ignored by ``"direct"``.
    leverage_rows : ndarray of int, optional
        ``"direct"`` only: also return the leverages ``h_i = c_i a_i^T H^{-1} a_i`` of these
        samples, from the factorisation of the solve (see
        :meth:`~structreg.solvers.SquareLossPath.solve`), from which
        ``leave_one_out_outputs`` gives their exact leave-one-out outputs.
    """
    Y = np.asarray(Y, dtype=float)
    c = np.asarray(loss_weights, dtype=float)
    if method == "cg":
        active = np.flatnonzero(c)  # only the labeled rows carry loss
        p = Z.shape[1]
        Z_act = Z[active]
        rhs = np.asarray(Z_act.T @ (c[active, None] * Y[active]))
        if fit_intercept:
            rhs = np.vstack([rhs, (c[active, None] * Y[active]).sum(axis=0)])
        start = None
        if x0 is not None:
            start = np.zeros((p + int(fit_intercept), Y.shape[1]))
            x0 = np.asarray(x0, dtype=float).reshape(-1, Y.shape[1])
            if x0.shape[0] not in (p, p + int(fit_intercept)):
                raise ValueError(f"x0 must have {p} (or {p + 1} with the intercept) rows")
            start[: x0.shape[0]] = x0
        x, how, convex, n_iter = _iterative(
            Z, c, penalty, ridge, fit_intercept, rhs, tol, max_iter, start
        )
        singular = False
        if convex is False:
            warn_nonconvex("negative curvature met by conjugate gradients")
        coef, intercept = (x[:p], x[p]) if fit_intercept else (x, np.zeros(Y.shape[1]))
        return LeastSquaresSolution(coef, intercept, how, convex, singular, n_iter)
    from .path import SquareLossPath  # the direct solve is a one-point path

    penalties = [] if penalty is None else [penalty]
    path = SquareLossPath(Z, Y, c, penalties, fit_intercept=fit_intercept)
    return path.solve(ridge, leverage_rows=leverage_rows)
