"""Gaussian fields and harmonic functions (GFHF; Zhu, Ghahramani & Lafferty, ICML 2003).

Semi-supervised label inference on a weighted graph over labeled and unlabeled training
points: the class scores ``F`` minimise ``sum_ij w_ij ||F_i - F_j||^2 = tr(F^T L F)`` with the
labeled rows clamped to their one-of-c labels, whose minimiser is *harmonic* (every unlabeled
value is the weighted mean of its neighbours' values).  An inductive extension (the
harmonic rule applied to a new point's neighbourhood) classifies unseen points.  The S-RLSC
paper (Fan et al. 2011) uses GFHF with a 7-nearest-neighbour graph as a baseline.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import spilu, splu
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._locality import solve_in_locality_order
from .._params import constraints_for
from ..structure.graphs import check_graph, knn_graph, self_tuning_graph
from ._base import (
    SemiSupervisedLabelsMixin,
    _blas_controller,
    check_training_X,
    missing_as_unlabeled,
)

__all__ = ["GFHF", "DisconnectedGraphWarning", "class_mass_normalize", "harmonic_function"]

_DENSE_FRACTION = 0.125
"""Unlabeled blocks with more than this fraction of nonzeros are solved by dense Cholesky."""


class DisconnectedGraphWarning(UserWarning):
    """Some unlabeled points lie in graph components without any labeled point."""


HARMONIC_DIRECT_MAX = 2000
"""``method="auto"`` of :func:`harmonic_function` factorises systems of up to this many unknowns
directly (exact, and cheap at this size)."""

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
    method : {"auto", "direct", "cg"}, default="auto"
        ``"direct"``: sparse LU (dense Cholesky for dense blocks).  ``"cg"``: conjugate
        gradients on the Jacobi-scaled system ``S A S (S^-1 F_u) = S B``, ``S = D_uu^{-1/2}``
        (``scipy.sparse.linalg.cg``, one output column at a time).
        ``"auto"``: direct up to ``HARMONIC_DIRECT_MAX`` unknowns, CG beyond.
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
    F, unreachable, _ = _harmonic(W, labeled, targets, method, tol, max_iter)
    return F, unreachable


def _harmonic(W, labeled, targets, method, tol, max_iter):
    """:func:`harmonic_function`, and ``info``: the method that gave the solution
    (``"direct"`` or ``"cg"``) and the CG iterations run (``"method"``, ``"n_iter"``)."""
    if method not in ("auto", "direct", "cg"):
        raise ValueError(f"method must be 'auto', 'direct' or 'cg', got {method!r}")
    W = sp.csr_matrix(W, dtype=float)
    W = W - sp.diags(W.diagonal())  # self-loops cancel in D - W
    labeled = np.asarray(labeled, dtype=bool)
    targets = np.asarray(targets, dtype=float).reshape(int(labeled.sum()), -1)
    n = W.shape[0]
    _, component = connected_components(W, directed=False)
    has_label = np.zeros(component.max() + 1 if n else 0, dtype=bool)
    has_label[component[labeled]] = True
    unreachable = ~labeled & ~has_label[component]
    solve = ~labeled & ~unreachable

    F = np.full((n, targets.shape[1]), np.nan)
    F[labeled] = targets
    info = {"method": "direct", "n_iter": 0}
    if solve.any():
        degree = np.asarray(W.sum(axis=1)).ravel()
        W_u = W[solve]
        A = (sp.diags(degree[solve]) - W_u[:, solve]).tocsr()
        total = _common_row_sum(targets)
        cols = slice(None) if total is None else slice(0, -1)
        B = W_u[:, labeled] @ targets[:, cols]
        X, info = solve_in_locality_order(  # cache-friendly products and LU
            lambda A, B: _solve_sdd(A, B, method, tol, max_iter), A, B
        )
        if total is not None:  # the last column; within its targets' range, as harmonic
            # functions are (the maximum principle), which rounding alone would leave
            last = np.clip(total - X.sum(axis=1), targets[:, -1].min(), targets[:, -1].max())
            X = np.column_stack([X, last])
        F[solve] = X
    return F, unreachable, info


def _common_row_sum(targets: np.ndarray) -> float | None:
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


def _solve_sdd(A: sp.csr_matrix, B: np.ndarray, method: str, tol: float, max_iter):
    """``A^{-1} B`` for a symmetric positive definite, diagonally dominant sparse ``A``, and
    the solve's ``info`` (:func:`_harmonic`); ``method`` as in :func:`harmonic_function`."""
    n_u = A.shape[0]
    if method == "direct" or (method == "auto" and n_u <= HARMONIC_DIRECT_MAX):
        return _factor_solve(A, B), {"method": "direct", "n_iter": 0}
    s = 1.0 / np.sqrt(A.diagonal())
    N = sp.csr_matrix(A.multiply(s[:, None]).multiply(s[None, :]))

    def factor():
        F = _bounded_factor_solve(A, B, tol)
        return None if F is None else F / s[:, None]

    X, info = _cg_or_factor(N, s[:, None] * B, method, tol, max_iter, factor)
    return s[:, None] * X, info


