"""Conjugate gradients preconditioned by algebraic multigrid, for graph Laplace systems.

A kNN graph of low-dimensional data is mesh-like: plain (Jacobi-scaled) conjugate gradients
need thousands of iterations on its Laplacian, about as many more for every doubling of the
points, because the smooth error modes are barely damped.  Smoothed-aggregation multigrid
(PyAMG, :func:`pyamg.smoothed_aggregation_solver`) damps them on coarser graphs built by
aggregating neighbouring vertices: one V-cycle costs a few products with the matrix, and the
preconditioned iteration converges in tens of iterations whatever the size.  On
expander-like graphs (kNN graphs of high-dimensional data) aggregation finds no such
hierarchy and plain CG, which converges there in a hundred or so iterations anyway, is the
better solver; ``structreg.models.graph_inference.solve_laplace_system`` chooses.

The iteration is the package's one CG (:func:`~structreg.solvers.cg.conjugate_gradient`):
with ``M`` the V-cycle (symmetric positive semi-definite: symmetric Gauss-Seidel smoothing
before and after, Galerkin coarse operators), CG on ``(N M) Y = C`` in the inner product
``<u, v>_M`` is preconditioned CG on ``N X = C`` with ``X = M Y`` (the same iterates); each
iteration applies ``N`` once and ``M`` once, and the stopping rule reads
``||C - N X||_M <= tol ||C||_M``, the residual in the norm of the approximate inverse (about
the relative error in the energy norm of ``N``).  :func:`amg_conjugate_gradient` also pursues
plain CG's rule, ``||C - N X||_2 <= tol ||C||_2``, going on with a lower tolerance when the
first is met before it (nearly singular systems).

Set-up choices: the prolongator is smoothed with Jacobi weights bounded row by row
(``weighting="local"``) instead of PyAMG's default weight from an estimate of the spectral
radius, which took most of the set-up's time; the near-null space is the system's own null
vector (``D^{1/2} 1`` for the Jacobi-scaled Laplacian) rather than the constants.  On two
moons of 1e6 points this solves in tens of iterations where plain CG needs thousands (the
measurements are in the scale guide, :doc:`/user_guide/scale`, "Graph solves on large
graphs").  Where
many edges are many orders of magnitude lighter than their neighbours' (heat weights on
millions of points without their floor), aggregation follows only the edges of at least a
tenth of the scaled diagonal (:func:`amg_strength`).

PyAMG builds the hierarchy; the V-cycle is the package's own, on its own copies of the
matrices, and PyAMG's and SciPy's objects and classes are only read.  PyAMG keeps the coarse
levels of a scalar problem as BSR matrices of 1 x 1 blocks, and on those (a) the next level's
row-wise Jacobi weights take ``abs`` of the operator, which first merges duplicate entries
in a Python loop in SciPy, and (b) its Gauss-Seidel and products run the generic block
kernels, slower than the CSR ones.  So :func:`amg_preconditioner` calls
:func:`pyamg.smoothed_aggregation_solver` once per level, two levels at a time, from the
previous coarse operator copied to CSR (``abs`` then takes the compiled path), improving the
near-null vector on the finest level only as PyAMG does: the levels of PyAMG's own
hierarchy with the same options, to rounding.  The V-cycle reads CSR copies of each level's
operator and transfers: one symmetric Gauss-Seidel sweep before and after the coarse
correction, the pseudo-inverse on the coarsest level, as PyAMG's
``aspreconditioner(cycle="V")`` (the same operator to rounding, so the same CG iterates) but
without the two residual norms with the finest operator that PyAMG's cycle computes for its
stopping test.  The set-up and the V-cycle are faster than PyAMG's on two moons of 1e6
points (measured in the scale guide, :doc:`/user_guide/scale`, "Graph solves on large graphs"
and "Measurements behind the solvers' settings").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .cg import CGResult, conjugate_gradient

__all__ = ["amg_available", "amg_conjugate_gradient", "amg_preconditioner", "amg_strength"]

AMG_MAX_COARSE = 500
"""Unknowns of the coarsest level (solved there by a pseudo-inverse: singular Laplacians
allowed)."""


AMG_MAX_LEVELS = 10
"""Levels of the hierarchy at most (PyAMG's default)."""


AMG_RESTARTS = 3
"""Times :func:`amg_conjugate_gradient` goes on with a lower V-cycle tolerance when the plain
norm of the residual has not met the tolerance."""


AMG_TINY = 1e-6
AMG_TINY_SHARE = 1e-3
AMG_THETA = 0.05
AMG_THETA_TINY = 0.1


def amg_strength(N: sp.csr_matrix) -> tuple[str, dict]:
    """The strength of connection that guides the aggregation: PyAMG's ``"symmetric"``
    measure, the entries of at least ``theta`` (``|n_ij| >= theta sqrt(n_ii n_jj)``) of the
    scaled matrix ``N`` (unit diagonal), with ``theta = AMG_THETA``, or ``AMG_THETA_TINY``
    when more than ``AMG_TINY_SHARE`` of the off-diagonal entries are below ``AMG_TINY`` in
    magnitude, so that no aggregate spans an edge many orders lighter than its others.

    The thresholds were chosen on the Jacobi-scaled harmonic systems of two moons of 1e6 and
    2e6 points, self-tuning and floored heat weights (the set-up plus CG times and iterations
    for each ``theta`` are in the scale guide, :doc:`/user_guide/scale`, "Measurements behind
    the solvers' settings").  Graphs whose weights span hundreds of orders of magnitude (heat
    weights without the floor, e.g. a precomputed graph) break the V-cycle at ``theta`` 0.05
    and below at 2e6 points (a coarse diagonal lost to rounding); ``theta=0.1`` converges
    there, slowly (the iterations are in the same section of the scale guide).
    """
    diagonal = N.diagonal()
    off = N.nnz - int(np.count_nonzero(diagonal))
    tiny = int(np.count_nonzero(np.abs(N.data) < AMG_TINY)) - int(
        np.count_nonzero(np.abs(diagonal[diagonal != 0]) < AMG_TINY)
    )
    if off > 0 and tiny > AMG_TINY_SHARE * off:
        return ("symmetric", {"theta": AMG_THETA_TINY})
    return ("symmetric", {"theta": AMG_THETA})


def amg_available() -> bool:
    """Whether PyAMG can be imported (it is a dependency of structreg; an environment that
    lacks it falls back to the factorisations and plain CG)."""
    try:
        import pyamg  # noqa: F401
    except ImportError:
        return False
    return True


def amg_preconditioner(
    N: sp.spmatrix, near_null: np.ndarray | None = None
) -> Callable[[np.ndarray], np.ndarray]:
    """One smoothed-aggregation V-cycle as a function of a block of columns: ``V -> M V``.

    Parameters
    ----------
    N : sparse matrix of shape (m, m)
        Symmetric positive (semi-)definite, e.g. a Jacobi-scaled graph Laplacian.
    near_null : ndarray of shape (m,) or None
        A vector that ``N`` nearly annihilates (the coarse levels represent it exactly);
        None: the constants.

    Returns
    -------
    callable
        ``apply(V)`` for V of shape (m, k) returns ``M V`` of shape (m, k).
    """
    B = None if near_null is None else np.asarray(near_null, dtype=float).reshape(-1, 1)
    levels, coarsest = _hierarchy(sp.csr_matrix(N), B)
    return _v_cycle(levels, coarsest)


def _hierarchy(
    N: sp.csr_matrix, B: np.ndarray | None
) -> tuple[list[tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]], sp.csr_matrix]:
    """The smoothed-aggregation hierarchy of ``N``, one level at a time: ``[(A, P, R), ...]``
    (operator, prolongator, restriction; CSR copies) and the coarsest operator.

    Each level is built by :func:`pyamg.smoothed_aggregation_solver` with two levels, from
    the previous coarse operator as a CSR matrix and its near-null vectors; PyAMG's own
    hierarchy of the same options builds each level from the previous one by the same steps
    (strength, aggregation, tentative prolongator, Jacobi smoothing, Galerkin product), and
    the candidates are improved (PyAMG's default) on the finest level only.  PyAMG keeps its
    coarse levels as BSR matrices of 1 x 1 blocks, on which the next level's row-wise Jacobi
    weights first merge duplicate entries by a Python loop in SciPy; given CSR, it takes the
    compiled code.  PyAMG's objects are read, never modified: the hierarchy returned holds
    copies."""
    import pyamg

    options = {
        "symmetry": "hermitian",
        "strength": amg_strength(N),
        "smooth": ("jacobi", {"weighting": "local"}),
        "max_levels": 2,
        "max_coarse": AMG_MAX_COARSE,
    }
    levels = []
    A = N
    while len(levels) + 1 < AMG_MAX_LEVELS and A.shape[0] > AMG_MAX_COARSE:
        more = {"improve_candidates": None} if levels else {}
        fine, coarse = pyamg.smoothed_aggregation_solver(A, B=B, **options, **more).levels
        levels.append((A, sp.csr_matrix(fine.P), sp.csr_matrix(fine.R)))
        A, B = sp.csr_matrix(coarse.A), coarse.B
    return levels, A


