"""Sparse regularized least-squares classification, S-RLSC (Fan, Gu, Qiao & Zhang 2011)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._params import NONNEGATIVE_OR_AUTO
from ..structure import PrecomputedPenalty
from ..structure.l1graph import SparseReconstructionPenalty, reconstruction_penalty
from ._base import StructuralClassifier

AUTO_RECONSTRUCTION_WEIGHT = 1.0
"""``gamma_I="auto"``: the weight of the trace-normalised reconstruction term
``f^T M f / trace(M)`` (the mean squared reconstruction error of the outputs).  Lower than
LapRLSC's 10 for its graph term: l1 codes need not sum to one, so ``I - A`` does not
annihilate constant outputs and a strong term pulls the outputs towards zero.  1 is as
accurate on the unlabeled points as 3 or 10 and keeps scikit-learn's
``check_class_weight_classifiers`` passing, which stronger weights endanger (the accuracies,
by ``benchmarks/ssl_defaults.py``, are in the scale guide, :doc:`/user_guide/scale`,
"Measurements behind the solvers' settings")."""


class SparseRLSC(StructuralClassifier):
    """Semi-supervised least squares with an l1-graph (sparse reconstruction) penalty.

    ``min (1/l) sum_labeled ||y_i - F(x_i)||^2 + gamma_A ||F||_K^2
    + (gamma_I / n^2) trace(F^T (I - A)^T (I - A) F)`` (the paper's eq. 12) where row i of
    ``A`` is the sparse representation of ``x_i`` by the other training points (labeled and
    unlabeled; :func:`structreg.structure.l1graph.l1_graph`).  The weights follow
    :class:`~structreg.LapRLSC`'s convention, so the loss is an average over the l labeled
    points and the reconstruction term is divided by ``n^2`` for n training points; the
    paper's experiments quote ``C_A = gamma_A l`` and ``C_I = gamma_I l / n^2`` (its closed
    form, eq. 17, ``B = Y (K J + C_A I + C_I K (I - A)^T (I - A))^{-1}``), which change
    meaning with l and n.  Solved through the shared square-loss solver on the explicit kernel
    map (Cholesky of a PSD system).  One-of-c targets, argmax prediction; unlabeled samples
    are marked ``-1`` (``None`` for string labels) or by ``fit(..., unlabeled=mask)``; the
    model is inductive.

    The paper normalises every sample to unit l2 norm before building the graph *and* the
    kernel (with ``exp(-||x - z||^2 / 0.5^2)``, i.e. ``gamma=4``); the l1-graph always
    normalises, the kernel sees ``X`` as given -- put
    :class:`sklearn.preprocessing.Normalizer` in front (see the example) to follow the paper.

    Parameters
    ----------
    gamma_A : float, default=1e-2
        RKHS-norm weight (the paper's gamma_A; its experiments' ``C_A`` is ``gamma_A l``).
    gamma_I : float or "auto", default="auto"
        Sparse-reconstruction weight; the term is ``gamma_I / n^2`` times the summed squared
        reconstruction errors of the outputs (the paper's gamma_I; ``C_I = gamma_I l / n^2``).
        ``"auto"``: ``f^T M f / trace(M)``, the mean squared reconstruction error of the
        outputs (``AUTO_RECONSTRUCTION_WEIGHT``; LapRLSC's
        ``gamma_I="auto"`` weighs its volume-normalised graph term the same way).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "scale" or None, default="scale"
        ``exp(-gamma ||x - z||^2)`` as in scikit-learn; the paper's ``exp(-||x - z||^2 /
        s^2)`` with ``s = 0.5`` on unit-norm samples is ``gamma=4.0``.
    degree : int, default=3
    coef0 : float, default=1.0
    l1_mode : {"exact", "lasso"}, default="exact"
        ``"exact"``: the l1-graph's basis-pursuit problems solved exactly; ``"lasso"``: the
        fast approximation restricted to the ``n_candidates`` nearest points.
    n_candidates : int, default=30
        Candidate dictionary size of ``l1_mode="lasso"``.
    alpha : float, default=1e-3
        Lasso weight of ``l1_mode="lasso"``.
    n_jobs : int or None, default=None
        joblib workers for the l1-graph.
    graph : "l1" or sparse matrix of shape (n_samples, n_samples), default="l1"
        ``"l1"`` builds the l1-graph of the training points; a matrix is used as the
        reconstruction coefficients ``A`` as given (e.g. one l1-graph reused across fits
        with different labels; rows = points, zero diagonal).
    fit_intercept : bool, default=False
        Add an unpenalised bias (the paper has none).
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: the exact kernel factor ``K = V V^T`` and a direct solve (O(n^2) memory).
        ``"nystroem"``: ``n_components`` centres, an m x m system, O(n m^2 + nnz(M) m) time and
        O(n m) memory.  ``"cg"``: iterative and exact (K-preconditioned conjugate gradients on
        the kernel expansion; CG on the features for the linear kernel).  ``"auto"``: dense up
        to 5000 training samples, Nystroem beyond (``solver_`` says which was used).
    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
    tol : float, default=1e-6
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes
        ``sum_labeled c_i ||y_i - F(x_i)||^2`` with ``c_i = w_{y_i}``.  ``"balanced"``: ``w_c =
        l / (n_classes l_c)`` over the l labeled samples (unlabeled ones never count); a dict
        ``{label: weight}`` weighs the classes it omits 1 and refuses labels that are not
        classes.  See :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    solver_ : str
        The solver used (what ``solver="auto"`` picked).
    classes_, feature_map_, coef_, dual_coef_, intercept_, solver_info_,
    transduction_, calibrator_
        See :class:`StructuralClassifier`; :meth:`penalty_matrix` gives the sparse
        ``gamma_I / n^2 (I - A)^T (I - A)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import Normalizer
    >>> from structreg import SparseRLSC
    >>> X, y = load_digits(n_class=3, return_X_y=True)
    >>> X, y = X[:150], y[:150]
    >>> y_semi = np.full_like(y, -1)
    >>> for c in range(3):
    ...     y_semi[np.flatnonzero(y == c)[:5]] = c
    >>> model = make_pipeline(Normalizer(), SparseRLSC(l1_mode="lasso")).fit(X, y_semi)
    >>> bool((model[-1].transduction_ == y).mean() > 0.9)
    True
    """

    _path_params = ("gamma_A", "gamma_I")
    _sparse_structure = False  # the l1-graph solves dense reconstruction problems
    _constraint_overrides = {"gamma_I": NONNEGATIVE_OR_AUTO}

    def __init__(
        self,
        gamma_A=1e-2,
        gamma_I="auto",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        l1_mode="exact",
        n_candidates=30,
        alpha=1e-3,
        n_jobs=None,
        graph="l1",
        fit_intercept=False,
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        random_state=None,
        class_weight=None,
    ):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.l1_mode = l1_mode
        self.n_candidates = n_candidates
        self.alpha = alpha
        self.n_jobs = n_jobs
        self.graph = graph
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight

    def _loss(self) -> str:
        return "square"

    def _penalty_terms(self, n_samples, n_labeled):
        auto = isinstance(self.gamma_I, str)  # "auto": the trace-normalised term
        weight = AUTO_RECONSTRUCTION_WEIGHT if auto else self.gamma_I / n_samples**2
        scale = "trace" if auto else None
        if not (isinstance(self.graph, str) and self.graph == "l1"):
            A = _check_coefficients(self.graph, n_samples)
            return [(weight, PrecomputedPenalty(reconstruction_penalty(A, scale), psd=True))]
        penalty = SparseReconstructionPenalty(
            mode=self.l1_mode,
            n_candidates=self.n_candidates,
            alpha=self.alpha,
            n_jobs=self.n_jobs,
            scale=scale,
        )
        return [(weight, penalty)]


def _check_coefficients(A, n_samples: int) -> sp.csr_matrix:
    """Shape and zero diagonal of user-given coefficients (finiteness: reconstruction_penalty)."""
    A = sp.csr_matrix(A, dtype=float)
    if A.shape != (n_samples, n_samples):
        raise ValueError(
            f"graph has shape {A.shape}; reconstruction coefficients must be (n_samples, "
            f"n_samples) = ({n_samples}, {n_samples}) over the training points"
        )
    if np.any(A.diagonal() != 0):
        raise ValueError("graph has a nonzero diagonal: a point cannot reconstruct itself")
    return A