_SDD_LU = dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
"""SuperLU's settings for the harmonic systems, which are symmetric and diagonally dominant:
a minimum-degree ordering of ``A + A^T`` and no pivoting off the diagonal (Gaussian elimination
without pivoting is stable for diagonally dominant matrices).  On the 1e5-point two-moons
system: fill 4.6x instead of COLAMD's 11.4x, 1.1 s instead of 3.3 s."""


def _factor_solve(A: sp.spmatrix, B: np.ndarray) -> np.ndarray:
    """``A^{-1} B`` by a sparse LU, or dense Cholesky when ``A`` is dense enough."""
    n_u = A.shape[0]
    if A.nnz > _DENSE_FRACTION * n_u * n_u:
        return scipy.linalg.solve(A.toarray(), B, assume_a="pos")
    return splu(sp.csc_matrix(A), **_SDD_LU).solve(B)


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


def _cg_or_factor(N: sp.csr_matrix, C: np.ndarray, method: str, tol: float, max_iter, factor):
    """CG on ``N X = C`` (symmetric positive (semi)definite, consistent): ``(X, info)``, the
    iterations counted per column and summed.  With ``method="auto"``, when the first
    :data:`HARMONIC_CG_PROBE` iterations of some column predict that it would need more than
    twice as many again, ``factor()`` (a direct solution of bounded fill, or None) is tried
    before CG goes on."""
    cap = 10 * N.shape[0] if max_iter is None else int(max_iter)
    if method == "cg" or cap <= HARMONIC_CG_PROBE:
        X, used, converged = _cg_columns(N, C, tol, cap)
        _warn_not_converged(converged, tol, cap)
        return X, {"method": "cg", "n_iter": used}
    X, used, converged = _cg_columns(N, C, tol, HARMONIC_CG_PROBE)
    if converged.all():
        return X, {"method": "cg", "n_iter": used}
    norms = np.linalg.norm(C, axis=0)
    reached = np.max(np.linalg.norm(C - N @ X, axis=0) / np.where(norms > 0, norms, 1.0))
    rate = reached ** (1.0 / HARMONIC_CG_PROBE) if 0 < reached < 1 else 1.0
    if rate >= 1.0 or np.log(tol / reached) / np.log(rate) > 2 * HARMONIC_CG_PROBE:
        direct = factor()
        if direct is not None:
            return direct, {"method": "direct", "n_iter": used}
    X, more, converged = _cg_columns(N, C, tol, cap - HARMONIC_CG_PROBE, x0=X)
    _warn_not_converged(converged, tol, cap)
    return X, {"method": "cg", "n_iter": used + more}


