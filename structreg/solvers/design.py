"""The products of a design with the loss weights and the penalties: the parts of the normal
equations.

For a design ``A = [Z, 1]`` (or ``Z``; explicit features or a kernel feature map), loss weights
``C = diag(c)`` and symmetric structure penalties ``M_k`` (sparse, dense or LinearOperator),
the square-loss normal equations are assembled from

    A^T C A  (:func:`weighted_gram`),   A^T M_k A  (:func:`design_penalty_gram`),

and their weighted sum (:func:`add_weighted`); the matrix-free solvers need only
``M F`` (:func:`penalty_products`) and ``diag(A^T M A)`` (:func:`design_penalty_diagonal`, a
Jacobi preconditioner).  The penalty products run in blocks of rows (or columns), so the
memory is O(q^2 + block * q) besides Z and M, never O(n^2) or a copy of Z.  A design too
large to hold is a :class:`RowDesign`, whose rows are formed when read: then not even Z is
held.
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


class RowDesign:
    """A design ``Z`` (n x p) computed a block of rows at a time instead of held (Nystroem
    features of more points than the memory budget keeps: n x m floats).

    Parameters
    ----------
    n_rows, n_cols : int
    rows : callable
        ``rows(idx)`` returns ``Z[idx]`` (float64, shape ``(len(idx), n_cols)``) for an array
        of row indices.
    product : callable or None
        ``product(V)`` returns ``Z @ V`` (e.g. a kernel expansion ``k(X, C) R^{-1} V``
        that skips forming Z); None: row blocks of ``rows`` times V.

    It takes ``Z[idx]`` and ``Z @ V``, and :func:`design_penalty_gram` (without intercept)
    forms ``Z^T M Z`` from it in row blocks, computing each row of Z once for a sparse M
    whose nonzeros lie near the diagonal in the locality order (the rest are recomputed);
    that pass also records ``squared_norm_``, ``||Z||_F^2`` (None before it;
    :meth:`squared_norm` computes it when no such pass ran).
    """

    ndim = 2

    def __init__(self, n_rows: int, n_cols: int, rows, product=None) -> None:
        self.shape = (int(n_rows), int(n_cols))
        self._rows = rows
        self._product = product
        self.squared_norm_: float | None = None

    def __getitem__(self, idx) -> np.ndarray:
        if isinstance(idx, slice):
            idx = np.arange(*idx.indices(self.shape[0]))
        elif np.asarray(idx).dtype == bool:
            idx = np.flatnonzero(idx)
        return np.asarray(self._rows(np.atleast_1d(idx)), dtype=float).reshape(-1, self.shape[1])

    def __matmul__(self, V) -> np.ndarray:
        if self._product is not None:
            return self._product(V)
        V = np.asarray(V, dtype=float)
        out = np.empty((self.shape[0], *V.shape[1:]))
        for blk in _chunks.row_blocks(self.shape[0], self.shape[1]):
            out[blk] = self[blk] @ V
        return out

    def squared_norm(self) -> float:
        """``||Z||_F^2``: the value a penalty pass recorded, else one pass over the rows."""
        if self.squared_norm_ is None:
            blocks = _chunks.row_blocks(self.shape[0], self.shape[1])
            self.squared_norm_ = float(
                sum(np.einsum("ij,ij->", B, B) for B in map(self.__getitem__, blocks))
            )
        return self.squared_norm_


def _row_design_penalty_gram(Z: RowDesign, M, block_bytes: int) -> np.ndarray:
    """``Z^T M Z`` for a :class:`RowDesign` and a sparse (or dense) symmetric M.

    The rows are taken in the locality order of M (:func:`~structreg._locality.
    locality_order`) in blocks of ``b`` rows within ``block_bytes``.  With ``M_kj`` the part of
    M coupling blocks k and j, ``Z^T M Z = sum_k Z_k^T (M_kk Z_k + 2 sum_{j>k} M_kj Z_j)`` up to
    its symmetric part (the couplings with earlier blocks are the transposes of theirs): block
    k's share is one product ``Z_k^T Y_k``, where the coupling terms fill only the rows of
    ``Y_k`` with a nonzero after the block (the order puts few there) and read only the rows
    of ``Z`` they name: those of block k + 1, formed next anyway (each block of Z is formed
    once; memory about three blocks and the coupled rows), and the others (far from the
    diagonal in that order) formed again for it, a block at a time.  Sets
    ``Z.squared_norm_``."""
    n, p = Z.shape
    M = sp.csr_matrix(M) if not sp.issparse(M) else M.tocsr()
    step = _chunks.rows_per_block(p, block_bytes)
    order = locality_order(M, min_rows=1) if step < n else None  # (the window needs it at
    if order is None:  # every size, not only where the cache does)
        order = np.arange(n)
    else:
        M = M[order][:, order].tocsr()
    G = np.zeros((p, p))
    norm = 0.0

    def formed(start: int) -> np.ndarray:
        nonlocal norm
        B = Z[order[start : start + step]]
        norm += float(np.einsum("ij,ij->", B, B))
        return B

    Zk = formed(0)
    for s in range(0, n, step):
        e = min(n, s + step)
        Mk = M[s:e]
        Yk = Mk[:, s:e] @ Zk
        Zn = formed(e) if e < n else None
        after = Mk[:, e:]  # the couplings with later rows
        if after.nnz:
            rows = np.flatnonzero(np.diff(after.indptr))
            after = after[rows]
            coupled = after[:, : Zn.shape[0]] @ Zn  # block k + 1, read in place
            far = np.unique(after.indices[after.indices >= Zn.shape[0]])
            for start in range(0, len(far), step):  # rows formed again for this block
                part = far[start : start + step]
                coupled += after[:, part] @ Z[order[e + part]]
            coupled *= 2.0
            Yk[rows] += coupled
        G += Zk.T @ Yk
        Zk = Zn
    Z.squared_norm_ = norm
    return 0.5 * (G + G.T)


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


class ProjectedPenalty:
    """A penalty ``M`` (n x n) known only through its projection on the design, ``A^T M A``
    (``gram``, q x q), formed elsewhere -- e.g. summed over the partitions of a Dask
    cluster, where the rows of ``M`` and of the design live: :func:`design_penalty_gram`
    returns ``gram`` for it, and nothing multiplies by ``M`` itself."""

    def __init__(self, n: int, gram: np.ndarray):
        self.shape = (n, n)
        self.gram = np.asarray(gram, dtype=float)

    def __matmul__(self, other):
        raise ValueError("a ProjectedPenalty holds only A^T M A; M itself is not here")


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
    penalty : sparse matrix, ndarray, LinearOperator, ProjectedPenalty or None
        Symmetric M (n x n); a :class:`ProjectedPenalty` gives its ``A^T M A`` as it is.
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
    if isinstance(penalty, ProjectedPenalty):
        if penalty.gram.shape != (q, q):
            raise ValueError(
                f"the projected penalty is {penalty.gram.shape}; the design needs ({q}, {q})"
            )
        return penalty.gram.copy()
    if isinstance(Z, RowDesign):
        if fit_intercept:
            raise ValueError("a design computed by rows is solved without an intercept")
        if not _row_sliceable(penalty):  # only products of M: the rows of Z all at once
            return design_penalty_gram(Z[:], penalty, fit_intercept=False)
        return _row_design_penalty_gram(Z, penalty, 8 * block_elements)
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
