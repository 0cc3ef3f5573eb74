"""Graph inference of the Laplace type: what GFHF and Poisson learning share.

Both infer the labels of the unlabeled training points from a weighted graph ``W`` over all
training points by solving a linear system of the graph Laplacian ``L = D - W``: GFHF the
harmonic system ``(D_uu - W_uu) F_u = W_ul Y_l`` (:mod:`structreg.models.harmonic`), Poisson
learning ``L u = b`` with sources at the labeled points (:mod:`structreg.models.poisson`).

This module holds the road from the data to those solves and back:

- :class:`GraphInferenceClassifier`, the estimator base: validation, label encoding, the
  graph, the class prior of points that no label reaches, ``transduction_`` and the
  out-of-sample rule; a subclass gives its system (``_solve_system``).
- :class:`LabeledGraph`, the checked inputs of a solve (affinities without self-loops, the
  labeled mask and values, the connected components), and :func:`common_row_sum`, which
  lets one-of-c problems solve one column fewer.
- :func:`solve_laplace_system`, the solve of a Laplace-type system: a sparse factorisation
  for small systems, Jacobi-scaled conjugate gradients
  (:func:`~structreg.solvers.cg.conjugate_gradient`) for large ones, switching, when CG
  turns out slow (mesh-like graphs of low-dimensional data), to a sparse Cholesky
  factorisation (CHOLMOD, where scikit-sparse is installed), a LU of bounded fill or
  multigrid-preconditioned CG (:mod:`structreg.solvers.multigrid`), by measured crossover.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import spilu, splu
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._params import constraints_for
from .._resources import available_memory, blas_threads
from ..solvers.cg import conjugate_gradient, warn_not_converged
from ..solvers.multigrid import amg_available, amg_conjugate_gradient
from ..structure.graphs import (
    HEAT_FLOOR,
    _nearest_distinct_distance,
    check_graph,
    knn_graph,
    neighbor_scale,
    resolve_algorithm,
    reusing_knn_graphs,
    self_tuning_graph,
)
from ._base import SemiSupervisedLabelsMixin, check_training_X, missing_as_unlabeled
from ._degenerate import warn_if_degenerate

__all__ = ["DisconnectedGraphWarning", "normalized_cut"]


class DisconnectedGraphWarning(UserWarning):
    """Some unlabeled points lie in graph components without any labeled point."""


# ---------------------------------------------------------------------------------------------
# the solve of a Laplace-type system

HARMONIC_DIRECT_MAX = 2000
"""``method="auto"`` of :func:`solve_laplace_system` (and so of
:func:`~structreg.models.harmonic.harmonic_function` and
:func:`~structreg.models.poisson.poisson_function`) factorises systems of up to this many
unknowns directly (exact, and cheap at this size)."""

HARMONIC_CG_PROBE = 100
"""``method="auto"`` beyond ``HARMONIC_DIRECT_MAX`` unknowns: conjugate gradients run this
many iterations; if they have not converged and their rate so far predicts more than twice as
many again, the system is factorised instead, if its LU fits in :data:`HARMONIC_FILL_MAX`.
Which method wins depends on the graph, not its size: kNN graphs of high-dimensional data are
expander-like (CG converges in a hundred or so iterations, while a sparse LU fills in: 106
times the nonzeros of the USPS system), those of low-dimensional data are mesh-like (CG needs
many hundreds to thousands, the LU stays sparse: 8-14 times). Measured (self-tuning weights,
``tol=1e-6``, 2 loaded cores; predicted remaining iterations after 100 / iterations CG needs):
USPS (11,000 points, 256-d, k = 7) at 1, 3 and 10 labels per class 107 / 157, 59 / 138, 9 / 108
(1.2-1.9 s; the LU takes 3.5-8 s); two moons, 1e4 points 280 / 803 (LU 0.1-0.5 s), 1e5 points
246 / 2299 (28 s; LU 2.3-2.9 s)."""

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
without pivoting is stable for diagonally dominant matrices).  On the 1e5-point two-moons
system: fill 4.6x instead of COLAMD's 11.4x, 1.1 s instead of 3.3 s."""


AMG_MIN_UNKNOWNS = 500_000
"""``method="auto"``, when CG turns out slow and CHOLMOD is not installed: systems of at least
this many unknowns go to multigrid-preconditioned CG, smaller ones to a LU of bounded fill
(multigrid when it does not fit).  Measured on two moons (self-tuning weights, 2 cores under
load): 1e5 unknowns LU 0.7-0.8 s, multigrid 1.0-3.0 s (mostly set-up); 1e6 unknowns LU 24 s,
multigrid 21 s, and the LU's fill grows faster than the points."""

AMG_MAX_ITER = 500
"""``method="auto"``: multigrid-preconditioned CG that has not converged after this many
iterations (tens are usual; heat weights without their floor took 90-200 at 1e6-2e6 points)
gives way to plain CG."""

CHOLMOD_FILL_BYTES = HARMONIC_FILL_MAX * 12
"""``method="auto"`` factorises a slow system by CHOLMOD only when this many bytes per nonzero
of the system (``HARMONIC_FILL_MAX`` times the nonzeros, 8-byte values and 4-byte indices) fit
in half the available memory: CHOLMOD's fill is not bounded in advance, as the LU's is.  On
two moons its factor holds 3-4 times the system's nonzeros (1e5-1e6 unknowns: 0.3-0.5 s and
7 s, against 0.7 s and 24 s for the LU and 1-3 s and 21 s for multigrid)."""


