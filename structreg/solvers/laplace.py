"""Laplace-type systems of graphs: the harmonic extension, the Poisson equation, and their
solve.

Both graph-inference models solve a linear system of a graph Laplacian ``L = D - W``:
Laplace learning (GFHF) the harmonic system ``(D_uu - W_uu) F_u = W_ul Y_l``
(:func:`harmonic_function`), Poisson learning ``L u = b`` with sources at the labeled points
(:func:`poisson_function`).  :func:`solve_laplace_system` solves either kind: a sparse
factorisation for small systems; beyond, the method is chosen *before* solving by a cost
model (:func:`choose_method`) from what the graph shows: its size and how far, in edges, its
points lie from the boundary of the system (the labeled points, or one point of every
component of a singular Laplacian).  Jacobi-scaled conjugate gradients
(:func:`~structreg.solvers.cg.conjugate_gradient`) need about as many iterations as that
depth times ``CG_ITERATIONS_PER_HOP``: few on the expander-like kNN graphs of
high-dimensional data, thousands on the mesh-like ones of low-dimensional data, where a
sparse Cholesky factorisation (CHOLMOD, where scikit-sparse is installed), a LU of bounded
fill or multigrid-preconditioned CG (:mod:`structreg.solvers.multigrid`) is cheaper.

The graphs come as :class:`~structreg.structure.labeled_graph.LabeledGraph`, whose weakly
joined sets (numerically singular in float64) are merged before the solve.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.linalg import spilu, splu

from .._locality import solve_in_locality_order
from .._resources import available_memory, blas_threads
from ..structure.labeled_graph import label_graph
from .cg import conjugate_gradient, warn_not_converged
from .multigrid import amg_available, amg_conjugate_gradient, amg_preconditioner
from .products import threaded

__all__ = [
    "choose_method",
    "excess_solve",
    "harmonic_function",
    "hop_depth",
    "poisson_function",
    "solve_laplace_system",
]


HARMONIC_DIRECT_MAX = 2000
"""``method="auto"`` of :func:`solve_laplace_system` (and so of :func:`harmonic_function`
and :func:`poisson_function`) factorises systems of up to this many unknowns directly
(exact, and cheap at this size)."""

CG_ITERATIONS_PER_HOP = 20
"""The cost model's conjugate-gradient iterations per column (to ``tol=1e-6``) per edge of
:func:`hop_depth`: Jacobi-scaled CG on a graph Laplacian with a boundary needs about as
many iterations as the square root of its condition number, which grows as the square of the
largest distance to the boundary on mesh-like graphs.  See ``CG_MAX_ITERATIONS`` for
the measurements."""

CG_MAX_ITERATIONS = 400
"""``method="auto"`` solves by conjugate gradients when the cost model predicts at most this
many iterations per column (``CG_ITERATIONS_PER_HOP`` times :func:`hop_depth`), and by a
factorisation or multigrid otherwise: one iteration costs about a product with the matrix,
and the alternatives cost a few hundred of those (a sparse LU of a mesh-like kNN graph of
1e5 points about 230 products; multigrid on 1e6 points about 300 products).

The measurements (self-tuning weights, ``tol=1e-6``; depth / iterations per column CG needs)
are in the scale guide (:doc:`/user_guide/scale`, "Graph solves on large graphs"), written
by ``benchmarks/laplace_cost_model.py``."""

HARMONIC_FILL_MAX = 20
"""The factorisation that ``method="auto"`` tries instead of slow conjugate gradients may hold
at most this many times the nonzeros of the system (an LU of a mesh-like kNN graph holds
8-14 times with SuperLU's default ordering, 4.6 times with ``_SDD_LU``'s on two moons of
1e5 points; USPS's would hold about 100 times): it is
abandoned, and CG goes on, when it would not fit, so memory stays O(nnz) whatever the graph."""

HARMONIC_TOL = 1e-6
"""Default relative residual of the conjugate-gradient solve (per class column): on USPS
(11,000 points, 10 labels per class) the harmonic labels at ``1e-5`` and below equal those of
the direct solve, with values within ``1e-5`` of it; at ``1e-3`` 2 of 10,900 differ."""

_DENSE_FRACTION = 0.125
"""Systems with more than this fraction of nonzeros are solved by dense Cholesky."""

_SDD_LU = dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
"""SuperLU's settings for the Laplace-type systems, which are symmetric and diagonally dominant:
a minimum-degree ordering of ``A + A^T`` and no pivoting off the diagonal (Gaussian elimination
without pivoting is stable for diagonally dominant matrices).  It fills and costs less than
SuperLU's default COLAMD ordering (measured in the scale guide, :doc:`/user_guide/scale`,
"Measurements behind the solvers' settings")."""


AMG_MIN_UNKNOWNS = 500_000
"""``method="auto"``, when CG turns out slow and CHOLMOD is not installed: systems of at least
this many unknowns go to multigrid-preconditioned CG, smaller ones to a LU of bounded fill
(multigrid when it does not fit): on two moons the LU is the faster at 1e5 unknowns, the two
are even at 1e6, and the LU's fill grows faster than the points (the times are in the scale
guide's table of solves, :doc:`/user_guide/scale`, "Graph solves on large graphs")."""

