"""The l1-graph: sparse reconstruction coefficients of every point by the others (S-RLSC).

Every sample is scaled to unit l2 norm and then written as a sparse combination of the other
samples plus a sparse error (Fan, Gu, Qiao & Zhang 2011, eqs. 7-8; Wright et al.'s l1-graph)::

    min_{a, e}  ||a||_1 + ||e||_1   s.t.   x_i = sum_{j != i} a_j x_j + e

Row i of the (n, n) matrix ``A`` holds ``a`` (the error ``e`` is dropped); the S-RLSC penalty
is ``f^T (I - A)^T (I - A) f`` (:func:`reconstruction_penalty`, eq. 13).

Two modes are provided:

``"exact"``
    The problem above is a linear program.  It is solved through its dual::

        max_lam  x_i^T lam   s.t.  |x_j^T lam| <= 1  (j != i),   |lam_k| <= 1  (k = 1..d)

    whose only variables are the d coordinates of ``lam`` and whose rows are the other points.
    At the optimum the multipliers of the rows are the coefficients ``a`` and those of the box
    bounds the error ``e``.  Because only the few rows with ``a_j != 0`` matter, the dual is
    solved by *row generation*: start from the ``n_candidates`` points most correlated with
    ``x_i``, solve with HiGHS' dual simplex, add the (up to 50) most violated rows
    ``|x_j^T lam| > 1 + tol`` and re-solve from the previous basis (warm start) until no row
    is violated.  The result is the optimum of the full problem, certified by LP duality:
    ``lam`` satisfies every row and bound to ``1 + tol``, so ``x_i^T lam / (1 + tol)`` is a
    lower bound on the optimum, and the returned code's objective lies within a relative
    ``~tol`` of it (HiGHS' feasibility tolerances are set to ``tol`` as well).

    Row generation is more than ten times faster than one full LP per point
    (:func:`scipy.optimize.linprog`, primal or dual form, every other point a row) and gives
    the same objectives up to rounding; a LARS homotopy to zero residual
    (:func:`sklearn.linear_model.lars_path_gram` on the shared Gram matrix of ``[X, I]``) was
    slower still and stopped short of zero residual, i.e. not exact.  A warm start that
    stalls on a very degenerate subproblem is re-solved from scratch (see
    ``_iteration_caps``).  The measurements (USPS, ``benchmarks/l1_graph_modes.py``) are on
    the benchmarks page of the documentation (``docs/benchmarks.md``, "l1-graph modes").

    HiGHS is reached through the bindings that SciPy ships (``scipy.optimize._highspy``,
    SciPy >= 1.15) or the ``highspy`` package; without either, every round is re-solved from
    scratch with :func:`scipy.optimize.linprog` (same answer, slower).

``"lasso"``
    A fast approximation: the dictionary is restricted to the ``n_candidates`` nearest other
    points (Euclidean distance between the unit-norm samples, i.e. largest cosine) and the
    squared-error lasso ``min_a 1/2 ||x_i - D a||^2 + alpha ||a||_1`` is solved on that small
    dictionary; coefficients may have either sign.  Batches of points run ADMM together on
    their k x k Gram matrices, and each point's iterate is then *polished*: the optimality
    conditions are solved exactly for its sign pattern and checked (``|D_j^T r| <= alpha``
    for all candidates, ``= alpha sign(a_j)`` on the support), so the returned code is the
    exact lasso minimiser up to rounding.  The rare points whose check never passes (e.g.
    duplicate candidates, where the minimiser is not unique) are solved by scikit-learn's
    coordinate descent (:class:`sklearn.linear_model.Lasso`, ``tol=1e-12``).  (LARS via
    :func:`sklearn.linear_model.lars_path_gram` was slower and stopped early on
    near-duplicate candidates, short of the optimality conditions.)

Both modes run over blocks of points in parallel with joblib (``n_jobs``); every point is
solved independently and deterministically, so the result does not depend on ``n_jobs``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso
from sklearn.utils import check_array

from .._compat import highs_class
from .._resources import blas_threads, lasso_batch_floats
from .graphs import knn_indices
from .penalties import Penalty

L1_MODES = ("exact", "lasso")

# Row generation: rows added per round (the most violated ones).
_ROWS_PER_ROUND = 50
# blocks of points per joblib worker
_BLOCKS_PER_JOB = 4
# lasso mode: points per batch at most (the batch's floats are bounded by the memory budget,
# structreg._resources.lasso_batch_floats), ADMM iterations between polishing attempts, and
# attempts
_LASSO_BATCH_POINTS = 256
_ADMM_ROUNDS = 50
_ADMM_MAX_ROUNDS = 40


def _iteration_caps(n_rows: int, n_cols: int) -> tuple[int, int]:
    """Simplex iteration limits of a warm-started and of a cold re-solve.

    A normal warm re-solve takes a few hundred iterations; on very degenerate subproblems
    (e.g. near-identical USPS "1"s) HiGHS' warm-started dual simplex can stall for hundreds
    of thousands of degenerate pivots, so it is stopped early and the round is re-solved
    from scratch, and by the interior-point method with crossover if that stalls too.
    """
    size = n_rows + n_cols
    return max(1000, 2 * size), 10000 + 50 * size


def _highs_class():
    """The HiGHS model class (``_Highs``) from SciPy's bindings or ``highspy``; None if absent
    (:func:`structreg._compat.highs_class`)."""
    return highs_class()


def _check_data(X) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate ``X``; return its nonzero rows scaled to unit l2 norm, their indices and n.

    An all-zero sample is coded by ``a = 0, e = 0`` (optimal: objective 0) and, as an atom,
    can never help to code another point, so it simply gets an empty row and column of A.
    """
    X = check_array(X, dtype=np.float64, ensure_min_samples=2, input_name="X")
    norms = np.linalg.norm(X, axis=1)
    nonzero = np.flatnonzero(norms > 0)
    return X[nonzero] / norms[nonzero, None], nonzero, X.shape[0]