METHODS = ("auto", "direct", "cg", "amg")


def check_method(method: str) -> None:
    """Refuse a ``method`` other than those of :func:`solve_laplace_system`."""
    if method not in METHODS:
        raise ValueError(f"method must be 'auto', 'direct', 'cg' or 'amg', got {method!r}")


def solve_laplace_system(
    M: sp.csr_matrix,
    C: np.ndarray,
    method: str,
    tol: float,
    max_iter: int | None,
    *,
    grounded: np.ndarray | None = None,
    project: Callable[[np.ndarray], np.ndarray] | None = None,
    probe: bool = True,
) -> tuple[np.ndarray, dict]:
    """``X`` with ``M X = C`` for a Laplace-type ``M``, and the solve's ``info``.

    ``M`` is symmetric, non-positive off the diagonal and diagonally dominant: either
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
        (:func:`~structreg.solvers.multigrid.amg_conjugate_gradient`).  ``"auto"``: direct up
        to :data:`HARMONIC_DIRECT_MAX` unknowns, CG beyond; when a probe of
        :data:`HARMONIC_CG_PROBE` iterations predicts slow convergence, CHOLMOD's sparse
        Cholesky factorisation where scikit-sparse is installed and the factor fits
        (:data:`CHOLMOD_FILL_BYTES`), else a LU of bounded fill below
        :data:`AMG_MIN_UNKNOWNS` unknowns and multigrid from there on (or when the LU does
        not fit), CG going on from the probe if none of them gives the solution.
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
    probe : bool, default=True
        ``method="auto"``: False when CG is known to be slow on this graph (another
        system on the same kNN graph needed the replacement): the replacement is tried
        first, without the probe, and CG runs from the start only if none gives the
        solution.

    Returns
    -------
    X : ndarray of shape (m, k)
    info : dict
        ``"method"``: ``"direct"``, ``"cg"`` or ``"amg"``, the method that gave ``X``;
        ``"n_iter"``: the CG iterations run, summed over the columns (including those of a
        probe before another method).
    """
    project = _unchanged if project is None else project

    def factorised(factor: Callable) -> np.ndarray | None:
        X = _grounded_solve(factor, M, C, grounded)
        return None if X is None else project(X)

    if method == "direct" or (method == "auto" and M.shape[0] <= HARMONIC_DIRECT_MAX):
        return factorised(_factor_solve), {"method": "direct", "n_iter": 0}
    diagonal = M.diagonal()
    s = 1.0 / np.sqrt(np.where(diagonal > 0, diagonal, 1.0))  # isolated vertices: zero rows
    N = sp.csr_matrix(M.multiply(s[:, None]).multiply(s[None, :]))

    def multigrid(cap: int | None) -> tuple[np.ndarray, dict, bool]:
        # the scaled Laplacian's null vector S^-1 1 is what the coarse levels must keep
        with blas_threads(1):
            result = amg_conjugate_gradient(
                N,
                s[:, None] * C,
                near_null=1 / s,
                tol=tol,
                max_iter=cap,
                plain_rule=grounded is None,  # a singular Laplacian: the V-cycle norm
            )
        info = {"method": "amg", "n_iter": int(result.column_iter.sum())}
        return project(s[:, None] * result.x), info, bool(result.converged)

    if method == "amg":
        X, info, converged = multigrid(max_iter)
        if not converged:
            warn_not_converged(np.array([converged]), tol, max_iter or 10 * N.shape[0])
        return X, info

    def instead_of_slow_cg() -> tuple[np.ndarray, dict] | None:
        """The solve that replaces a slow CG, by measured crossover, or None."""
        if _cholmod_fits(M):
            X = factorised(_cholmod_solve)
            if X is not None:
                return X, {"method": "direct", "n_iter": 0}
        if M.shape[0] < AMG_MIN_UNKNOWNS or not amg_available():
            X = factorised(functools.partial(_bounded_factor_solve, tol=tol))
            if X is not None:
                return X, {"method": "direct", "n_iter": 0}
        if amg_available():
            X, info, converged = multigrid(AMG_MAX_ITER)
            if converged:
                return X, info
        return None

    Y, info = _cg_or_replace(N, s[:, None] * C, method, tol, max_iter, instead_of_slow_cg, probe)
    if info["method"] != "cg":
        return Y, info
    return project(s[:, None] * Y), info


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
            return s * scipy.linalg.solve(scaled, s * B, assume_a="pos")
        return splu(sp.csc_matrix(A), **_SDD_LU).solve(B)
    except (np.linalg.LinAlgError, RuntimeError) as exc:  # RuntimeError: SuperLU's "singular"
        raise ValueError(NUMERICALLY_SINGULAR) from exc


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
    (:data:`EXCESS_BLOCK` pivots per panel): O(m^3) time and O(m^2) memory, for the small
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
    :data:`CHOLMOD_FILL_BYTES` per nonzero fit in half the available memory."""
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
    """``A^{-1} B`` by a sparse LU allowed :data:`HARMONIC_FILL_MAX` times the nonzeros of
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