AMG_MAX_ITER = 500
"""``method="auto"``: multigrid-preconditioned CG that has not converged after this many
iterations (tens are usual; heat weights without their floor took 90-200 at 1e6-2e6 points)
gives way to plain CG."""

CHOLMOD_FILL_BYTES = HARMONIC_FILL_MAX * 12
"""``method="auto"`` factorises a slow system by CHOLMOD only when this many bytes per nonzero
of the system (``HARMONIC_FILL_MAX`` times the nonzeros, 8-byte values and 4-byte indices) fit
in half the available memory: CHOLMOD's fill is not bounded in advance, as the LU's is.  On
two moons its factor holds 3-4 times the system's nonzeros and it is the fastest of the three
methods at 1e5 and 1e6 unknowns (the scale guide's table of solves,
:doc:`/user_guide/scale`, "Graph solves on large graphs")."""


METHODS = ("auto", "direct", "cg", "amg")


def check_method(method: str) -> None:
    """Refuse a ``method`` other than those of :func:`solve_laplace_system`."""
    if method not in METHODS:
        raise ValueError(f"method must be 'auto', 'direct', 'cg' or 'amg', got {method!r}")


def hop_depth(M: sp.spmatrix, sources: np.ndarray) -> int:
    """The largest number of edges between a vertex of the graph of ``M``'s off-diagonal
    pattern and the nearest of the boolean mask ``sources`` (vertices not reached count
    as 0): one breadth-first search from a vertex joined to all sources, O(nnz)."""
    m = M.shape[0]
    sources = np.flatnonzero(sources)
    if m == 0 or sources.size == 0:
        return 0
    M = sp.csr_matrix(M)
    # the graph with one more vertex, m, joined to every source
    indptr = np.concatenate([M.indptr, [M.nnz + sources.size]])
    indices = np.concatenate([M.indices, sources.astype(M.indices.dtype)])
    G = sp.csr_matrix((np.ones(indices.size, dtype=np.int8), indices, indptr), shape=(m + 1, m + 1))
    order, parent = breadth_first_order(G, m, directed=True, return_predecessors=True)
    # depth by pointer jumping: log(depth) vectorised passes instead of a loop over vertices
    depth = np.zeros(m + 1, dtype=np.int64)
    reached = order[1:]
    depth[reached] = 1
    up = parent.copy()
    up[m] = m
    up[up < 0] = m
    while True:
        ahead = up[reached]
        if np.all(ahead == m):
            break
        depth[reached] += depth[ahead]
        up[reached] = up[ahead]
    return int(depth.max() - 1)


def choose_method(M: sp.spmatrix, *, grounded: np.ndarray | None = None) -> str:
    """The method of ``method="auto"`` for the Laplace-type system ``M``
    (:func:`solve_laplace_system`), chosen before any solving: ``"direct"`` (a sparse or
    dense factorisation), ``"cg"`` or ``"replace"`` (CHOLMOD, a LU of bounded fill or
    multigrid, by size).

    Up to ``HARMONIC_DIRECT_MAX`` unknowns a factorisation.  Beyond, the cost model
    predicts CG's iterations per column as ``CG_ITERATIONS_PER_HOP`` times the
    :func:`hop_depth` from the system's boundary -- the rows whose sum is positive (the
    unlabeled points next to labeled ones), or, for a singular Laplacian, its ``grounded``
    vertices (one per component), where a singular system has no boundary -- and takes CG
    when that is at most ``CG_MAX_ITERATIONS`` (per column: every method's cost grows alike
    with the columns)."""
    m = M.shape[0]
    if m <= HARMONIC_DIRECT_MAX:
        return "direct"
    if grounded is not None:
        # from one vertex, the depth is between the radius and the diameter; a Dirichlet
        # boundary in the middle would halve it
        depth = hop_depth(M, grounded) / 2
    else:
        excess = np.asarray(M.sum(axis=1)).ravel()
        depth = hop_depth(M, excess > 1e-12 * np.abs(M.diagonal()))
    return "cg" if CG_ITERATIONS_PER_HOP * depth <= CG_MAX_ITERATIONS else "replace"