def _check_params(mode, n_candidates, alpha, tol) -> None:
    if not isinstance(mode, str) or mode not in L1_MODES:
        raise ValueError(f"mode must be one of {L1_MODES}, got {mode!r}")
    if isinstance(n_candidates, bool) or not isinstance(n_candidates, Integral) or n_candidates < 1:
        raise ValueError(f"n_candidates must be a positive integer, got {n_candidates!r}")
    for name, value in (("alpha", alpha), ("tol", tol)):
        if isinstance(value, bool) or not isinstance(value, Real) or not (0 < value < np.inf):
            raise ValueError(f"{name} must be a positive finite number, got {value!r}")


# --------------------------------------------------------------------------------------------
# exact mode: the dual LP by row generation
# --------------------------------------------------------------------------------------------


class _HighsDual:
    """``max x^T lam`` s.t. ``-1 <= R lam <= 1`` (rows R added in rounds), ``-1 <= lam <= 1``,
    kept in one HiGHS model so that every re-solve starts from the last basis."""

    def __init__(self, highs_class, x: np.ndarray, tol: float):
        d = x.shape[0]
        self.h = h = highs_class()
        for name, value in (
            ("output_flag", False),
            ("presolve", "off"),
            ("threads", 1),
            ("simplex_strategy", 1),  # dual simplex: rows added to an optimal basis
            ("primal_feasibility_tolerance", max(tol, 1e-10)),
            ("dual_feasibility_tolerance", max(tol, 1e-10)),
        ):
            h.setOptionValue(name, value)
        none = np.zeros(0, dtype=np.int32)
        h.addCols(d, -x, -np.ones(d), np.ones(d), 0, none, none, np.zeros(0))  # HiGHS minimises

    def add(self, R: np.ndarray) -> None:
        m = R.shape[0]
        nz = R != 0
        starts = np.concatenate([[0], np.cumsum(nz.sum(axis=1))[:-1]]).astype(np.int32)
        index = np.nonzero(nz)[1].astype(np.int32)
        self.h.addRows(m, -np.ones(m), np.ones(m), int(index.size), starts, index, R[nz])

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(lam, a)``: the dual point and the row multipliers (the coefficients)."""
        h = self.h
        warm, cold = _iteration_caps(h.getNumRow(), h.getNumCol())
        h.setOptionValue("simplex_iteration_limit", warm)
        h.run()
        if not self._optimal():  # stalled: start again from the slack basis
            h.clearSolver()
            h.setOptionValue("simplex_iteration_limit", cold)
            h.run()
        if not self._optimal():  # stalled again (not seen in practice): interior point
            h.clearSolver()
            h.setOptionValue("solver", "ipm")  # crossover (on by default) gives a vertex
            h.run()
            h.setOptionValue("solver", "simplex")
        if not self._optimal():  # pragma: no cover
            raise RuntimeError(f"HiGHS failed on an l1-graph subproblem: {h.getModelStatus()}")
        sol = h.getSolution()
        return np.asarray(sol.col_value, dtype=float), -np.asarray(sol.row_dual, dtype=float)

    def _optimal(self) -> bool:
        status = self.h.getModelStatus()
        return status == type(status).kOptimal


class _LinprogDual:
    """The same restricted dual, re-solved from scratch with :func:`scipy.optimize.linprog`."""

    def __init__(self, x: np.ndarray, tol: float):
        self.x, self.tol = x, tol
        self.R = np.zeros((0, x.shape[0]))

    def add(self, R: np.ndarray) -> None:
        self.R = np.vstack([self.R, R])

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        m = self.R.shape[0]
        kw = {"A_ub": np.vstack([self.R, -self.R]), "b_ub": np.ones(2 * m)} if m else {}
        t = max(self.tol, 1e-10)
        opts = {"primal_feasibility_tolerance": t, "dual_feasibility_tolerance": t}
        res = linprog(-self.x, bounds=(-1, 1), method="highs-ds", options=opts, **kw)
        if res.status != 0:  # pragma: no cover
            raise RuntimeError(f"linprog failed on an l1-graph subproblem: {res.message}")
        if not m:
            return res.x, np.zeros(0)
        mu = res.ineqlin.marginals  # <= 0: sensitivity of the minimum to the right-hand side
        return res.x, mu[m:] - mu[:m]


def _exact_point(X: np.ndarray, i: int, seeds: np.ndarray, tol: float, highs_class):
    """Exact l1 code of ``X[i]`` by the other rows; returns (column indices, coefficients)."""
    x = X[i]
    lp = _LinprogDual(x, tol) if highs_class is None else _HighsDual(highs_class, x, tol)
    rows = np.asarray(seeds, dtype=np.intp)
    lp.add(X[rows])
    # rows are only ever added, so this ends after at most n / _ROWS_PER_ROUND + 1 rounds
    while True:
        lam, a = lp.solve()
        v = np.abs(X @ lam)
        v[i] = 0.0
        v[rows] = 0.0
        violated = np.flatnonzero(v > 1.0 + tol)
        if violated.size == 0:
            break
        if violated.size > _ROWS_PER_ROUND:
            top = np.argpartition(-v[violated], _ROWS_PER_ROUND)[:_ROWS_PER_ROUND]
            violated = np.sort(violated[top])
        lp.add(X[violated])
        rows = np.concatenate([rows, violated])
    keep = a != 0
    return rows[keep], a[keep]


def _exact_block(X: np.ndarray, block: np.ndarray, n_seeds: int, tol: float, use_highs: bool):
    highs_class = _highs_class() if use_highs else None
    rows, cols, vals = [], [], []
    with blas_threads(1):
        for i in block:
            corr = np.abs(X @ X[i])
            corr[i] = -np.inf
            seeds = np.sort(np.argpartition(-corr, n_seeds - 1)[:n_seeds])
            j, a = _exact_point(X, i, seeds, tol, highs_class)
            rows.append(np.full(j.size, i))
            cols.append(j)
            vals.append(a)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


# --------------------------------------------------------------------------------------------
# lasso mode
# --------------------------------------------------------------------------------------------


def _candidates(X: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of the k nearest other points of every point (self excluded by index).

    The kNN graphs' search (:func:`~structreg.structure.graphs.knn_indices`, ``"auto"``): exact
    scikit-learn search except for large high-dimensional inputs, which use the approximate
    search when faiss or pynndescent is installed (the candidates are then approximate
    nearest points)."""
    return knn_indices(X, k, algorithm="auto")