def _v_cycle(
    levels: list[tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]], coarsest: sp.csr_matrix
) -> Callable[[np.ndarray], np.ndarray]:
    """``V -> M V`` for the V-cycle of a hierarchy (:func:`_hierarchy`), column by column:
    PyAMG's ``aspreconditioner(cycle="V")`` of its smoothed-aggregation solver, i.e. one
    symmetric Gauss-Seidel sweep (forward then backward) before and after the coarse
    correction on every level, and the pseudo-inverse of the coarsest operator; symmetric
    positive semi-definite for a symmetric positive semi-definite ``N``.  Unlike PyAMG's
    cycle it does not form the residual of its answer (two products with ``N`` fewer)."""
    from pyamg.relaxation.relaxation import gauss_seidel

    pinv = np.zeros(coarsest.shape) if coarsest.nnz == 0 else scipy.linalg.pinv(coarsest.toarray())

    def cycle(b: np.ndarray) -> np.ndarray:
        xs, bs = [], []
        for A, _, R in levels:
            x = np.zeros_like(b)
            gauss_seidel(A, x, b, iterations=1, sweep="symmetric")
            xs.append(x)
            bs.append(b)
            b = R @ (b - A @ x)
        correction = pinv @ b
        for (A, P, _), x, b in zip(reversed(levels), reversed(xs), reversed(bs), strict=True):
            x += P @ correction
            gauss_seidel(A, x, b, iterations=1, sweep="symmetric")
            correction = x
        return correction

    def apply(V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        return np.column_stack([cycle(np.ascontiguousarray(V[:, j])) for j in range(V.shape[1])])

    return apply


def amg_conjugate_gradient(
    N: sp.spmatrix,
    C: np.ndarray,
    *,
    near_null: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int | None = None,
    plain_rule: bool = True,
    preconditioner: Callable[[np.ndarray], np.ndarray] | None = None,
    y0: np.ndarray | None = None,
) -> CGResult:
    """Solve ``N X = C`` by CG preconditioned with a multigrid V-cycle (module docstring).

    Parameters
    ----------
    N : sparse matrix of shape (m, m)
        Symmetric positive definite, or semi-definite with ``C`` in its range.
    C : ndarray of shape (m, k)
    near_null : ndarray of shape (m,) or None
        See :func:`amg_preconditioner`.
    tol : float
        Relative residual per column in the norm of the V-cycle, ``||C - N X||_M <= tol
        ||C||_M``.
    max_iter : int or None
        Iteration cap per column (None: ``10 m``), over all the runs below; the caller
        warns or goes on when some column does not converge (``warn=False`` is passed to
        the CG).
    plain_rule : bool, default=True
        Also pursue plain CG's rule, ``||C - N X||_2 <= tol ||C||_2``, so that either
        solver's answer is as tight: on nearly singular systems the V-cycle norm is met long
        before it (two moons of 1e6 points, heat weights: a plain residual of 1e-3 where the
        V-cycle norm reached 1e-6).  CG then goes on from its iterate with the V-cycle
        tolerance lowered in proportion, at most ``AMG_RESTARTS`` times, without the MINRES
        fallback: a direction whose curvature is lost in rounding ends the refinement, and
        the iterate of smallest plain residual is returned.  Singular systems pass False (the
        refinement of Poisson learning's Laplacian on 1e7 points met such a direction after
        10 iterations).
    preconditioner : callable or None
        The V-cycle of ``N`` (:func:`amg_preconditioner`) when it is already built (a solve
        that goes on from an earlier one); None: built here.
    y0 : ndarray of shape (m, k) or None
        The iterate to start from: an earlier result's ``iterate`` (``X = M Y``).

    Returns
    -------
    CGResult
        ``x`` is the solution ``X``, ``iterate`` the CG iterate ``Y`` with ``X = M Y``;
        ``column_iter`` counts the iterations of every run; ``converged`` says whether the
        V-cycle-norm rule holds.
    """
    C = np.asarray(C, dtype=float).reshape(N.shape[0], -1)
    cap = 10 * N.shape[0] if max_iter is None else int(max_iter)
    cycle = amg_preconditioner(N, near_null) if preconditioner is None else preconditioner

    def run(Y0, metric_tol, first):
        return conjugate_gradient(
            lambda V, MV: N @ MV,
            C,
            x0=Y0,
            metric=cycle,
            tol=metric_tol,
            max_iter=max(1, cap - int(used.max())),
            warn=False,
            minres_fallback=first,
        )

    def plain_residual(X):
        return np.linalg.norm(C - N @ X, axis=0)

    used = np.zeros(C.shape[1], dtype=int)
    result = run(y0, tol, True)
    used += result.column_iter
    Y, X = result.x, cycle(result.x)
    target = tol * np.linalg.norm(C, axis=0)
    residual = plain_residual(X)
    metric_tol = tol
    for _ in range(AMG_RESTARTS if plain_rule and result.converged else 0):
        loose = residual > target
        if not loose.any() or used.max() >= cap:
            break
        metric_tol = max(
            np.finfo(float).eps, 0.5 * metric_tol * np.min(target[loose] / residual[loose])
        )
        refined = run(Y, metric_tol, False)
        used += refined.column_iter
        X_refined = cycle(refined.x)
        residual_refined = plain_residual(X_refined)
        better = residual_refined < residual
        X[:, better], Y[:, better] = X_refined[:, better], refined.x[:, better]
        residual = np.minimum(residual, residual_refined)
        if not refined.converged:  # a direction lost in rounding, or the cap
            break
    result.x, result.iterate = X, Y
    result.column_iter = used
    result.n_iter = int(used.max())
    return result