def solve_laplace_system(
    M: sp.csr_matrix,
    C: np.ndarray,
    method: str,
    tol: float,
    max_iter: int | None,
    *,
    grounded: np.ndarray | None = None,
    project: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, dict]:
    """``X`` with ``M X = C`` for a Laplace-type ``M``, and the solve's ``info``.

    ``M`` (a sparse matrix, or an operator with ``shape``, ``diagonal()`` and ``@`` for a
    graph held elsewhere, solved by CG) is symmetric, non-positive off the diagonal and
    diagonally dominant: either
    nonsingular (GFHF's ``D_uu - W_uu`` when every component holds a label), or a graph
    Laplacian ``D - W``, singular on the constants of each connected component, with ``C``
    consistent (every column sums to 0 on every component).  For the latter, ``grounded``
    marks one vertex per component, held at 0 by the factorisations, and ``project`` maps
    any solution to the one wanted (Poisson learning: zero degree-weighted mean).

    Parameters
    ----------
    M : scipy.sparse.csr_matrix of shape (m, m)
    C : ndarray of shape (m, k)
    method : {"auto", "direct", "cg", "amg"}
        ``"direct"``: sparse LU (dense Cholesky for dense systems).  ``"cg"``: conjugate
        gradients on the Jacobi-scaled system ``S M S Y = S C``, ``X = S Y``,
        ``S = diag(M)^{-1/2}`` (1 on zero rows), all columns as one block.  ``"amg"``: CG
        on the scaled system preconditioned by a smoothed-aggregation multigrid V-cycle
        (:func:`~structreg.solvers.multigrid.amg_conjugate_gradient`).  ``"auto"``: the
        method of the cost model (:func:`choose_method`); where it rules CG out, CHOLMOD's
        sparse Cholesky factorisation where scikit-sparse is installed and the factor fits
        (``CHOLMOD_FILL_BYTES``), else a LU of bounded fill below
        ``AMG_MIN_UNKNOWNS`` unknowns and multigrid from there on (or when the LU does
        not fit), and CG if none of them gives the solution.
    tol : float
        CG: the relative residual of the scaled system per column (``"amg"``: in the norm of
        the V-cycle).
    max_iter : int or None
        CG iteration cap (None: ``10 m``); not reaching ``tol`` warns
        (``ConvergenceWarning``).
    grounded : ndarray of bool, shape (m,), or None
        Vertices held at 0 by the factorisations (singular ``M``).
    project : callable or None
        Applied to every solution (None: none).

    Returns
    -------
    X : ndarray of shape (m, k)
    info : dict
        ``"method"``: ``"direct"``, ``"cg"`` or ``"amg"``, the method that gave ``X``;
        ``"n_iter"``: the CG iterations run, summed over the columns; for the iterative
        methods ``"resume"``: a function of a tighter ``tol`` that goes on from this
        solution (the same operator and preconditioner) and returns ``(X, info)``.
    """
    project = _unchanged if project is None else project
    diagonal = M.diagonal()
    s = 1.0 / np.sqrt(np.where(diagonal > 0, diagonal, 1.0))  # isolated vertices: zero rows
    cap = 10 * M.shape[0] if max_iter is None else int(max_iter)
    if not sp.issparse(M):  # a graph held elsewhere: its Laplacian is an operator
        if method not in ("auto", "cg"):
            raise ValueError(
                f"method={method!r} factorises or coarsens the graph's matrix, which a graph "
                "held elsewhere (a Laplacian given as an operator) does not provide; use "
                "'auto' or 'cg'"
            )
        return _plain_cg(_ScaledOperator(M, s), s, C, tol, cap, project)
    if method == "auto":
        method = choose_method(M, grounded=grounded)

    def factorised(factor: Callable) -> np.ndarray | None:
        X = _grounded_solve(factor, M, C, grounded)
        return None if X is None else project(X)

    if method == "direct":
        return factorised(_factor_solve), {"method": "direct", "n_iter": 0}
    N = _scaled(M, s)

    def multigrid(iterations: int) -> tuple[np.ndarray, dict, bool]:
        # the scaled Laplacian's null vector S^-1 1 is what the coarse levels must keep
        with blas_threads(1):
            cycle = amg_preconditioner(N, 1 / s)
        return _multigrid_cg(N, s, C, tol, iterations, project, grounded is None, cycle)

    if method == "amg":
        X, info, converged = multigrid(cap)
        if not converged:
            warn_not_converged(np.array([converged]), tol, cap)
        return X, info
    if method == "replace":
        if _cholmod_fits(M):
            X = factorised(_cholmod_solve)
            if X is not None:
                return X, {"method": "direct", "n_iter": 0}
        if M.shape[0] < AMG_MIN_UNKNOWNS or not amg_available():
            X = factorised(functools.partial(_bounded_factor_solve, tol=tol))
            if X is not None:
                return X, {"method": "direct", "n_iter": 0}
        if amg_available():
            X, info, converged = multigrid(min(cap, AMG_MAX_ITER))
            if converged:
                return X, info
    return _plain_cg(N, s, C, tol, cap, project)