def _polish(G: np.ndarray, c: np.ndarray, z: np.ndarray, alpha: float):
    """Exact lasso minimiser with the sign pattern of ``z``, if that pattern is optimal.

    Solves ``G_SS a_S = c_S - alpha sign(z_S)`` on the support S of ``z`` and returns ``a``
    when it satisfies the optimality conditions of ``1/2 a^T G a - c^T a + alpha ||a||_1``
    (signs kept on S, ``|c - G a| <= alpha`` everywhere), else None.
    """
    S = np.flatnonzero(z)
    a = np.zeros_like(c)
    if S.size:
        s = np.sign(z[S])
        try:
            a_S = np.linalg.solve(G[np.ix_(S, S)], c[S] - alpha * s)
        except np.linalg.LinAlgError:  # duplicate candidates: not unique
            return None
        if np.any(np.sign(a_S) != s):
            return None
        a[S] = a_S
    ok = np.all(np.abs(c - G @ a) <= alpha * (1.0 + 1e-9) + 1e-12)
    return a if ok else None


def _lasso_codes(D: np.ndarray, x: np.ndarray, alpha: float) -> np.ndarray:
    """Lasso codes ``min 1/2 ||x_p - D_p^T a||^2 + alpha ||a||_1`` of a batch of points.

    ``D`` (b, k, d) holds every point's candidate atoms, ``x`` (b, d) the points.  All points
    run ADMM together (batched k x k algebra); every _ADMM_ROUNDS iterations each unfinished
    point is polished to the exact minimiser of its sign pattern (:func:`_polish`).  Points
    never certified (e.g. duplicate candidates, where the minimiser is not unique) are solved
    by scikit-learn's coordinate descent to a tight tolerance.
    """
    b, k, d = D.shape
    G = np.matmul(D, D.transpose(0, 2, 1))
    c = np.matmul(D, x[:, :, None])[:, :, 0]
    rho = min(max(10.0 * alpha, 1e-3), 1.0)
    inv = np.linalg.inv(G + rho * np.eye(k))
    codes = np.zeros((b, k))
    todo = np.arange(b)
    z, u = np.zeros((b, k)), np.zeros((b, k))
    for _ in range(_ADMM_MAX_ROUNDS):
        inv_t, c_t = inv[todo], c[todo]
        for _ in range(_ADMM_ROUNDS):
            a = np.matmul(inv_t, (c_t + rho * (z - u))[:, :, None])[:, :, 0]
            v = a + u
            z = np.sign(v) * np.maximum(np.abs(v) - alpha / rho, 0.0)
            u = v - z
        done = np.zeros(todo.size, dtype=bool)
        for r, p in enumerate(todo):
            a = _polish(G[p], c[p], z[r], alpha)
            if a is not None:
                codes[p], done[r] = a, True
        todo, z, u = todo[~done], z[~done], u[~done]
        if todo.size == 0:
            break
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for p in todo:  # sklearn scales the squared error by 1/n_samples: alpha_sk = alpha / d
            lasso = Lasso(alpha=alpha / d, fit_intercept=False, precompute=G[p], tol=1e-12)
            codes[p] = lasso.set_params(max_iter=100_000).fit(D[p].T, x[p]).coef_
    return codes