def _cg_columns(N: sp.csr_matrix, C: np.ndarray, tol: float, max_iter: int, x0=None):
    """Conjugate gradients on ``N x = c`` for every column ``c`` of ``C`` at once, stopping a
    column at ``||c - N x|| <= tol ||c||`` (the recursively updated residual, as
    ``scipy.sparse.linalg.cg`` does).  The columns run independent recurrences (their own
    step lengths), but share one sparse product ``N P`` per iteration, which reads ``N`` once
    for all of them: on the USPS system (10 classes) about 3x faster than ten calls of
    ``scipy.sparse.linalg.cg``, and on graphlearning's graph no slower than its Laplace solve
    (``benchmarks/ssl_peers.py``).  BLAS is held to one thread (threaded BLAS made small
    solves 10-100 times slower on the shared 2-core machine).  Returns ``(X, iterations
    summed over the columns, converged per column)``."""
    k = C.shape[1]
    X = np.zeros(C.shape) if x0 is None else np.array(x0, dtype=float)
    zero = ~np.any(C, axis=0)
    X[:, zero] = 0.0
    target = tol * np.linalg.norm(C, axis=0)
    converged = np.ones(k, dtype=bool)
    used = 0
    with _blas_controller().limit(limits=1, user_api="blas"):
        cols = np.flatnonzero(~zero)
        R = C[:, cols] - N @ X[:, cols]
        rr = np.einsum("ij,ij->j", R, R)
        P, Xa = R.copy(), X[:, cols]
        for _ in range(max_iter):
            done = np.sqrt(rr) <= target[cols]
            if done.any():  # write finished columns back, go on with the others
                X[:, cols[done]] = Xa[:, done]
                keep = ~done
                cols, R, P, Xa, rr = cols[keep], R[:, keep], P[:, keep], Xa[:, keep], rr[keep]
            if not cols.size:
                break
            Q = N @ P
            alpha = rr / np.einsum("ij,ij->j", P, Q)
            Xa += alpha * P
            R -= alpha * Q
            rr_new = np.einsum("ij,ij->j", R, R)
            P *= rr_new / rr
            P += R
            rr = rr_new
            used += cols.size
        X[:, cols] = Xa
        converged[cols[np.sqrt(rr) > target[cols]]] = False
    return X, used, converged


def _warn_not_converged(converged: np.ndarray, tol: float, max_iter: int) -> None:
    if not converged.all():
        warnings.warn(
            f"conjugate gradients did not reach tol={tol} in max_iter={max_iter} iterations "
            f"for {int((~converged).sum())} of {converged.size} column(s)",
            ConvergenceWarning,
            stacklevel=4,
        )


def class_mass_normalize(F: np.ndarray, rows: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Class mass normalisation (Zhu, Ghahramani & Lafferty 2003): ``F`` with the class
    columns of ``F[rows]`` rescaled so that the class masses match ``prior``.

    ``F[i, k] <- prior[k] F[i, k] / sum_{j in rows} F[j, k]`` for ``i`` in ``rows`` (the
    unlabeled points), so that ``sum_{j in rows} F[j, k] = prior[k]``; a class of zero mass
    keeps its zero column.  Other rows are returned unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[1.0, 0.0], [0.9, 0.1], [0.6, 0.4]])
    >>> class_mass_normalize(F, np.array([False, True, True]), np.array([0.5, 0.5]))
    array([[1. , 0. ],
           [0.3, 0.1],
           [0.2, 0.4]])
    """
    mass = F[rows].sum(axis=0)
    prior = np.asarray(prior, dtype=float)
    scale = np.divide(prior, mass, out=np.zeros_like(mass), where=mass > 0)
    out = F.copy()
    out[rows] *= scale
    return out


class _GraphInference:
    """What GFHF and Poisson learning share: the training graph (``graph``, ``n_neighbors``,
    ``weights``, ``t``), the neighbour index of the out-of-sample rule and its weights."""

    def _check_width(self) -> None:
        if self.t is not None and self.weights != "heat":
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
        if isinstance(self.graph, str):
            if self.graph != "knn":
                raise ValueError(
                    f"{type(self).__name__} takes graph='knn' or a precomputed affinity "
                    f"matrix, got graph={self.graph!r}"
                )
            if self.weights == "self-tuning":
                self.graph_, self.local_scale_ = self_tuning_graph(X, self.n_neighbors)
                return
            self.graph_ = knn_graph(X, self.n_neighbors, weights=self.weights, t=self.t)
            if self.weights == "heat":
                # the width knn_graph used: the mean squared edge length
                edges = self.graph_.tocoo()
                self.t_ = self.t or _positive_width(
                    np.sum((X[edges.row] - X[edges.col]) ** 2, axis=1)
                )
            return
        self.graph_ = check_graph(self.graph, n)
        if self.weights == "connectivity":
            return
        k = min(self.n_neighbors + 1, n)
        dist, ind = self.neighbors_.kneighbors(X, n_neighbors=k)
        others = ind != np.arange(n)[:, None]
        if self.weights == "heat":
            self.t_ = float(self.t) if self.t is not None else _positive_width(dist[others] ** 2)
        else:  # the distance to the n_neighbors-th nearest other point
            self.local_scale_ = _positive_scales(np.max(np.where(others, dist, 0.0), axis=1))

    def _neighbour_weights(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w, ind)``: the ``n_neighbors`` nearest training points of each row of ``X`` and
        their weights in the out-of-sample rule, up to a positive factor per row."""
        dist, ind = self.neighbors_.kneighbors(X)
        d2 = dist**2
        if self.weights == "connectivity":
            return np.ones_like(d2), ind
        if self.weights == "heat":
            exponent = d2 / self.t_
        else:
            floor = self.local_scale_.min()
            exponent = 4.0 * d2 / (np.maximum(dist[:, -1:], floor) * self.local_scale_[ind])
        # shift by the smallest exponent: the same ratios, without underflow far from the data
        return np.exp(-(exponent - exponent.min(axis=1, keepdims=True))), ind