def _scaled(M: sp.spmatrix, s: np.ndarray) -> sp.csr_matrix:
    """``S M S`` for ``S = diag(s)``: the entries scaled in place of a copy (one pass, where
    two broadcast products took a second each at 1e7 entries)."""
    N = sp.csr_matrix(M, copy=True)
    row = np.repeat(np.arange(N.shape[0]), np.diff(N.indptr))
    N.data *= s[row] * s[N.indices]
    return N


class _ScaledOperator:
    """``S M S`` for an operator ``M`` (``shape``, ``@``) and ``S = diag(s)``, as a CG
    operator ``apply(V, PV)``."""

    def __init__(self, M, s: np.ndarray):
        self.M, self.s = M, s[:, None]

    def __call__(self, V: np.ndarray, _=None) -> np.ndarray:
        return self.s * (self.M @ (self.s * V))


def _multigrid_cg(
    N, s, C, tol, cap, project, plain_rule, cycle, Y0=None, used=0
) -> tuple[np.ndarray, dict, bool]:
    """Multigrid CG on the Jacobi-scaled ``N Y = S C`` with the V-cycle ``cycle`` from the
    iterate ``Y0``: ``(X, info, converged)``, ``info["resume"]`` going on from its iterate
    with the same V-cycle (``used``: iterations run before)."""
    with blas_threads(1):
        result = amg_conjugate_gradient(
            threaded(N),  # the products on the limiter's threads; the V-cycle has its own
            s[:, None] * C,
            tol=tol,
            max_iter=cap,
            plain_rule=plain_rule,  # a singular Laplacian: the V-cycle norm
            preconditioner=cycle,
            y0=Y0,
        )
    n_iter = used + int(result.column_iter.sum())

    def resume(tighter: float) -> tuple[np.ndarray, dict]:
        X, info, converged = _multigrid_cg(
            N, s, C, tighter, cap, project, plain_rule, cycle, result.iterate, n_iter
        )
        if not converged:
            warn_not_converged(np.array([converged]), tighter, cap)
        return X, info

    info = {"method": "amg", "n_iter": n_iter, "resume": resume}
    return project(s[:, None] * result.x), info, bool(result.converged)


def _plain_cg(N, s, C, tol, cap, project, Y0=None, used=0) -> tuple[np.ndarray, dict]:
    """CG on the Jacobi-scaled ``N Y = S C`` from ``Y0``, ``X = S Y``: ``(X, info)``, with
    ``info["resume"]`` going on from ``Y`` (``used``: iterations run before)."""
    # one BLAS thread: threaded BLAS made small solves 10-100 times slower on 2 cores; the
    # sparse products take the limiter's threads (solvers.products)
    product = threaded(N) if sp.issparse(N) else N
    with blas_threads(1):
        result = conjugate_gradient(
            product, s[:, None] * C, x0=Y0, tol=tol, max_iter=cap, warn=False
        )
    warn_not_converged(result.column_converged, tol, cap)
    n_iter = used + int(result.column_iter.sum())

    def resume(tighter: float) -> tuple[np.ndarray, dict]:
        return _plain_cg(N, s, C, tighter, cap, project, result.x, n_iter)

    info = {"method": "cg", "n_iter": n_iter, "resume": resume}
    return project(s[:, None] * result.x), info


def _unchanged(X: np.ndarray) -> np.ndarray:
    return X


def _grounded_solve(
    factor: Callable, M: sp.csr_matrix, C: np.ndarray, grounded: np.ndarray | None
) -> np.ndarray | None:
    """``factor(M, C)``, or with the ``grounded`` vertices held at 0 and ``factor`` applied
    to the rows and columns of the others; None when ``factor`` gives None."""
    if grounded is None:
        return factor(M, C)
    X = np.zeros(C.shape)
    free = ~grounded
    if free.any():
        solved = factor(M[free][:, free], C[free])
        if solved is None:
            return None
        X[free] = solved
    return X


def _factor_solve(A: sp.spmatrix, B: np.ndarray) -> np.ndarray:
    """``A^{-1} B`` by a sparse LU, or dense Cholesky when ``A`` is dense enough."""
    n = A.shape[0]
    try:
        if A.nnz > _DENSE_FRACTION * n * n:
            # Jacobi-scaled, (S A S)(S^-1 X) = S B: degrees many orders apart (a merged weakly
            # joined set, LabeledGraph.weak_sets) do not make the Cholesky ill-conditioned
            diagonal = A.diagonal()
            s = 1.0 / np.sqrt(np.where(diagonal > 0, diagonal, 1.0))[:, None]
            scaled = A.toarray() * s * s.T
            with np.errstate(over="ignore", invalid="ignore"):  # refused below instead
                X = s * scipy.linalg.solve(scaled, s * B, assume_a="pos")
        else:
            X = splu(sp.csc_matrix(A), **_SDD_LU).solve(B)
    except (np.linalg.LinAlgError, RuntimeError) as exc:  # RuntimeError: SuperLU's "singular"
        raise ValueError(NUMERICALLY_SINGULAR) from exc
    return _finite_solution(X)