def _cg_or_replace(
    N: sp.csr_matrix,
    C: np.ndarray,
    method: str,
    tol: float,
    max_iter: int | None,
    replace: Callable[[], tuple[np.ndarray, dict] | None],
    probe: bool = True,
) -> tuple[np.ndarray, dict]:
    """CG on ``N Y = C`` (symmetric positive (semi)definite, consistent): ``(Y, info)``.

    With ``method="auto"``, when the first :data:`HARMONIC_CG_PROBE` iterations of some
    column predict that it would need more than twice as many again, ``replace()`` (the final
    solution of the unscaled system and its ``info`` by another method, or None) is tried;
    when it gives one, that is returned (its ``"n_iter"`` plus the probe's), else CG goes on
    from the probe's iterate.  ``probe=False``: ``replace()`` first; when it gives none, CG
    to the cap (no probe, and no second ``replace()``).
    """
    cap = 10 * N.shape[0] if max_iter is None else int(max_iter)
    if method == "auto" and not probe and cap > HARMONIC_CG_PROBE:
        replaced = replace()
        if replaced is not None:
            return replaced
        method = "cg"  # nothing replaces CG on this graph: asking again would not either

    def cg(iterations: int, x0: np.ndarray | None = None):
        # one BLAS thread: threaded BLAS made small solves 10-100 times slower on 2 cores
        with blas_threads(1):
            return conjugate_gradient(N, C, x0=x0, tol=tol, max_iter=iterations, warn=False)

    if method == "cg" or cap <= HARMONIC_CG_PROBE:
        result = cg(cap)
        warn_not_converged(result.column_converged, tol, cap)
        return result.x, {"method": "cg", "n_iter": int(result.column_iter.sum())}
    probed = cg(HARMONIC_CG_PROBE)
    used = int(probed.column_iter.sum())
    if probed.converged:
        return probed.x, {"method": "cg", "n_iter": used}
    norms = np.linalg.norm(C, axis=0)
    relative = np.linalg.norm(C - N @ probed.x, axis=0) / np.where(norms > 0, norms, 1.0)
    reached = np.max(relative)
    rate = reached ** (1.0 / HARMONIC_CG_PROBE) if 0 < reached < 1 else 1.0
    if rate >= 1.0 or np.log(tol / reached) / np.log(rate) > 2 * HARMONIC_CG_PROBE:
        replaced = replace()
        if replaced is not None:
            X, info = replaced
            return X, {**info, "n_iter": used + info["n_iter"]}
    rest = cg(cap - HARMONIC_CG_PROBE, x0=probed.x)
    warn_not_converged(rest.column_converged, tol, cap)
    return rest.x, {"method": "cg", "n_iter": used + int(rest.column_iter.sum())}


# ---------------------------------------------------------------------------------------------
# the labeled graph


