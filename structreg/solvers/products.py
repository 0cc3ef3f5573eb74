"""Sparse products on every thread the package may use.

SciPy's product of a CSR matrix with a block of vectors runs on one thread, and it is most of
an iteration of conjugate gradients on a large graph.  :class:`ThreadedProduct` splits the
matrix's rows into one block per thread (views of its arrays, no copy) and multiplies the
blocks in a thread pool: SciPy's compiled product releases the GIL, so the blocks run at
once.  The threads are those of the one limiter (``structreg.set_config(threads=...)``,
:func:`~structreg._resources.loop_threads`).  The result is the plain product's, bit for
bit: every row is computed by the same code on the same entries.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from .._resources import loop_threads

__all__ = ["ThreadedProduct"]

THREADED_MIN_NNZ = 1_000_000
"""Matrices with fewer stored entries are multiplied on one thread (:func:`threaded`): a
product then takes under a millisecond, about the cost of handing blocks to threads."""


class ThreadedProduct:
    """``A @ V`` for a CSR matrix ``A``, its row blocks multiplied on ``threads`` threads.

    ``shape``, ``dtype`` and ``@`` (``__matmul__``) as the matrix's; ``row_major`` tells
    :func:`~structreg.solvers.cg.conjugate_gradient` to keep its blocks of vectors row-major,
    the order SciPy's product reads and writes.

    Parameters
    ----------
    A : scipy.sparse.csr_matrix of shape (m, n)
    threads : int
        Row blocks (about equal in stored entries), one per thread.
    """

    row_major = True

    def __init__(self, A: sp.csr_matrix, threads: int):
        self.matrix = A
        self.shape, self.dtype = A.shape, A.dtype
        # block boundaries at about equal numbers of entries
        cuts = np.searchsorted(A.indptr, np.linspace(0, A.nnz, threads + 1)[1:-1])
        self.bounds = np.unique(np.r_[0, cuts, A.shape[0]])
        self.blocks = [
            sp.csr_matrix(
                (
                    A.data[A.indptr[a] : A.indptr[b]],
                    A.indices[A.indptr[a] : A.indptr[b]],
                    A.indptr[a : b + 1] - A.indptr[a],
                ),
                shape=(b - a, A.shape[1]),
            )
            for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)
        ]
        self.pool = ThreadPoolExecutor(len(self.blocks)) if len(self.blocks) > 1 else None

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        if self.pool is None:
            return self.matrix @ V
        V = np.ascontiguousarray(V)
        out = np.empty((self.shape[0],) + V.shape[1:], dtype=np.result_type(self.dtype, V))

        def product(i: int) -> None:
            out[self.bounds[i] : self.bounds[i + 1]] = self.blocks[i] @ V

        list(self.pool.map(product, range(len(self.blocks))))
        return out

    def close(self) -> None:
        """Let the pool's threads go."""
        if self.pool is not None:
            self.pool.shutdown(wait=False)
            self.pool = None

    def __del__(self) -> None:
        self.close()


def threaded(A: sp.csr_matrix) -> sp.csr_matrix | ThreadedProduct:
    """``A`` itself when it is small (``THREADED_MIN_NNZ``) or one thread is allowed,
    else its :class:`ThreadedProduct` on the limiter's threads."""
    threads = loop_threads()
    if threads < 2 or A.nnz < THREADED_MIN_NNZ:
        return A
    return ThreadedProduct(sp.csr_matrix(A), threads)