def _finite_solution(X: np.ndarray) -> np.ndarray:
    """``X`` if every value is finite, else the ValueError :data:`NUMERICALLY_SINGULAR`.

    A factorisation of a numerically singular system need not fail: a dense Cholesky whose
    last pivot is a rounding residue of 1e-300 next to degrees of 1 divides by it and
    overflows, and a sparse LU may do the same.  Every factorisation and every harmonic and
    Poisson solution (of any method) passes through here, so a fit never returns infinite or
    NaN scores."""
    if not np.isfinite(X).all():
        raise ValueError(NUMERICALLY_SINGULAR)
    return X


NUMERICALLY_SINGULAR = (
    "the graph's Laplace system is numerically singular: some points are joined to the "
    "labeled points only by edges whose weights vanish in float64 next to their other edges "
    "(e.g. self-tuning weights between a tight cluster and sparse points), so their values "
    "cannot be computed; use weights='connectivity' or 'heat', another n_neighbors, or a "
    "precomputed graph"
)
"""The ValueError of a factorisation that finds the system singular although every component
holds a label (:meth:`LabeledGraph.weak_sets` merges the usual culprits beforehand)."""


EXCESS_BLOCK = 64
"""Pivots per panel of :func:`excess_solve` (the rest of the update is one matrix product)."""


def excess_solve(weights: sp.spmatrix | np.ndarray, excess: np.ndarray, B: np.ndarray):
    """``X`` with ``(diag(excess + weights 1) - weights) X = B``, accurate however small the
    ``excess`` (the row sums of the system) is next to the ``weights``.

    ``weights`` (m x m, its diagonal ignored) and ``excess`` (m) are non-negative: the system
    is a diagonally dominant M-matrix, e.g. a graph Laplacian with some vertices held at 0
    (``excess``: each row's weight to them).  Gaussian elimination computes every pivot as
    the excess plus the remaining off-diagonal weights of its row, both updated by sums of
    non-negative terms (Grassmann, Taksar & Heyman 1985): no cancellation, so a system that a
    LU of ``D - W`` finds singular (the excess lost to rounding next to the degrees) is solved
    to the accuracy of its data (Alfa, Xue & Ye, Math. Comp. 71, 2002).  Dense, blocked
    (``EXCESS_BLOCK`` pivots per panel): O(m^3) time and O(m^2) memory, for the small
    systems that need it.
    """
    A = weights.toarray() if sp.issparse(weights) else np.array(weights, dtype=float)
    A = np.asarray(A, dtype=float)
    np.fill_diagonal(A, 0.0)
    s = np.array(excess, dtype=float)
    X = np.array(B, dtype=float).reshape(len(s), -1)
    m = len(s)
    pivot = np.empty(m)
    for k0 in range(0, m, EXCESS_BLOCK):
        k1 = min(m, k0 + EXCESS_BLOCK)
        for k in range(k0, k1):
            pivot[k] = s[k] + A[k, k + 1 :].sum()
            if not pivot[k] > 0:
                raise ValueError(NUMERICALLY_SINGULAR)
            factor = A[k + 1 :, k] / pivot[k]  # multipliers, non-negative
            A[k + 1 :, k] = factor
            inner = k1 - k - 1  # rows of this panel still to eliminate
            A[k + 1 : k1, k + 1 :] += np.outer(factor[:inner], A[k, k + 1 :])
            A[k1:, k + 1 : k1] += np.outer(factor[inner:], A[k, k + 1 : k1])
            s[k + 1 :] += factor * s[k]
            X[k + 1 :] += factor[:, None] * X[k]
        if k1 < m:  # the rest of the panel's update (the diagonal it touches is never read)
            A[k1:, k1:] += A[k1:, k0:k1] @ A[k0:k1, k1:]
    for k in range(m - 1, -1, -1):
        X[k] = (X[k] + A[k, k + 1 :] @ X[k + 1 :]) / pivot[k]
    return X


def _cholmod_fits(A: sp.spmatrix) -> bool:
    """Whether ``method="auto"`` may factorise ``A`` by CHOLMOD: scikit-sparse imports and
    ``CHOLMOD_FILL_BYTES`` per nonzero fit in half the available memory."""
    try:
        import sksparse.cholmod  # noqa: F401
    except ImportError:
        return False
    available = available_memory()
    return available is None or A.nnz * CHOLMOD_FILL_BYTES <= available / 2