@dataclass
class LabeledGraph:
    """A weighted graph with some vertices labeled: the checked inputs of a Laplace-type solve.

    Attributes
    ----------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric non-negative affinities without self-loops (they cancel in ``D - W``).
    labeled : ndarray of bool, shape (n,)
    targets : ndarray of shape (n_labeled, n_outputs)
        Values at the labeled vertices, in the order of ``np.flatnonzero(labeled)``.
    component : ndarray of int, shape (n,)
        The connected component of every vertex.
    labels_in_component : ndarray of int, shape (n_components,)
        Labeled vertices per component.
    """

    W: sp.csr_matrix
    labeled: np.ndarray
    targets: np.ndarray
    component: np.ndarray
    labels_in_component: np.ndarray

    @classmethod
    def build(
        cls, W: sp.spmatrix | np.ndarray, labeled: np.ndarray, targets: np.ndarray
    ) -> LabeledGraph:
        """The graph of affinities ``W`` (sparse or dense; the diagonal is ignored) with the
        vertices of the boolean mask ``labeled`` holding ``targets``."""
        W = sp.csr_matrix(W, dtype=float)
        # self-loops cancel in D - W; an explicit zero (a weight that underflowed) joins
        # nothing, but scipy's component analysis counts it as an edge: a component "reached"
        # only through it would make the system singular.  A graph with neither is used as
        # given (not copied); otherwise one new matrix without them
        if W.diagonal().any() or not W.data.all():
            W = sp.csr_matrix(W - sp.diags(W.diagonal()))
            W.eliminate_zeros()
        labeled = np.asarray(labeled, dtype=bool)
        targets = np.asarray(targets, dtype=float).reshape(int(labeled.sum()), -1)
        n_components, component = connected_components(W, directed=False)
        count = np.bincount(component[labeled], minlength=n_components)
        return cls(W, labeled, targets, component, count)

    @property
    def n(self) -> int:
        return self.W.shape[0]

    @functools.cached_property
    def degree(self) -> np.ndarray:
        """``d = W 1``."""
        return np.asarray(self.W.sum(axis=1)).ravel()

    @property
    def unreachable(self) -> np.ndarray:
        """Unlabeled vertices whose connected component holds no labeled vertex."""
        return ~self.labeled & (self.labels_in_component[self.component] == 0)

    def weak_sets(self) -> np.ndarray | None:
        """The vertices' places in the graph with every *weakly joined set* merged into one
        vertex (:func:`contract`), or None when there is no such set.

        A weakly joined set is a connected set ``S`` of two or more unlabeled vertices, none
        of which sends more than :data:`WEAK_LINK` of its degree out of ``S``, joined to the
        rest of its component by edges of total weight ``cut(S)`` at most the lightest edge
        inside ``S`` (and not 0: a component without labels is left alone).  In ``D - W``
        such a set's rows sum to ``cut(S)``, which rounding to float64 can lose next to its
        degrees: the system is numerically singular (a factorisation fails or gives a
        solution off by any constant on ``S``; a multigrid hierarchy divides by a coarse
        diagonal that rounded to 0 or below), though the harmonic and Poisson problems are
        well posed.  Their solution on ``S`` is constant up to ``O(cut(S) / lambda_2(S))``
        (``lambda_2`` of ``S``'s own Laplacian), so the solvers take it constant there: the
        minimiser of the energy over functions constant on ``S``, the weighted mean of the
        values across ``S``'s edges.  The sets are the label-free components of the graph of
        the edges of weight at least ``WEAK_LINK`` times the larger degree of their ends.
        The test is per vertex, not on ``cut(S)`` against the smallest degree: heat weights
        on millions of points give tight pairs with sparse points hanging off them, whose
        light edges into the pair (more than ``WEAK_LINK`` times the smallest degree of the
        pair's set, less than ``WEAK_LINK`` times the pair's degree) would hide the set.
        """
        found = self._weakly_joined()
        if found is None:
            return None
        part, weak, labels = found
        weak &= labels == 0
        if not weak.any():
            return None
        # a merged set takes the place of its first vertex; the others keep their order
        first = np.full(weak.size, self.n)
        np.minimum.at(first, part, np.arange(self.n))
        key = np.where(weak[part], first[part], np.arange(self.n))
        return np.unique(key, return_inverse=True)[1].ravel()

    def without_weak_sets(
        self, volume: np.ndarray | None = None
    ) -> tuple[LabeledGraph, np.ndarray | None, np.ndarray | None]:
        """``(graph, place, volume)``: this graph with every weakly joined set merged into
        one vertex (:meth:`weak_sets`, :func:`contract`), and so again on the merged graph
        until none is left (a merged set's few, light edges can leave its neighbours weakly
        joined in turn); ``place`` maps every vertex to its vertex of ``graph`` (None when
        nothing merged) and ``volume``, per-vertex weights, is summed over each merged set.
        Labeled vertices keep their order.  One merged graph at a time is held: on large
        graphs each is a copy of the edges."""
        graph, place = self, None
        while (step := graph.weak_sets()) is not None:
            merged = np.zeros(step.max() + 1, dtype=bool)
            merged[step[graph.labeled]] = True
            if volume is not None:
                volume = np.bincount(step, weights=volume, minlength=merged.size)
            graph = LabeledGraph.build(contract(graph.W, step), merged, graph.targets)
            place = step if place is None else step[place]
        return graph, place, volume

    def weakly_joined(self) -> tuple[np.ndarray, bool]:
        """``(inside, crowded)``: the vertices of weakly joined sets (:meth:`weak_sets`, labeled
        or not), and whether a connected component holds two or more of them.

        A Laplacian with one vertex of each component held at 0 (Poisson learning) is
        numerically singular on every weakly joined set that does not hold that vertex: fine
        when a component has at most one such set and the vertex is taken inside it, not when
        it has two (then :func:`excess_solve` solves it)."""
        found = self._weakly_joined()
        if found is None:
            return np.zeros(self.n, dtype=bool), False
        part, weak, _ = found
        inside = weak[part]
        first = np.unique(part[inside], return_index=True)[1]  # a vertex of every set
        sets = np.bincount(self.component[np.flatnonzero(inside)[first]])
        return inside, bool((sets > 1).any())

    def apart_labeled_parts(self) -> LabeledGraph:
        """This graph without its weak edges (weight below :data:`WEAK_LINK` times the larger
        degree of their ends) that join two parts of the strong-edge graph which both hold
        labeled vertices: each such part becomes a component of its own.

        The harmonic solution barely feels such an edge, but the Poisson solution does:
        across an edge of weight ``w`` it steps by about the net source that flows through,
        divided by ``w``, so the two parts' scores are offset by ``1 / WEAK_LINK`` (1e8) or
        more times their variation inside the parts -- beyond what float64 resolves there --
        and the offset, set by the parts' label counts rather than by the points, would
        decide their labels."""
        found = self._strong_parts()
        if found is None:
            return self
        C, strong, part = found
        labels = np.bincount(part[self.labeled], minlength=int(part.max()) + 1)
        between = (part[C.row] != part[C.col]) & (labels[part[C.row]] > 0)
        drop = ~strong & between & (labels[part[C.col]] > 0)
        if not drop.any():
            return self
        keep = ~drop
        W = sp.csr_matrix((C.data[keep], (C.row[keep], C.col[keep])), shape=self.W.shape)
        return LabeledGraph.build(W, self.labeled, self.targets)

    def _strong_parts(self) -> tuple[sp.coo_matrix, np.ndarray, np.ndarray] | None:
        """``(C, strong, part)``: the edges, which are strong (at least :data:`WEAK_LINK`
        times the larger degree of their ends) and every vertex's component in the graph of
        the strong edges; None when every edge is strong."""
        if not self.W.nnz:
            return None
        degree = self.degree
        C = self.W.tocoo()
        strong = C.data >= WEAK_LINK * np.maximum(degree[C.row], degree[C.col])
        if strong.all():
            return None
        S = sp.csr_matrix((C.data[strong], (C.row[strong], C.col[strong])), shape=self.W.shape)
        return C, strong, connected_components(S, directed=False)[1]

    def _weakly_joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(part, weak, labels)``: every vertex's component in the graph of the strong
        edges, which of these parts are weakly joined sets (labeled or not), and the labeled
        vertices in each part; None when every edge is strong."""
        found = self._strong_parts()
        if found is None:
            return None
        C, strong, part = found
        degree = self.degree
        n_sets = int(part.max()) + 1
        size = np.bincount(part, minlength=n_sets)
        labels = np.bincount(part[self.labeled], minlength=n_sets)
        leaving = part[C.row] != part[C.col]
        out = np.bincount(C.row[leaving], weights=C.data[leaving], minlength=self.n)
        cut = np.bincount(part, weights=out, minlength=n_sets)
        leaky = np.zeros(n_sets, dtype=bool)
        leaky[part[out > WEAK_LINK * degree]] = True
        lightest = np.full(n_sets, np.inf)
        np.minimum.at(lightest, part[C.row[strong]], C.data[strong])
        weak = (size > 1) & (cut > 0) & ~leaky & (cut <= lightest)
        return part, weak, labels


TIE_RTOL = 64 * float(np.finfo(float).eps)
"""Two class scores closer than this fraction of the largest training score are a tie
(:meth:`GraphInferenceClassifier._break_ties`)."""

WEAK_LINK = float(np.sqrt(np.finfo(float).eps))
"""A set of unlabeled vertices each of which sends at most this fraction of its degree out of
the set is solved as one vertex (:meth:`LabeledGraph.weak_sets`): below it, the
factorisation's error on the set (about ``eps / WEAK_LINK``) would exceed that of taking the
solution constant there (about ``WEAK_LINK``).  Self-tuning weights give such
sets where a tight cluster (or a point with ``n_neighbors`` copies) meets sparser points:
``exp(-4 d^2 / (sigma_i sigma_j))`` of 1e-18 next to weights near 1."""


def contract(W: sp.spmatrix, place: np.ndarray) -> sp.csr_matrix:
    """The graph ``W`` (symmetric) with the vertices that share a ``place`` merged: the weight
    between two places is the sum of the weights between their vertices, a place has no
    self-loop.  Its Laplacian is ``P^T (D - W) P`` (``P`` the places' indicator matrix), the
    harmonic energy of the functions constant on every place.

    Each edge is read once (the upper triangle) and the result is that sum plus its
    transpose, so it is exactly symmetric; one pass over the edges, where ``P^T W P`` took
    two sparse products."""
    m = int(place.max()) + 1
    edges = sp.triu(W, k=1, format="coo")
    a, b = place[edges.row], place[edges.col]
    apart = a != b
    a, b = a[apart], b[apart]
    upper = sp.csr_matrix((edges.data[apart], (np.minimum(a, b), np.maximum(a, b))), shape=(m, m))
    upper.sum_duplicates()
    Wc = sp.csr_matrix(upper + upper.T)
    Wc.eliminate_zeros()
    return Wc


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
# the estimator base

WEIGHT_CHOICES = ("self-tuning", "heat", "connectivity")
AUTO_WEIGHTINGS = ("self-tuning", "heat")
"""``weights="auto"``: the weightings fitted, at every size; the labeling of smallest
:func:`normalized_cut` is kept (the first on a tie).  Two moons, 5 labels per class (2 cores):
1e6 points, self-tuning weights 90.6 %, both 25 s and 99.93 % (the smaller cut keeps heat
weights' labeling); 1e7 points, both 396 s, 13.8 GiB, 99.93 % (self-tuning alone 95.5 %)."""


def normalized_cut(W: sp.spmatrix, labels: np.ndarray) -> float:
    """``sum_k cut(S_k) / vol(S_k)`` of the partition of the vertices by ``labels``, on the
    edges of ``W`` counted once each (weights ignored): how many kNN edges a labeling cuts,
    relative to the size of each class.  A labeling that follows the data's clusters cuts
    few.

    Examples
    --------
    >>> W = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0.5]]))
    >>> normalized_cut(W, np.array([0, 0, 1, 1]))  # one edge cut; volumes 3 and 3
    0.6666666666666666
    """
    C = sp.coo_matrix(W)
    off = C.row != C.col
    row, col = C.row[off], C.col[off]
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.ravel()
    degree = np.bincount(row, minlength=W.shape[0]).astype(float)
    cut = codes[row] != codes[col]
    cut_k = np.bincount(codes[row[cut]], minlength=codes.max() + 1)
    vol_k = np.bincount(codes, weights=degree, minlength=codes.max() + 1)
    return float(np.sum(cut_k / np.where(vol_k > 0, vol_k, 1.0)))


WEIGHTS_DOC = """weights : {CHOICES}, default=DEFAULT
        Edge weights of the kNN graph and of the out-of-sample rule.  ``"self-tuning"``:
        ``exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j))``, ``sigma_i`` the distance from
        ``x_i`` to its ``n_neighbors``-th nearest other training point
        (:func:`~structreg.structure.graphs.self_tuning_graph`; a new point's ``sigma`` is
        its distance to its ``n_neighbors``-th nearest training point).  ``"heat"``:
        ``max(exp(-||x_i - x_j||^2 / t), 1e-4)`` with one width ``t`` (Zhu et al.'s
        Gaussian fields; the floor keeps the systems of large graphs well conditioned,
        ``structreg.models.graph_inference.HEAT_FLOOR``).
        ``"connectivity"``: 1 on every edge."""
"""The ``weights`` entry of the subclasses' parameter lists, which write ``WEIGHTS`` on a
line of their own in its place (``CHOICES`` and ``DEFAULT`` filled in from the subclass)."""

TIES_DOC = """    labeled_ : ndarray of bool, shape (n_samples,)
        The labeled training points.
    labeled_codes_ : ndarray of int, shape (n_labeled,)
        Their class codes (indices into ``classes_``).
    score_scale_ : float
        The largest magnitude of the training scores: two class scores closer than
        ``64 eps`` times it are a tie, which goes to the nearest labeled training point's
        class (its score is raised by that much, so every output agrees).
    knn_algorithm_ : {"exact", "approximate", "precomputed"}
        The neighbour search that built the graph: exact, or approximate (faiss's inverted
        file tuned to a measured recall of 0.99, else NN-descent with ``pynndescent``)
        for large high-dimensional data (:func:`~structreg.structure.graphs.knn_graph`,
        ``algorithm="auto"``); ``"precomputed"`` for a graph given as a matrix.
"""
"""The attributes of the tie rule (:meth:`GraphInferenceClassifier._break_ties`), which the
subclasses' attribute lists write as ``TIES`` on a line of their own."""


class GraphInferenceClassifier(SemiSupervisedLabelsMixin, ClassifierMixin, BaseEstimator):
    """Base of the semi-supervised graph classifiers of the Laplace type (GFHF, Poisson
    learning).

    :meth:`fit` checks the parameters and the data, encodes the labels (unlabeled samples:
    ``-1``, ``None`` for string labels, a missing label or the ``unlabeled`` mask), builds the
    graph over all training points (``graph``, ``n_neighbors``, ``weights``, ``t``), solves
    the subclass's system for the class scores of every training point, gives the points of
    components without labels the class prior (with a :class:`DisconnectedGraphWarning`),
    and sets ``transduction_``: the given label of every labeled point, the class of the
    largest score elsewhere.  A new point's scores are the weighted mean of its
    ``n_neighbors`` nearest training points' (the out-of-sample rule, :meth:`_extend`);
    :meth:`predict` takes their largest.

    The parameters are those of the graph (``n_neighbors``, ``weights``, ``t``, ``graph``) and
    of its solve (``tol``, ``max_iter``; :func:`solve_laplace_system`); a subclass with more
    lists them all in its own ``__init__`` (scikit-learn reads the parameters from its
    signature) and passes these on.  It gives its system:

    - ``_scores_attribute``: the name of the fitted attribute that holds the training
      points' scores (the ``f_j`` of the out-of-sample rule);
    - ``_solve_system(W, labeled, targets)``: ``(scores, unreachable, info)`` for the
      one-of-c ``targets`` of the labeled points (see :meth:`_solve_system`);
    - optionally ``_class_prior`` (the prior of unreachable points) and ``_finish_scores``
      (what becomes of the scores before they are stored).

    Its docstring may write ``WEIGHTS`` on a line of its own for the shared entry of the
    ``weights`` parameter; its parameter constraints are the glossary's, with the weights
    this base knows (both filled in when the subclass is defined).
    """

    _semi_supervised = True
    _scores_attribute: str

    def __init__(
        self,
        n_neighbors=7,
        weights="self-tuning",
        t=None,
        graph="knn",
        tol=HARMONIC_TOL,
        max_iter=None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.t = t
        self.graph = graph
        self.tol = tol
        self.max_iter = max_iter

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._parameter_constraints = {
            **constraints_for(cls),
            "weights": [StrOptions(set(WEIGHT_CHOICES))],
            **getattr(cls, "_constraint_overrides", {}),
        }
        if cls.__doc__:
            choices = sorted(cls._parameter_constraints["weights"][0].options)
            default = inspect.signature(cls.__init__).parameters["weights"].default
            entry = WEIGHTS_DOC.replace("CHOICES", ", ".join(f'"{c}"' for c in choices))
            entry = entry.replace("DEFAULT", f'"{default}"')
            cls.__doc__ = cls.__doc__.replace("    WEIGHTS\n", "    " + entry + "\n")
            cls.__doc__ = cls.__doc__.replace("    TIES\n", TIES_DOC)

    def fit(self, X, y, unlabeled=None) -> GraphInferenceClassifier:
        """Infer the labels of the unlabeled training points over the graph of all of them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels; ``-1`` (``None`` for string labels) and missing values (NaN, None,
            ``pd.NA``, e.g. in a pandas Series) mark unlabeled samples.
        unlabeled : array-like of bool, shape (n_samples,), optional
            Marks unlabeled samples explicitly (use when -1 is a real class).

        Returns
        -------
        self
        """
        from .distributed import fit_on_cluster, is_dask_collection

        if is_dask_collection(X):  # a dask array: fitted on the cluster (models.distributed)
            fit_on_cluster(self, X, y, unlabeled)
            if self.unreachable_.any():
                _warn_unreachable(self.unreachable_)
            return self
        self._validate_params()
        y = missing_as_unlabeled(y, unlabeled)
        X, y = validate_data(self, X, y, dtype=float, y_numeric=False)
        check_training_X(self, X)
        y = column_or_1d(y, warn=True)
        self.classes_, y_codes, labeled = self._encode_labels(y, unlabeled)
        fits, probe = [], True
        with reusing_knn_graphs({}):  # weights="auto": one neighbour search for both graphs
            for weights in self._weightings(X.shape[0]):
                self.weights_ = weights
                self._fit_graph(X)
                self._infer(labeled, y_codes, probe=probe)
                # the same kNN graph: where one weighting needed multigrid, so does the next
                probe = probe and self.solver_ != "amg"
                fitted = self._fitted_names()
                fits.append({k: self.__dict__[k] for k in fitted if k in self.__dict__})
        if len(fits) > 1:  # weights="auto": the labeling that cuts the kNN graph least
            pattern = fits[0]["graph_"]
            best = min(fits, key=lambda fit: normalized_cut(pattern, fit["transduction_"]))
            for name in self._fitted_names():
                self.__dict__.pop(name, None)
            self.__dict__.update(best)
        if self.unreachable_.any():
            _warn_unreachable(self.unreachable_)
        scores = getattr(self, self._scores_attribute)
        warn_if_degenerate(self, scores, labeled, y_codes, self._degenerate_hint)
        return self

    def _infer(self, labeled: np.ndarray, y_codes: np.ndarray, probe: bool = True) -> None:
        """The scores and labels of the training points on ``graph_`` (``probe``: see
        :func:`solve_laplace_system`)."""
        n_classes = len(self.classes_)
        frequencies = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
        prior = self._class_prior(frequencies)
        targets = np.eye(n_classes)[y_codes[labeled]]
        scores, self.unreachable_, info = self._solve_system(
            self.graph_, labeled, targets, probe=probe
        )
        self.solver_, self.n_iter_ = info["method"], max(1, info["n_iter"])
        scores[self.unreachable_] = prior
        scores = self._finish_scores(scores, labeled, y_codes, prior)
        self.labeled_ = labeled
        self.labeled_codes_ = y_codes[labeled]
        self.score_scale_ = float(np.max(np.abs(scores), initial=0.0))
        scores = self._break_ties(scores, self.X_)
        setattr(self, self._scores_attribute, scores)
        codes = np.argmax(scores, axis=1)
        codes[labeled] = y_codes[labeled]
        self.transduction_ = self.classes_[codes]

    def _break_ties(self, scores: np.ndarray, points: np.ndarray) -> np.ndarray:
        """``scores`` (of the rows of ``points``) with every row whose two best scores tie to
        rounding -- within :data:`TIE_RTOL` of the training scores' largest magnitude,
        ``score_scale_`` -- raised by that much at the class of the nearest labeled training
        point, so that the tie goes to it in every output (labels, probabilities, decision
        values) rather than to the first class.  Rounding cannot decide such ties: the
        class prior of a component without labels when the labels are balanced, or exact
        copies of a labeled point in a clique without a net source (Poisson learning)."""
        if scores.shape[1] < 2:
            return scores
        best_two = np.sort(scores, axis=1)[:, -2:]
        tied = best_two[:, 1] - best_two[:, 0] <= TIE_RTOL * self.score_scale_
        if not tied.any():
            return scores
        index = NearestNeighbors(n_neighbors=1).fit(self.X_[self.labeled_])
        nearest = index.kneighbors(points[tied], return_distance=False)[:, 0]
        best = best_two[tied, 1]
        scores = scores.copy()
        scores[np.flatnonzero(tied), self.labeled_codes_[nearest]] = best + np.maximum(
            TIE_RTOL * self.score_scale_, 4 * np.spacing(np.abs(best))
        )
        return scores

    def _weightings(self, n_samples: int) -> tuple[str, ...]:
        """The edge weightings to fit: ``weights``; ``"auto"``: :data:`AUTO_WEIGHTINGS`, at
        every size (``n_samples`` is not consulted: the choice is the same at any size)."""
        if self.weights != "auto":
            return (self.weights,)
        return AUTO_WEIGHTINGS

    def _fitted_names(self) -> tuple[str, ...]:
        """The attributes one weighting's fit sets (what ``weights="auto"`` keeps of the best)."""
        return (
            "weights_",
            "X_",
            "neighbors_",
            "graph_",
            "t_",
            "local_scale_",
            "unreachable_",
            "solver_",
            "n_iter_",
            "class_prior_",
            "transduction_",
            "labeled_",
            "labeled_codes_",
            "score_scale_",
            "knn_algorithm_",
            self._scores_attribute,
        )

    def predict(self, X) -> np.ndarray:
        """The class of the largest score of each point by the out-of-sample rule: the
        weighted mean of its ``n_neighbors`` nearest training points' scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self._extend(X)  # first: it checks that the estimator is fitted
        return self.classes_[np.argmax(scores, axis=1)]

    # -- the system: the subclass's ---------------------------------------------------------

    def _solve_system(
        self, W: sp.csr_matrix, labeled: np.ndarray, targets: np.ndarray, probe: bool = True
    ) -> tuple[np.ndarray, np.ndarray, dict]:
        """``(scores, unreachable, info)``: the class scores of all training points on the
        graph ``W`` (NaN rows allowed where unreachable), the unlabeled points whose
        component holds no labeled point, and the solve's ``info`` (``"method"``,
        ``"n_iter"``; :func:`solve_laplace_system`, which takes ``probe``), for the one-of-c
        ``targets`` of the points of the mask ``labeled``."""
        raise NotImplementedError

    def _class_prior(self, frequencies: np.ndarray) -> np.ndarray:
        """The class prior, given to unreachable points: the labeled class frequencies."""
        return frequencies

    def _finish_scores(
        self, scores: np.ndarray, labeled: np.ndarray, y_codes: np.ndarray, prior: np.ndarray
    ) -> np.ndarray:
        """The scores to store, from those of the solve (unreachable rows: the prior)."""
        return scores

    def _checked_class_prior(self) -> np.ndarray:
        """The subclass's ``class_prior`` array, checked (one finite non-negative number per
        class, not all zero) and normalised to sum to 1."""
        prior = np.asarray(self.class_prior, dtype=float).ravel()
        if prior.shape != self.classes_.shape:
            raise ValueError(
                f"class_prior has {prior.size} entries; expected one per class "
                f"({self.classes_.size}: {self.classes_.tolist()})"
            )
        if not (np.all(np.isfinite(prior)) and np.all(prior >= 0) and prior.sum() > 0):
            raise ValueError(
                f"class_prior must be finite, non-negative and not all zero, got {prior}"
            )
        return prior / prior.sum()

    # -- the graph and the out-of-sample rule -------------------------------------------------

    def _check_width(self) -> None:
        if self.t is not None and self.weights not in ("heat", "auto"):
            raise ValueError(
                f"t is the width of heat weights; it is not used with weights={self.weights!r} "
                "(set weights='heat' or t=None)"
            )

    def _fit_graph(self, X: np.ndarray) -> None:
        """``X_``, ``neighbors_``, ``graph_`` and the weights' scale (``t_`` for heat weights,
        ``local_scale_`` for self-tuning ones)."""
        self._check_width()
        n = X.shape[0]
        for name in ("t_", "local_scale_"):  # a refit with other weights
            self.__dict__.pop(name, None)
        self.X_ = X
        self.neighbors_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, n)).fit(X)
        self.knn_algorithm_ = "precomputed"
        if isinstance(self.graph, str):
            if self.graph != "knn":
                raise ValueError(
                    f"{type(self).__name__} takes graph='knn' or a precomputed affinity "
                    f"matrix, got graph={self.graph!r}"
                )
            self.knn_algorithm_ = resolve_algorithm(X, "auto")
            if self.weights_ == "self-tuning":
                self.graph_, self.local_scale_ = self_tuning_graph(X, self.n_neighbors)
                self.graph_.eliminate_zeros()  # weights that underflowed join nothing
                return
            self.graph_ = knn_graph(X, self.n_neighbors, weights=self.weights_, t=self.t)
            if self.weights_ == "heat":
                # the width knn_graph used: the mean squared edge length
                edges = self.graph_.tocoo()
                self.t_ = self.t or _positive_width(
                    np.sum((X[edges.row] - X[edges.col]) ** 2, axis=1), X, self.n_neighbors
                )
                np.maximum(self.graph_.data, HEAT_FLOOR, out=self.graph_.data)
            return
        self.graph_ = check_graph(self.graph, n)
        if self.weights_ == "connectivity":
            return
        k = min(self.n_neighbors + 1, n)
        dist, ind = self.neighbors_.kneighbors(X, n_neighbors=k)
        others = ind != np.arange(n)[:, None]
        if self.weights_ == "heat":
            if self.t is not None:
                self.t_ = float(self.t)
            else:
                self.t_ = _positive_width(dist[others] ** 2, X, self.n_neighbors)
        else:  # the distance to the n_neighbors-th nearest other point
            self.local_scale_ = _positive_scales(np.max(np.where(others, dist, 0.0), axis=1), X)

    def _neighbour_weights(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w, ind)``: the ``n_neighbors`` nearest training points of each row of ``X`` and
        their weights in the out-of-sample rule, up to a positive factor per row."""
        dist, ind = self.neighbors_.kneighbors(X)
        d2 = dist**2
        if self.weights_ == "connectivity":
            return np.ones_like(d2), ind
        if self.weights_ == "heat":  # never below the floor: nothing underflows
            return np.maximum(np.exp(-d2 / self.t_), HEAT_FLOOR), ind
        floor = self.local_scale_.min()
        exponent = 4.0 * d2 / (np.maximum(dist[:, -1:], floor) * self.local_scale_[ind])
        # shift by the smallest exponent: the same ratios, without underflow far from the data
        return np.exp(-(exponent - exponent.min(axis=1, keepdims=True))), ind

    def _extend(self, X) -> np.ndarray:
        """The out-of-sample rule at the rows of ``X``: ``f(x) = sum_j w(x, x_j) f_j /
        sum_j w(x, x_j)`` over the ``n_neighbors`` nearest training points, ``w`` the edge
        weight of ``weights``, ``f_j`` the training points' scores; shape
        (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        w, ind = self._neighbour_weights(X)
        scores = getattr(self, self._scores_attribute)
        extended = np.einsum("ik,ikc->ic", w, scores[ind]) / w.sum(axis=1, keepdims=True)
        return self._break_ties(extended, X)


def _warn_unreachable(unreachable: np.ndarray) -> None:
    warnings.warn(
        f"{int(unreachable.sum())} unlabeled training point(s) lie in graph "
        "components without any labeled point, where the solution is "
        "undefined; they get the class prior (labeled class frequencies). Connect "
        "the graph (larger n_neighbors) or label a point in every component.",
        DisconnectedGraphWarning,
        stacklevel=3,
    )


def _positive_width(squared_lengths: np.ndarray, X: np.ndarray, n_neighbors: int) -> float:
    """The heat width of the out-of-sample rule: the mean of the positive squared lengths
    (lengths 0 join copies of a point, as knn_graph's width); when there are none, the
    neighbour scale of the distinct points of ``X``
    (:func:`~structreg.structure.graphs.neighbor_scale`), or 1 when all points are one."""
    positive = squared_lengths[squared_lengths > 0]
    if positive.size:
        return float(np.mean(positive))
    try:
        return neighbor_scale(X, n_neighbors)
    except ValueError:  # all points identical: every weight is 1 whatever the width
        return 1.0


def _positive_scales(sigma: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Zero local scales (a point with ``n_neighbors`` copies) replaced by the distance to the
    nearest point that is not a copy, or 1 when there is none (as
    :func:`~structreg.structure.graphs.self_tuning_graph`)."""
    copies = np.flatnonzero(~(sigma > 0))
    if copies.size:
        sigma = sigma.copy()
        nearest = _nearest_distinct_distance(np.asarray(X, dtype=float), copies)
        sigma[copies] = np.where(nearest > 0, nearest, 1.0)
    return sigma
