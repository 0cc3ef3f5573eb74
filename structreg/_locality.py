"""Locality orderings of sparse graph matrices.

A product ``M @ X`` with a sparse ``M`` reads the rows of ``X`` that each row of ``M`` points
at.  When the graph's vertices are numbered in no particular order (shuffled samples), those
reads go all over ``X`` and most miss the cache; numbered so that neighbours get nearby
numbers, consecutive rows of ``M`` read mostly the same rows of ``X``.  The reverse
Cuthill-McKee order (:func:`scipy.sparse.csgraph.reverse_cuthill_mckee`, O(nnz)) is such a
numbering; a sparse LU applies its own fill-reducing order after it (the fill is unchanged).
What it costs and gains on a large kNN graph is in the scale page of the user guide.

Results do not depend on the order beyond rounding: callers permute, compute and permute back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

LOCALITY_MIN_ROWS = 20_000
"""Below this many rows the vectors a sparse product reads fit in cache anyway and no order is
computed."""


def locality_order(M: sp.spmatrix, min_rows: int | None = None) -> np.ndarray | None:
    """A numbering of the vertices of the graph of the square sparse ``M`` that puts neighbours
    near each other (reverse Cuthill-McKee on the pattern of ``M + M^T``), or None when ``M``
    has fewer than ``min_rows`` (default :data:`LOCALITY_MIN_ROWS`) rows.

    Returns ``p`` with ``M[p][:, p]`` the reordered matrix (``p[i]`` is the old index of new
    vertex ``i``)."""
    min_rows = LOCALITY_MIN_ROWS if min_rows is None else min_rows
    if not sp.issparse(M) or M.shape[0] < min_rows or M.shape[0] != M.shape[1]:
        return None
    pattern = sp.csr_matrix(M, dtype=bool)
    return np.asarray(reverse_cuthill_mckee(pattern + pattern.T, symmetric_mode=True))


def unpermute(p: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Rows of ``X`` (computed in the order ``p``) put back in the original order."""
    out = np.empty_like(X)
    out[p] = X
    return out


def solve_in_locality_order(solve: Callable, M: sp.spmatrix, *rows: np.ndarray):
    """``solve(M, *rows)`` -- which returns ``(X, info)`` with one row of X per row of M --
    run on ``M`` and the row-indexed arrays ``rows`` permuted to :func:`locality_order`, and
    X's rows put back in the original order (unpermuted when no order applies).  An
    ``info["resume"]`` (a function returning ``(X, info)`` again) is wrapped likewise."""
    p = locality_order(M) if sp.issparse(M) else None  # an operator: as it is
    if p is None:
        return solve(M, *rows)
    X, info = solve(M[p][:, p], *(a[p] for a in rows))
    return unpermute(p, X), _unpermuted_resume(p, info)


def _unpermuted_resume(p: np.ndarray, info: dict) -> dict:
    if "resume" not in info:
        return info
    inner = info["resume"]

    def resume(*args, **kwargs):
        X, more = inner(*args, **kwargs)
        return unpermute(p, X), _unpermuted_resume(p, more)

    return {**info, "resume": resume}