def _lasso_batch(k: int, d: int) -> int:
    """Points per lasso batch: their (k, k + d) arrays within the memory budget, at most
    ``_LASSO_BATCH_POINTS`` (read in the calling process: joblib workers do not see
    :func:`structreg.set_config`)."""
    return max(1, min(_LASSO_BATCH_POINTS, lasso_batch_floats() // (k * (k + d))))


def _lasso_block(X: np.ndarray, block: np.ndarray, cand: np.ndarray, alpha: float, batch: int):
    rows, cols, vals = [], [], []
    with blas_threads(1):
        for start in range(0, block.size, batch):
            points, nbrs = block[start : start + batch], cand[start : start + batch]
            codes = _lasso_codes(X[nbrs], X[points], alpha)
            r, j = np.nonzero(codes)
            rows.append(points[r])
            cols.append(nbrs[r, j])
            vals.append(codes[r, j])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


def l1_graph(
    X,
    *,
    mode: str = "exact",
    n_candidates: int = 30,
    alpha: float = 1e-3,
    tol: float = 1e-7,
    n_jobs: int | None = None,
) -> sp.csr_matrix:
    """Sparse reconstruction coefficients (the l1-graph) of every sample by the others.

    With the rows of ``X`` scaled to unit norm, row i of the result is the ``a`` of
    ``min ||a||_1 + ||e||_1  s.t.  x_i = sum_{j != i} a_j x_j + e`` (``mode="exact"``), or of
    ``min 1/2 ||x_i - sum_{j in N_i} a_j x_j||^2 + alpha ||a||_1`` over the ``n_candidates``
    nearest points ``N_i`` (``mode="lasso"``).  See the module docstring for the solvers.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples as rows (dense; at least 2; finite).  Each row is scaled to unit l2 norm
        first; an all-zero row gets an empty row and column of A.
    mode : {"exact", "lasso"}, default="exact"
        ``"exact"``: the basis-pursuit problem over all other points, solved exactly (dual LP
        by row generation, HiGHS).  ``"lasso"``: the fast restricted lasso approximation.
    n_candidates : int, default=30
        ``"lasso"``: size of the candidate dictionary (nearest other points).  ``"exact"``:
        size of the initial working set of the row generation (speed only; the result is the
        optimum over all points).  Values ``>= n_samples`` are clipped to ``n_samples - 1``
        (all other points).
    alpha : float, default=1e-3
        Weight of the l1 term of ``"lasso"`` (unused by ``"exact"``).
    tol : float, default=1e-7
        ``"exact"``: feasibility tolerance of the LP; the returned ``a`` has objective
        ``||a||_1 + ||x_i - X_{-i}^T a||_1`` within a relative ``~tol`` of the optimum.
        (Unused by ``"lasso"``, whose codes are polished to the exact lasso minimiser.)
    n_jobs : int or None, default=None
        joblib workers over blocks of points (``None``: 1 unless in a joblib context;
        ``-1``: all cores).

    Returns
    -------
    A : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Reconstruction coefficients; zero diagonal; row i is the code of sample i.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.structure.l1graph import l1_graph
    >>> X = np.random.default_rng(0).normal(size=(20, 5))
    >>> A = l1_graph(X)
    >>> A.shape, float(abs(A.diagonal()).max())
    ((20, 20), 0.0)
    """
    _check_params(mode, n_candidates, alpha, tol)
    X, nonzero, n_all = _check_data(X)
    n = X.shape[0]
    if n < 2:  # at most one nonzero sample: nothing can be coded by another point
        return sp.csr_matrix((n_all, n_all))
    k = min(int(n_candidates), n - 1)
    n_blocks = min(n, _BLOCKS_PER_JOB * effective_n_jobs(n_jobs))
    # strided blocks balance the work when the data are sorted by class
    blocks = [np.arange(b, n, n_blocks) for b in range(n_blocks)]
    if mode == "exact":
        tasks = (
            delayed(_exact_block)(X, block, k, float(tol), _highs_class() is not None)
            for block in blocks
        )
    else:
        cand = _candidates(X, k)
        batch = _lasso_batch(k, X.shape[1])
        tasks = (
            delayed(_lasso_block)(X, block, cand[block], float(alpha), batch) for block in blocks
        )
    parts = Parallel(n_jobs=n_jobs)(tasks)
    rows, cols, vals = (np.concatenate(p) for p in zip(*parts, strict=True))
    A = sp.csr_matrix((vals, (nonzero[rows], nonzero[cols])), shape=(n_all, n_all))
    A.sort_indices()
    return A


def reconstruction_penalty(A, scale: str | None = None) -> sp.csr_matrix:
    """The S-RLSC penalty matrix ``M = (I - A)^T (I - A)`` of reconstruction coefficients A.

    ``f^T M f = ||f - A f||^2 = sum_i (f_i - sum_j A_ij f_j)^2``: outputs should be
    reconstructed from the other points' outputs with the data's own sparse codes.

    Parameters
    ----------
    A : sparse matrix or array-like of shape (n, n)
        Reconstruction coefficients, e.g. from :func:`l1_graph` (row i codes point i).
    scale : {None, "trace"}, default=None
        ``"trace"``: ``M / trace(M)`` (``trace(M) = n + ||A||_F^2 - 2 trace(A)``).

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric positive semi-definite.
    """
    if scale not in (None, "trace"):
        raise ValueError(f"scale must be None or 'trace', got {scale!r}")
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"reconstruction coefficients must be a square matrix, got {A.shape}")
    if not np.all(np.isfinite(A.data)):
        raise ValueError("reconstruction coefficients contain NaN or infinite entries")
    R = sp.identity(A.shape[0], format="csr") - A
    M = R.T @ R
    M = sp.csr_matrix(0.5 * (M + M.T))  # exactly symmetric despite rounding
    M.eliminate_zeros()
    M.sort_indices()
    return M / float(M.diagonal().sum()) if scale == "trace" and M.nnz else M


class SparseReconstructionPenalty(Penalty):
    """S-RLSC's sparse-reconstruction penalty ``f^T (I - A)^T (I - A) f`` (Fan et al. 2011).

    ``A`` is the l1-graph (:func:`l1_graph`) of all training points, labeled and unlabeled,
    so the penalty asks every output to be reconstructed by the same sparse combination of
    the other outputs that reconstructs the input.  PSD.

    Parameters
    ----------
    mode : {"exact", "lasso"}, default="exact"
        Solver of the l1-graph, see :func:`l1_graph`.
    n_candidates : int, default=30
        Candidate dictionary size of ``"lasso"`` (initial working set of ``"exact"``).
    alpha : float, default=1e-3
        Lasso weight of ``"lasso"``.
    n_jobs : int or None, default=None
        joblib workers for the l1-graph.
    scale : {None, "trace"}, default=None
        ``"trace"``: divide the penalty by its trace ``n + ||A||_F^2``, so that it is the
        weighted mean (not the sum) of the outputs' squared reconstruction errors.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.structure.l1graph import SparseReconstructionPenalty
    >>> X = np.random.default_rng(0).normal(size=(15, 4))
    >>> M = SparseReconstructionPenalty().build(X, np.zeros(15, int), np.ones(15, bool))
    >>> bool(abs(M - M.T).max() == 0)
    True
    """

    psd = True

    def __init__(self, mode="exact", n_candidates=30, alpha=1e-3, n_jobs=None, scale=None):
        self.mode = mode
        self.n_candidates = n_candidates
        self.alpha = alpha
        self.n_jobs = n_jobs
        self.scale = scale

    def reads_labels(self) -> bool:
        return False

    def build(self, X, y, labeled) -> sp.csr_matrix:
        A = l1_graph(
            X,
            mode=self.mode,
            n_candidates=self.n_candidates,
            alpha=self.alpha,
            n_jobs=self.n_jobs,
        )
        return reconstruction_penalty(A, scale=self.scale)