def _cholmod_solve(A: sp.spmatrix, B: np.ndarray) -> np.ndarray | None:
    """``A^{-1} B`` by CHOLMOD's sparse Cholesky factorisation (fill-reducing ordering of its
    own choice), or None when ``A`` is not numerically positive definite."""
    from sksparse.cholmod import CholmodNotPositiveDefiniteError, cholesky

    try:
        factor = cholesky(sp.csc_matrix(A))
    except CholmodNotPositiveDefiniteError:
        return None
    return np.asarray(factor(np.asarray(B, dtype=float))).reshape(B.shape)


def _bounded_factor_solve(A: sp.spmatrix, B: np.ndarray, tol: float) -> np.ndarray | None:
    """``A^{-1} B`` by a sparse LU allowed ``HARMONIC_FILL_MAX`` times the nonzeros of
    ``A`` (SuperLU's incomplete LU with no drop tolerance: the complete LU when it fits), or
    None when it does not fit (the solution then misses ``tol``)."""
    try:
        lu = spilu(sp.csc_matrix(A), drop_tol=0.0, fill_factor=HARMONIC_FILL_MAX, **_SDD_LU)
    except (RuntimeError, MemoryError):  # SuperLU: singular or out of memory
        return None
    F = lu.solve(B)
    norms = np.linalg.norm(B, axis=0)
    residual = np.linalg.norm(B - A @ F, axis=0)
    return F if np.all(residual <= tol * norms) else None


def common_row_sum(targets: np.ndarray) -> float | None:
    """``s`` when the rows of ``targets`` (two or more columns) all sum to the same ``s``
    exactly (one-of-c labels: 1), else None.

    Then one column fewer needs solving: the harmonic solution's rows sum to ``s`` too
    (``A 1 = W_ul 1`` for ``A = D_uu - W_uu``, as the unlabeled points of a labeled component
    have no edges elsewhere, so ``A (s 1) = W_ul targets 1``), and the Poisson solution's to
    0 (its sources' rows sum to ``s - s``).  Binary problems solve one column instead of
    two."""
    if targets.ndim != 2 or targets.shape[1] < 2 or not len(targets):
        return None
    sums = targets.sum(axis=1)
    return float(sums[0]) if np.all(sums == sums[0]) else None


# ---------------------------------------------------------------------------------------------
# the harmonic extension