_WEIGHTS_DOC = """weights : {"self-tuning", "heat", "connectivity"}, default="self-tuning"
        Edge weights of the kNN graph and of the out-of-sample rule.  ``"self-tuning"``:
        ``exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j))``, ``sigma_i`` the distance from
        ``x_i`` to its ``n_neighbors``-th nearest other training point
        (:func:`~structreg.structure.graphs.self_tuning_graph`; a new point's ``sigma`` is
        its distance to its ``n_neighbors``-th nearest training point).  ``"heat"``:
        ``exp(-||x_i - x_j||^2 / t)`` with one width ``t`` (Zhu et al.'s Gaussian fields).
        ``"connectivity"``: 1 on every edge."""


class GFHF(_GraphInference, SemiSupervisedLabelsMixin, ClassifierMixin, BaseEstimator):
    """Gaussian fields and harmonic functions: semi-supervised graph label inference.

    On a graph ``W`` over all training points the class scores are the harmonic function
    with the labeled points clamped to their one-of-c labels ``Y_l``:

        F_u = (D_uu - W_uu)^{-1} W_ul Y_l,    D = diag(W 1),

    i.e. every unlabeled point's score vector is the ``W``-weighted mean of its neighbours'
    (:func:`harmonic_function`; "Laplace learning").  Unlabeled samples are marked ``-1``
    (``None`` for string labels), by a missing label (NaN, None, ``pd.NA``) or by the
    ``unlabeled`` mask of ``fit``.  Unlabeled points in a connected component
    without any labeled point have no harmonic value: they get the class prior (labeled
    class frequencies) and a :class:`DisconnectedGraphWarning`.

    New points are classified by the same rule on their neighbourhood:
    ``f(x) = sum_j w(x, x_j) f_j / sum_j w(x, x_j)`` over the ``n_neighbors`` nearest training
    points, ``w`` the graph's edge weight (``weights``), ``f_j`` the training label
    distributions.

    Parameters
    ----------
    n_neighbors : int, default=7
        k of the kNN graph (7 in the S-RLSC experiments), and the neighbourhood of a new
        point in the out-of-sample rule.
    t : float or None, default=None
        Width of heat weights (``weights="heat"`` only) ``exp(-||x_i - x_j||^2 / t)``, in the
        graph and the out-of-sample rule.  None: the mean squared edge length of the kNN
        graph (for a precomputed graph: the mean squared distance of the training points to
        their ``n_neighbors`` nearest training points).
    graph : "knn", sparse matrix or array-like, default="knn"
        ``"knn"``: the symmetric kNN graph with ``weights``.  An (n_samples, n_samples)
        symmetric non-negative affinity matrix over the training points is used as given
        (its diagonal is ignored), e.g. the dense Gaussian affinities of Zhu et al.;
        ``weights`` then only sets the out-of-sample rule.
    class_mass_normalization : bool, default=False
        Class mass normalisation (CMN, Zhu et al. 2003, Sec. 4): the class columns of the
        harmonic scores of the unlabeled points are rescaled,
        ``F_ik <- q_k F_ik / sum_{j unlabeled} F_jk``, so that the class masses match the
        class priors ``q`` (:func:`class_mass_normalize`) before the rows are normalised
        (without it, the argmax of the harmonic scores can give badly unbalanced classes
        when the classes are not well separated, as the paper notes).  ``transduction_``,
        ``label_distributions_`` and hence the out-of-sample rule use the rescaled scores.
    class_prior : array-like of shape (n_classes,) or None, default=None
        The priors ``q`` of CMN, in the order of ``classes_`` (normalised to sum to 1); None:
        the class frequencies of the labeled points.  Only with
        ``class_mass_normalization=True``.
    WEIGHTS
        The default changed from one global heat width (issue 21): self-tuning weights
        score 91 % against 83 % on USPS at 10 labels per class, 93 against 89 % on COIL-20
        at 3, and 0.1-4.6 points more on 9 of 10 UCI sets at 5 (yeast: -0.1); but 95.7
        against 99.8 % on two moons of 1e5 points (``benchmarks/ssl_peers.py``).
    tol : float, default=1e-6
        Relative residual of the conjugate-gradient solve of large systems
        (:func:`harmonic_function`).
    max_iter : int or None, default=None
        Iteration cap of that solve (None: ten times the unknowns).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    X_ : ndarray of shape (n_samples, n_features)
        The training points (neighbours of the out-of-sample rule).
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity matrix ``W`` used.
    t_ : float
        ``weights="heat"``: the width of the out-of-sample rule (and of the kNN graph).
    local_scale_ : ndarray of shape (n_samples,)
        ``weights="self-tuning"``: the training points' ``sigma_i``.
    solver_ : {"direct", "cg"}
        How the harmonic system was solved (:func:`harmonic_function`, ``method="auto"``).
    n_iter_ : int
        Conjugate-gradient iterations run, summed over the class columns (including those
        before a switch to the direct solve; 1 for a direct solve alone).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Harmonic class scores of the training points, rows normalised to sum to 1; labeled
        rows are their one-of-c labels.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (argmax of ``label_distributions_``).
    unreachable_ : ndarray of bool, shape (n_samples,)
        Unlabeled training points in components without labeled points (given the prior:
        ``class_prior_`` with CMN).
    class_prior_ : ndarray of shape (n_classes,)
        ``class_mass_normalization=True``: the class priors CMN matched.
    neighbors_ : NearestNeighbors
        Index over ``X_`` for the out-of-sample rule.

    References
    ----------
    X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using Gaussian fields and
    harmonic functions", ICML 2003, pp. 912-919.
    L. Zelnik-Manor and P. Perona, "Self-tuning spectral clustering", NIPS 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg.models.harmonic import GFHF
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full_like(y, -1)
    >>> y_semi[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    >>> clf = GFHF().fit(X, y_semi)
    >>> bool((clf.transduction_ == y).mean() > 0.95)
    True
    >>> clf.predict_proba(X[:2]).sum(axis=1)
    array([1., 1.])
    """

    _semi_supervised = True

    def __init__(
        self,
        n_neighbors=7,
        t=None,
        graph="knn",
        class_mass_normalization=False,
        class_prior=None,
        weights="self-tuning",
        tol=HARMONIC_TOL,
        max_iter=None,
    ):
        self.n_neighbors = n_neighbors
        self.t = t
        self.graph = graph
        self.class_mass_normalization = class_mass_normalization
        self.class_prior = class_prior
        self.weights = weights
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X, y, unlabeled=None) -> GFHF:
        """Infer the labels of the unlabeled training points.

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
        self._validate_params()
        y = missing_as_unlabeled(y, unlabeled)
        X, y = validate_data(self, X, y, dtype=float, y_numeric=False)
        check_training_X(self, X)
        y = column_or_1d(y, warn=True)
        self.classes_, y_codes, labeled = self._encode_labels(y, unlabeled)
        n_classes = len(self.classes_)
        self._fit_graph(X)

        F, self.unreachable_, info = _harmonic(
            self.graph_,
            labeled,
            np.eye(n_classes)[y_codes[labeled]],
            "auto",
            self.tol,
            self.max_iter,
        )
        self.solver_, self.n_iter_ = info["method"], max(1, info["n_iter"])
        prior = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
        self.__dict__.pop("class_prior_", None)  # a refit without CMN
        if self.class_mass_normalization:
            prior = self.class_prior_ = self._checked_prior(prior)
        elif self.class_prior is not None:
            raise ValueError(
                "class_prior is used by class mass normalisation only; set "
                "class_mass_normalization=True"
            )
        if self.unreachable_.any():
            _warn_unreachable(self.unreachable_)
            F[self.unreachable_] = prior
        if self.class_mass_normalization:
            F = class_mass_normalize(F, ~labeled & ~self.unreachable_, prior)
        sums = F.sum(axis=1, keepdims=True)
        degenerate = ~(sums[:, 0] > 0)  # cannot happen in exact arithmetic; be safe
        F[degenerate], sums[degenerate] = prior, 1.0
        self.label_distributions_ = F / sums
        self.transduction_ = self.classes_[np.argmax(self.label_distributions_, axis=1)]
        return self

    def _checked_prior(self, labeled_prior: np.ndarray) -> np.ndarray:
        """The priors of CMN: ``class_prior`` checked and normalised, or the labeled
        class frequencies."""
        if self.class_prior is None:
            return labeled_prior
        prior = np.asarray(self.class_prior, dtype=float).ravel()
        if prior.shape != labeled_prior.shape:
            raise ValueError(
                f"class_prior has {prior.size} entries; expected one per class "
                f"({labeled_prior.size}: {self.classes_.tolist()})"
            )
        if not (np.all(np.isfinite(prior)) and np.all(prior >= 0) and prior.sum() > 0):
            raise ValueError(
                f"class_prior must be finite, non-negative and not all zero, got {prior}"
            )
        return prior / prior.sum()

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities by the harmonic rule over each point's nearest training points.

        ``f(x) = sum_j w_j f_j / sum_j w_j`` over the ``n_neighbors`` nearest training points,
        ``w_j`` the edge weight of ``weights`` (heat: ``exp(-||x - x_j||^2 / t_)``;
        self-tuning: ``exp(-4 ||x - x_j||^2 / (sigma(x) sigma_j))``), ``f_j =
        label_distributions_[j]``.  (For training points this averages over a neighbourhood
        that contains the point itself; see ``transduction_`` for the fitted labels.)

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        w, ind = self._neighbour_weights(X)
        return np.einsum("ik,ikc->ic", w, self.label_distributions_[ind]) / w.sum(
            axis=1, keepdims=True
        )

    def predict(self, X) -> np.ndarray:
        """Most probable class by :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


