"""The products of a design with the loss weights and the penalties: the parts of the normal
equations.

For a design ``A = [Z, 1]`` (or ``Z``; explicit features or a kernel feature map), loss weights
``C = diag(c)`` and symmetric structure penalties ``M_k`` (sparse, dense or LinearOperator),
the square-loss normal equations are assembled from

    A^T C A  (:func:`weighted_gram`),   A^T M_k A  (:func:`design_penalty_gram`),

and their weighted sum (:func:`add_weighted`); the matrix-free solvers need only
``M F`` (:func:`penalty_products`) and ``diag(A^T M A)`` (:func:`design_penalty_diagonal`, a
Jacobi preconditioner).  The penalty products run in blocks of rows (or columns), so the
memory is O(q^2 + block * q) besides Z and M, never O(n^2) or a copy of Z.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .. import _chunks, _resources
from .._locality import locality_order


def penalty_products(M, A: np.ndarray) -> np.ndarray:
    """``M @ A`` for a sparse matrix, dense array or LinearOperator ``M`` (or 0 if None)."""
    if M is None:
        return np.zeros_like(A)
    MA = M @ A
    return np.asarray(MA.toarray() if hasattr(MA, "toarray") else MA, dtype=float)


def dense_array(a) -> np.ndarray:
    """``a`` as a dense float ndarray (sparse matrices densified)."""
    return np.asarray(a.toarray() if sp.issparse(a) else a, dtype=float)


def weighted_gram(A: np.ndarray, c: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """``[A, 1]^T diag(c) [A, 1]`` (or ``A^T diag(c) A``), the ones column not formed."""
    p = A.shape[1]
    G = np.empty((p + int(fit_intercept),) * 2)
    G[:p, :p] = A.T @ (c[:, None] * A)
    if fit_intercept:
        G[:p, p] = G[p, :p] = A.T @ c
        G[p, p] = c.sum()
    return G


def add_weighted(H: np.ndarray, weights: Sequence[float], parts: Sequence) -> np.ndarray:
    """``H += sum_k w_k parts_k`` in place (zero weights skipped); returns H."""
    for w, P in zip(weights, parts, strict=True):
        if w != 0:
            H += w * P
    return H


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
    block_elements = _resources.block_bytes() // 8 if block_elements is None else block_elements
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
    block_elements = _resources.block_bytes() // 8 if block_elements is None else block_elements
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