def harmonic_function(
    W: sp.spmatrix | np.ndarray,
    labeled: np.ndarray,
    targets: np.ndarray,
    *,
    method: str = "auto",
    tol: float = HARMONIC_TOL,
    max_iter: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The harmonic extension of labeled values over a graph.

    Solves ``(D_uu - W_uu) F_u = W_ul F_l`` (``D`` the degree matrix of ``W``), the minimiser
    of ``tr(F^T L F)``, ``L = D - W``, with the labeled rows fixed to ``targets``.  The matrix
    is singular exactly on connected components of the graph that hold no labeled point;
    those rows are not solved for but reported, and every other block is symmetric positive
    definite (irreducibly diagonally dominant).

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative affinities (the diagonal is ignored).
    labeled : ndarray of bool, shape (n,)
    targets : ndarray of shape (n_labeled, n_outputs)
        Values at the labeled points, in the order of ``np.flatnonzero(labeled)``.
    method : {"auto", "direct", "cg", "amg"}, default="auto"
        ``"direct"``: sparse LU (dense Cholesky for dense blocks).  ``"cg"``: conjugate
        gradients on the Jacobi-scaled system ``S A S (S^-1 F_u) = S B``, ``S = D_uu^{-1/2}``
        (:func:`~structreg.solvers.conjugate_gradient`, all output columns as one block).
        ``"amg"``: the same CG preconditioned by algebraic multigrid
        (:mod:`structreg.solvers.multigrid`).  ``"auto"``: direct up to
        ``HARMONIC_DIRECT_MAX`` unknowns, beyond it the method of the cost model
        (:func:`choose_method`, :func:`solve_laplace_system`).
    tol : float, default=1e-6
        CG: stop when every column's residual of the scaled system is at most ``tol`` times
        its right-hand side.
    max_iter : int or None, default=None
        CG iteration cap (None: ``10 n_u``); not reaching ``tol`` warns
        (``ConvergenceWarning``).

    Returns
    -------
    F : ndarray of shape (n, n_outputs)
        Harmonic values; the labeled rows are ``targets``, the unreachable rows are NaN.
    unreachable : ndarray of bool, shape (n,)
        Unlabeled points whose connected component holds no labeled point.

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0, 1, 0], [1, 0, 3], [0, 3, 0]], dtype=float)  # path 0 - 1 - 2
    >>> F, unreachable = harmonic_function(W, np.array([True, False, True]), np.eye(2))
    >>> F[1]  # (1 * [1, 0] + 3 * [0, 1]) / 4
    array([0.25, 0.75])
    """
    F, unreachable, _ = solve_harmonic(W, labeled, targets, method, tol, max_iter)
    return F, unreachable


def solve_harmonic(W, labeled, targets, method, tol, max_iter):
    """:func:`harmonic_function`, and the solve's ``info`` (``"method"``: the method that gave
    the solution, ``"n_iter"``: CG iterations run, and for an iterative solve ``"resume"``, a
    function of a tighter ``tol`` that goes on from this solution and returns ``(F, info)``;
    :func:`solve_laplace_system`)."""
    check_method(method)
    graph = label_graph(W, labeled, targets)
    unreachable = graph.unreachable
    # numerically singular sets, each solved as one vertex
    graph, place, _ = graph.without_weak_sets()
    labeled, targets = graph.labeled, graph.targets
    solve = ~labeled & ~graph.unreachable

    F = np.full((graph.n, targets.shape[1]), np.nan)
    F[labeled] = targets
    if not solve.any():
        return (F if place is None else F[place]), unreachable, {"method": "direct", "n_iter": 0}
    A = graph.laplacian(solve)
    total = common_row_sum(targets)
    cols = slice(None) if total is None else slice(0, -1)
    B = graph.coupled(solve, labeled, targets[:, cols])

    def scores(X: np.ndarray) -> np.ndarray:
        X = _finite_solution(X)
        if total is not None:  # the last column; within its targets' range, as harmonic
            # functions are (the maximum principle), which rounding alone would leave
            last = np.clip(total - X.sum(axis=1), targets[:, -1].min(), targets[:, -1].max())
            X = np.column_stack([X, last])
        out = F.copy()
        out[solve] = X
        return out if place is None else out[place]

    X, info = solve_in_locality_order(  # cache-friendly products and LU
        lambda A, B: solve_laplace_system(A, B, method, tol, max_iter), A, B
    )
    return scores(X), unreachable, _resuming(info, scores)


def _resuming(info: dict, finish: Callable[[np.ndarray], np.ndarray]) -> dict:
    """``info`` whose ``"resume"`` (if any) returns ``(finish(X), info)``."""
    if "resume" not in info:
        return info
    inner = info["resume"]

    def resume(tol: float) -> tuple[np.ndarray, dict]:
        X, more = inner(tol)
        return finish(X), _resuming(more, finish)

    return {**info, "resume": resume}


# ---------------------------------------------------------------------------------------------
# the Poisson equation


def poisson_function(
    W: sp.spmatrix | np.ndarray,
    labeled: np.ndarray,
    targets: np.ndarray,
    *,
    method: str = "auto",
    tol: float = HARMONIC_TOL,
    max_iter: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The solution of the graph Poisson equation with the labeled values as sources.

    Solves ``L u = b``, ``b_i = targets_i - mean(targets)`` at the labeled points and 0
    elsewhere, with ``sum_i d_i u_i = 0`` (``L = D - W``, ``d = W 1``): the equation of Poisson
    learning, whose solution exists because ``sum_i b_i = 0`` and is unique under the
    constraint on a connected graph.

    On a graph with several components, each component that holds labeled points is solved
    on its own, its sources centred on the mean of *its* labeled values (so that its equation
    has a solution) and its ``d``-weighted mean set to 0; unlabeled points in components
    without labeled points are reported as unreachable (NaN rows).

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative affinities (the diagonal is ignored).
    labeled : ndarray of bool, shape (n,)
    targets : ndarray of shape (n_labeled, n_outputs)
        Values at the labeled points (one-of-c labels), in the order of
        ``np.flatnonzero(labeled)``.
    method : {"auto", "direct", "cg", "amg"}, default="auto"
        ``"direct"``: sparse LU of the system with one point per component grounded
        (``u = 0`` there; then shifted to ``d``-weighted mean 0).  ``"cg"``: conjugate
        gradients on the consistent singular system ``S L S v = S b``, ``S = D^{-1/2}``,
        ``u = S v`` (as graphlearning solves it); ``"amg"``: the same, preconditioned by
        algebraic multigrid.  ``"auto"``: as
        :func:`harmonic_function`.
    tol : float, default=1e-6
        CG: relative residual of the scaled system per column.
    max_iter : int or None, default=None
        CG iteration cap (None: ``10 n``).

    Returns
    -------
    U : ndarray of shape (n, n_outputs)
        The solution ``u``; NaN on unreachable rows.
    unreachable : ndarray of bool, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float)  # path 0 - 1 - 2
    >>> U, _ = poisson_function(W, np.array([True, False, True]), np.eye(2))
    >>> U.round(12) + 0.0  # sources +-1/2 at the ends; L U = b and (1, 2, 1) . U = 0
    array([[ 0.5, -0.5],
           [ 0. ,  0. ],
           [-0.5,  0.5]])
    """
    U, unreachable, _ = solve_poisson(W, labeled, targets, method, tol, max_iter)
    return U, unreachable