GFHF.__doc__ = GFHF.__doc__.replace("    WEIGHTS\n", "    " + _WEIGHTS_DOC + "\n")


def _warn_unreachable(unreachable: np.ndarray) -> None:
    warnings.warn(
        f"{int(unreachable.sum())} unlabeled training point(s) lie in graph "
        "components without any labeled point, where the solution is "
        "undefined; they get the class prior (labeled class frequencies). Connect "
        "the graph (larger n_neighbors) or label a point in every component.",
        DisconnectedGraphWarning,
        stacklevel=3,
    )


def _positive_width(squared_lengths: np.ndarray) -> float:
    """Mean squared length, or 1 when there are no edges or all have length 0 (as knn_graph)."""
    t = float(np.mean(squared_lengths)) if squared_lengths.size else 0.0
    return t if t > 0 else 1.0


def _positive_scales(sigma: np.ndarray) -> np.ndarray:
    """Zero local scales (duplicates) replaced by the smallest positive one, or 1 (as
    :func:`~structreg.structure.graphs.self_tuning_graph`)."""
    positive = sigma[sigma > 0]
    return np.where(sigma > 0, sigma, positive.min() if positive.size else 1.0)


WEIGHT_CHOICES = ("self-tuning", "heat", "connectivity")

GFHF._parameter_constraints = {
    **constraints_for(GFHF),
    "weights": [StrOptions(set(WEIGHT_CHOICES))],
}