def solve_poisson(W, labeled, targets, method, tol, max_iter):
    """:func:`poisson_function`, and the solve's ``info`` (``"method"``, ``"n_iter"``:
    :func:`solve_laplace_system`).  ``W`` may be a labeled graph
    already built of these ``labeled`` points and ``targets`` (not built again)."""
    check_method(method)
    graph = label_graph(W, labeled, targets)
    unreachable_given = graph.unreachable
    # numerically singular sets, each solved as one vertex; the zero mean keeps the weights
    # of the given graph's vertices (the degrees), summed over each merged set
    graph, place, volume = graph.without_weak_sets(graph.degree)
    labeled, targets, component = graph.labeled, graph.targets, graph.component
    count = graph.labels_in_component
    unreachable = graph.unreachable
    # sources: each labeled value minus the mean of its component's labeled values
    b = np.zeros((graph.n, targets.shape[1]))
    means = np.zeros((len(count), targets.shape[1]))
    np.add.at(means, component[labeled], targets)
    means /= np.maximum(count, 1)[:, None]
    b[labeled] = targets - means[component[labeled]]

    U = np.full(b.shape, np.nan)
    solve = np.flatnonzero(~unreachable)
    info = {"method": "direct", "n_iter": 0}
    if solve.size:
        L = graph.laplacian(solve)
        comp = np.unique(component[solve], return_inverse=True)[1]
        # the solution's rows sum to 0 when the sources' rows do (common_row_sum)
        last = common_row_sum(targets) is not None
        b = b[solve][:, :-1] if last else b[solve]
        # weakly joined sets (all labeled here) make a LU inaccurate or singular
        # (LabeledGraph.weakly_joined): small systems are solved from the edge weights alone,
        # large ones hold a vertex of the set at 0, which fails with two in one component
        inside, crowded = graph.weakly_joined()
        accurate = bool(inside.any()) and solve.size <= HARMONIC_DIRECT_MAX
        if crowded and not accurate:
            raise ValueError(NUMERICALLY_SINGULAR)
        u, info = solve_in_locality_order(  # cache-friendly products and LU
            lambda L, d, c, b, g: _solve_laplacian(L, d, c, b, method, tol, max_iter, g, accurate),
            L,
            volume[solve],
            comp,
            b,
            inside[solve],
        )
        u, info = _finite_solution(u), _resuming(info, _finite_solution)
        U[solve] = np.column_stack([u, -u.sum(axis=1)]) if last else u
    return (U if place is None else U[place]), unreachable_given, info


def _solve_laplacian(L, degree, comp, b, method, tol, max_iter, prefer=None, accurate=False):
    """``u`` with ``L u = b`` and zero ``degree``-weighted mean on every component ``comp``
    (``b`` sums to 0 on each), and the solve's ``info``.  The factorisations ground one
    point of every component (its first, or its first of the mask ``prefer`` where it has
    one): ``L u = b`` on the other points, ``u = 0`` there, then the mean is removed.
    ``accurate``: the grounded system is solved by
    :func:`excess_solve` from the edge weights alone (a
    weakly joined labeled set, where a LU of ``L`` is numerically singular)."""
    n_comp = comp.max() + 1
    vol = np.bincount(comp, weights=degree, minlength=n_comp)
    grounded = np.zeros(L.shape[0], dtype=bool)
    grounded[np.unique(comp, return_index=True)[1]] = True
    if prefer is not None and prefer.any():
        preferred = np.flatnonzero(prefer)
        first = np.unique(comp[preferred], return_index=True)[1]
        grounded[np.isin(comp, comp[preferred[first]])] = False
        grounded[preferred[first]] = True

    def centred(u):
        shift = np.zeros((n_comp, b.shape[1]))
        np.add.at(shift, comp, degree[:, None] * u)
        return u - (shift / np.where(vol > 0, vol, 1.0)[:, None])[comp]

    if accurate:
        free = ~grounded
        rows = sp.csr_matrix(L[free])
        u = np.zeros(b.shape)
        u[free] = excess_solve(-rows[:, free], -rows[:, grounded].sum(axis=1).A1, b[free])
        return centred(u), {"method": "direct", "n_iter": 0}
    return solve_laplace_system(L, b, method, tol, max_iter, grounded=grounded, project=centred)
